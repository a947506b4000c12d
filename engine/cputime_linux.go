package engine

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"time"
)

// clockTicks is Linux's USER_HZ, the unit of /proc/PID/stat's times (100 on every
// architecture Go supports).
const clockTicks = 100

// childCPU is the CPU time process pid has used so far (user and system, every thread),
// read from /proc/PID/stat, and true; or false where it cannot be read.
func childCPU(pid int) (time.Duration, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	// The command name, field 2, is in parentheses and may hold spaces: the fields
	// after the last ')' start with field 3 (state); utime and stime are fields 14, 15.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 13 {
		return 0, false
	}
	u, err1 := strconv.ParseInt(string(f[11]), 10, 64)
	s, err2 := strconv.ParseInt(string(f[12]), 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(u+s) * time.Second / clockTicks, true
}
