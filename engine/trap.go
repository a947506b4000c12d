package engine

import (
	"strings"

	"github.com/seedfall/seedfall/engine/internal/goloc"
)

// A wasm trap stops a guest without Go's runtime printing anything: wazero returns
//
//	wasm error: out of bounds memory access
//	wasm stack trace:
//		.go.etcd.io_bbolt.__Cursor_.last(i32) i32
//		.github.com_hashicorp_raft_boltdb_v2.__BoltStore_.LastIndex(i32) i32
//		…
//
// The names are the module's name section's (the linker's rewrite of Go's names, after
// the module's empty name and a dot). Go's own checks turn a nil dereference, a bad
// index or a division by zero into panics, so a trap in a Go guest is a load or store
// outside the guest's memory through unsafe code (a pointer into a file mapping taken
// from a corrupted page, say), or the runtime's abort.
const trapPrefix = "wasm error: "

// trapNotes says what a trap is on a native run of the same program.
var trapNotes = map[string]string{
	"out of bounds memory access": "a load or store past the guest's memory, through unsafe code; natively a segmentation fault (SIGSEGV)",
}

// trapReason is the failure reason of an incarnation stopped by a wasm trap: "wasm trap:
// out of bounds memory access (in go.etcd.io/bbolt.(*Cursor).last: …)", with the first
// frame of the program's own code (not the standard library's nor sim's) in Go's
// spelling where the symbol table has it. It returns "" for an error that is not a trap.
// The whole wasm stack stays in the trace's exit line.
func trapReason(msg string, loc *goloc.Table) string {
	first, rest, _ := strings.Cut(msg, "\n")
	if !strings.HasPrefix(first, trapPrefix) {
		return ""
	}
	what := strings.TrimSpace(strings.TrimPrefix(first, trapPrefix))
	frame := ""
	for _, l := range strings.Split(rest, "\n") {
		if !strings.HasPrefix(l, "\t") {
			continue
		}
		name := strings.TrimPrefix(strings.TrimSpace(l), ".")
		if i := strings.IndexByte(name, '('); i >= 0 {
			name = name[:i] // the wasm signature: "(i32) i32"
		}
		if loc != nil {
			fn := loc.FuncOfWasmName(name)
			if fn == "" || runtimeFrame(fn) {
				continue // not a Go function (wasm_pc_f_loop, _rt0_wasm_wasip1), or std's
			}
			name = fn
		} else if name == "" || name == "wasm_pc_f_loop" || name == "_rt0_wasm_wasip1" || strings.HasPrefix(name, "runtime.") {
			// Without the symbol table the names are the linker's rewrite, in which a
			// path's slashes are underscores: only the runtime is told apart.
			continue
		}
		frame = name
		break
	}
	out := "wasm trap: " + what
	var notes []string
	if frame != "" {
		notes = append(notes, "in "+frame)
	}
	if n := trapNotes[what]; n != "" {
		notes = append(notes, n)
	}
	if len(notes) > 0 {
		out += " (" + strings.Join(notes, ": ") + ")"
	}
	return out
}

// trapReason is the reason of an incarnation that a wasm trap stopped, or "".
func (inc *incarnation) trapReason() string {
	if inc.errMsg == "" {
		return ""
	}
	return trapReason(inc.errMsg, inc.node.loc)
}
