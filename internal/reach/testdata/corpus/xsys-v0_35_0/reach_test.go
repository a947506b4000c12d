// Reach corpus entry (examples/reach): golang.org/x/sys@v0.35.0 as a user has it, unmodified,
// imported only from this test file. A node opens it, writes with sync, is crashed with
// torn writes, reopens and reads back (kvsim's workload checks every acknowledged write).
package reach

import (
	"testing"

	"encoding/binary"
	"hash/crc32"

	"github.com/seedfall/seedfall/examples/kvcheck/kvsim"
	"github.com/seedfall/seedfall/simtest"
	"golang.org/x/sys/unix"
)

func TestReach(t *testing.T) {
	simtest.Run(t, simtest.Faults{CrashPerSec: 1, TornWrites: true},
		simtest.Node("db", func(n *simtest.N) {
			path := n.Dir("log") + "/kv.log"
			fd, err := unix.Open(path, unix.O_RDWR|unix.O_CREAT, 0o644)
			if err != nil {
				n.Fatalf("open: %v", err)
			}
			if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
				n.Fatalf("flock: %v", err)
			}
			var st unix.Stat_t
			if err := unix.Fstat(fd, &st); err != nil {
				n.Fatalf("fstat: %v", err)
			}
			kv := map[string]string{}
			end := int64(0)
			if st.Size > 0 {
				data, err := unix.Mmap(fd, 0, int(st.Size), unix.PROT_READ, unix.MAP_SHARED)
				if err != nil {
					n.Fatalf("mmap: %v", err)
				}
				end = replay(data, kv)
				if err := unix.Munmap(data); err != nil {
					n.Fatalf("munmap: %v", err)
				}
			}
			n.Handle("put", func(k, v string) error {
				rec := record(k, v)
				if _, err := unix.Pwrite(fd, rec, end); err != nil {
					return err
				}
				if err := unix.Fdatasync(fd); err != nil {
					return err
				}
				end += int64(len(rec))
				kv[k] = v
				return nil
			})
			n.Handle("get", func(k string) (string, bool, error) { v, ok := kv[k]; return v, ok, nil })
		}),
		simtest.Workload(func(t *simtest.T) { kvsim.Check(t, "db") }))
}

// record is one entry of the log: lengths, key, value and a checksum of them.
func record(k, v string) []byte {
	b := binary.LittleEndian.AppendUint32(nil, uint32(len(k)))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(v)))
	b = append(append(b, k...), v...)
	return binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
}

// replay reads the log's whole records into kv and returns where the next one goes.
func replay(data []byte, kv map[string]string) int64 {
	off := 0
	for off+12 <= len(data) {
		kl, vl := int(binary.LittleEndian.Uint32(data[off:])), int(binary.LittleEndian.Uint32(data[off+4:]))
		n := 8 + kl + vl
		if kl > len(data) || vl > len(data) || off+n+4 > len(data) {
			break
		}
		if crc32.ChecksumIEEE(data[off:off+n]) != binary.LittleEndian.Uint32(data[off+n:]) {
			break
		}
		kv[string(data[off+8:off+8+kl])] = string(data[off+8+kl : off+n])
		off += n + 4
	}
	return int64(off)
}
