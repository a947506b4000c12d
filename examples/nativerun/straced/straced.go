// Package straced runs the calling program again as a child process traced by strace.
// The native reproductions of examples/* use it to kill a real process at a chosen
// syscall (strace's fault injection sends the SIGKILL before the kernel runs the call)
// or to record the syscalls the child made.
//
//	if args, ok := straced.Child(); ok {
//		// the child's work, on args
//	}
//	out, err := straced.Run(straced.KillAt("unlink,unlinkat", 1), dir)
package straced

import (
	"fmt"
	"os"
	"os/exec"
)

const childArg = "child"

// Child reports whether this process is a child that Run started, with the arguments
// Run was given.
func Child() ([]string, bool) {
	if len(os.Args) >= 2 && os.Args[1] == childArg {
		return os.Args[2:], true
	}
	return nil, false
}

// Run runs this executable as a child with args, under `strace -f -qq` and opts, and
// returns the child's combined output and its exit: an *exec.ExitError that says
// "signal: killed" when an injected SIGKILL ended it.
func Run(opts []string, args ...string) (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	argv := append([]string{"-f", "-qq"}, opts...)
	argv = append(argv, self, childArg)
	argv = append(argv, args...)
	out, err := exec.Command("strace", argv...).CombinedOutput()
	return string(out), err
}

// KillAt is the strace options that kill the child at the when-th call (counted per
// thread) of syscalls, a comma-separated list, and discard strace's own output.
func KillAt(syscalls string, when int) []string {
	return []string{"-o", os.DevNull, "-e", "trace=" + syscalls,
		"-e", fmt.Sprintf("inject=%s:signal=KILL:when=%d", syscalls, when)}
}
