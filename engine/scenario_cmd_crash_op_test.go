package engine_test

import (
	"strconv"

	"github.com/seedfall/seedfall/engine"
)

// crash-op NODE N [incarnation K] [restart-after DUR]: crashes NODE during its disk op #N
// (of incarnation K, default 1), restarting it DUR later (default never).
func scCrashOp(b *scBuild, st *scStep, f engine.Fault) error {
	const usage = "crash-op NODE N [incarnation K] [restart-after DUR]"
	if len(st.args) != 2 && len(st.args) != 4 && len(st.args) != 6 {
		return b.errorf(st, "want %s", usage)
	}
	f.Kind, f.Node, f.Incarnation = engine.FaultCrash, st.args[0], 1
	n, err := strconv.ParseInt(st.args[1], 10, 64)
	if err != nil || n < 1 {
		return b.errorf(st, "%q is not a disk op number", st.args[1])
	}
	f.DiskOp = n
	for k := 2; k+1 < len(st.args); k += 2 {
		switch st.args[k] {
		case "incarnation":
			v, err := strconv.Atoi(st.args[k+1])
			if err != nil || v < 1 {
				return b.errorf(st, "%q is not an incarnation", st.args[k+1])
			}
			f.Incarnation = v
		case "restart-after":
			d, err := b.dur(st, st.args[k+1])
			if err != nil {
				return err
			}
			f.RestartNS = int64(d)
		default:
			return b.errorf(st, "want %s", usage)
		}
	}
	b.add(f)
	return nil
}
