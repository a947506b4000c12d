package engine_test

import (
	"strconv"

	"github.com/seedfall/seedfall/engine"
)

// fsync_eio NODE [op N]: fails NODE's next fsync now with EIO (or its disk op #N).
func scFsyncEIO(b *scBuild, st *scStep, f engine.Fault) error {
	if len(st.args) != 1 && (len(st.args) != 3 || st.args[1] != "op") {
		return b.errorf(st, "want fsync_eio NODE [op N]")
	}
	f.Node = st.args[0]
	if len(st.args) == 3 {
		n, err := strconv.ParseInt(st.args[2], 10, 64)
		if err != nil || n < 1 {
			return b.errorf(st, "%q is not a disk op number", st.args[2])
		}
		f.DiskOp, f.Incarnation = n, 1
	}
	b.add(f)
	return nil
}
