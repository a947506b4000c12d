// Reach corpus entry (examples/reach): github.com/dgraph-io/ristretto@v0.1.1 as a user has it, unmodified,
// imported only from this test file. A node opens it, writes with sync, is crashed with
// torn writes, reopens and reads back (kvsim's workload checks every acknowledged write).
package reach

import (
	"testing"

	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"

	"github.com/dgraph-io/ristretto/z"
	"github.com/seedfall/seedfall/examples/kvcheck/kvsim"
	"github.com/seedfall/seedfall/simtest"
)

func TestReach(t *testing.T) {
	simtest.Run(t, simtest.Faults{CrashPerSec: 1, TornWrites: true},
		simtest.Node("db", func(n *simtest.N) {
			// A log in a memory-mapped file of ristretto's z package (badger's memtables and
			// value log use it): each put is appended and synced with msync.
			mf, err := z.OpenMmapFile(n.Dir("z")+"/kv.mmap", os.O_RDWR|os.O_CREATE, 1<<20)
			if err != nil && err != z.NewFile {
				n.Fatalf("mmap: %v", err)
			}
			kv := map[string]string{}
			end := replay(mf.Data, kv)
			n.Handle("put", func(k, v string) error {
				rec := record(k, v)
				if int(end)+len(rec) > len(mf.Data) {
					return fmt.Errorf("log full")
				}
				copy(mf.Data[end:], rec)
				if err := mf.Sync(); err != nil {
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
