package wasi

import (
	"testing"

	"github.com/seedfall/seedfall/engine/internal/disk"
	"github.com/seedfall/seedfall/engine/internal/netsim"
)

// The disk and the network return errnos in WASI's numbering, which the host passes to
// the guest unchanged: their constants must be the host's.
func TestErrnoNumbering(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want uint32
	}{
		{"netsim.EADDRINUSE", uint32(netsim.EADDRINUSE), errnoAddrInUse},
		{"netsim.EAGAIN", uint32(netsim.EAGAIN), errnoAgain},
		{"netsim.ECONNREFUSED", uint32(netsim.ECONNREFUSED), errnoConnRefused},
		{"netsim.ECONNRESET", uint32(netsim.ECONNRESET), errnoConnReset},
		{"netsim.EHOSTUNREACH", uint32(netsim.EHOSTUNREACH), errnoHostUnreach},
		{"netsim.EINVAL", uint32(netsim.EINVAL), errnoInval},
		{"netsim.EPIPE", uint32(netsim.EPIPE), errnoPipe},
		{"disk.EBADF", uint32(disk.EBADF), errnoBadf},
		{"disk.EEXIST", uint32(disk.EEXIST), errnoExist},
		{"disk.EINVAL", uint32(disk.EINVAL), errnoInval},
		{"disk.EIO", uint32(disk.EIO), errnoIO},
		{"disk.EISDIR", uint32(disk.EISDIR), errnoIsDir},
		{"disk.ENOENT", uint32(disk.ENOENT), errnoNoent},
		{"disk.ENOTDIR", uint32(disk.ENOTDIR), errnoNotDir},
		{"disk.EPERM", uint32(disk.EPERM), errnoPerm},
	} {
		if c.got != c.want {
			t.Errorf("%s = %d, want WASI's %d", c.name, c.got, c.want)
		}
	}
	if errnoOf(disk.ENOSPC) != 51 || errnoOf(nil) != errnoSuccess {
		t.Errorf("errnoOf(ENOSPC) = %d, errnoOf(nil) = %d", errnoOf(disk.ENOSPC), errnoOf(nil))
	}
}
