package main

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReplayProfile: replay -profile writes a profile whose samples have the nodes'
// and the host calls' frames, and prints the same trace as a replay without it. (That
// go tool pprof reads the format is engine's TestProfilePprofReadable.)
func TestReplayProfile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "out.pb.gz")
	code1, out1, _ := runCLI(t, "replay", "-c", kvlogBuggy, "-seed", "3", "-profile", path)
	code2, out2, _ := runCLI(t, "replay", "-c", kvlogBuggy, "-seed", "3")
	if code1 != code2 || out1 != out2 {
		t.Fatalf("replay with -profile (exit %d) and without (exit %d) differ:\n%s\n----\n%s", code1, code2, out1, out2)
	}
	// The samples themselves, not a pprof report: -top drops nodes under its cutoff, and
	// how much time a frame gets depends on the host's speed. How many samples each frame
	// is in does not (one per host call).
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	counts, err := profileFrameCounts(data)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	for _, want := range []string{"[node] server", "[node] client", "[host] fd_write"} {
		if counts[want] == 0 {
			t.Errorf("no sample has a %q frame; frames: %v", want, counts)
		}
	}
	// Negative control: a frame that no run has.
	if counts["[host] no_such_call"] != 0 {
		t.Errorf("a made-up frame has samples: %v", counts)
	}

	code, _, stderr := runCLI(t, "replay", "-c", kvlogBuggy, "-seed", "3", "-q", "-profile", filepath.Join(t.TempDir(), "no", "such", "dir", "p.pb.gz"))
	if code != exitUsage || !strings.Contains(stderr, "-profile") || !strings.Contains(stderr, "p.pb.gz") {
		t.Errorf("unwritable -profile: exit %d, stderr %q", code, stderr)
	}
}

// profileFrameCounts decodes a gzipped pprof profile (profile.proto) and returns, per
// function name, the number of samples with that function in their stack.
func profileFrameCounts(gz []byte) (map[string]int, error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, err
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return nil, err
	}
	var (
		strs    []string
		funcs   = map[uint64]uint64{}   // function id -> name index
		locs    = map[uint64][]uint64{} // location id -> function ids
		samples [][]uint64              // location ids per sample
	)
	err = protoFields(raw, func(field int, v uint64, b []byte) error {
		switch field {
		case 2: // sample
			var ids []uint64
			err := protoFields(b, func(f int, v uint64, b []byte) error {
				if f == 1 {
					if b == nil {
						ids = append(ids, v)
					} else {
						for len(b) > 0 {
							x, n := binary.Uvarint(b)
							if n <= 0 {
								return errors.New("bad packed location ids")
							}
							ids, b = append(ids, x), b[n:]
						}
					}
				}
				return nil
			})
			samples = append(samples, ids)
			return err
		case 4: // location
			var id uint64
			var fns []uint64
			err := protoFields(b, func(f int, v uint64, b []byte) error {
				switch f {
				case 1:
					id = v
				case 4: // line
					return protoFields(b, func(f int, v uint64, _ []byte) error {
						if f == 1 {
							fns = append(fns, v)
						}
						return nil
					})
				}
				return nil
			})
			locs[id] = fns
			return err
		case 5: // function
			var id, name uint64
			err := protoFields(b, func(f int, v uint64, _ []byte) error {
				switch f {
				case 1:
					id = v
				case 2:
					name = v
				}
				return nil
			})
			funcs[id] = name
			return err
		case 6: // string_table
			strs = append(strs, string(b))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	counts := map[string]int{}
	for _, ids := range samples {
		seen := map[string]bool{}
		for _, l := range ids {
			for _, fn := range locs[l] {
				if i := funcs[fn]; i < uint64(len(strs)) && !seen[strs[i]] {
					seen[strs[i]] = true
					counts[strs[i]]++
				}
			}
		}
	}
	return counts, nil
}

// protoFields calls fn for each field of a protobuf message: varints with v, lengths
// with b (non-nil); fixed-width fields are skipped.
func protoFields(m []byte, fn func(field int, v uint64, b []byte) error) error {
	for len(m) > 0 {
		key, n := binary.Uvarint(m)
		if n <= 0 {
			return errors.New("bad field key")
		}
		m = m[n:]
		field, wire := int(key>>3), key&7
		switch wire {
		case 0:
			v, n := binary.Uvarint(m)
			if n <= 0 {
				return errors.New("bad varint")
			}
			m = m[n:]
			if err := fn(field, v, nil); err != nil {
				return err
			}
		case 2:
			l, n := binary.Uvarint(m)
			if n <= 0 || uint64(len(m)-n) < l {
				return errors.New("bad length")
			}
			b := m[n : n+int(l)]
			m = m[n+int(l):]
			if b == nil {
				b = []byte{}
			}
			if err := fn(field, 0, b); err != nil {
				return err
			}
		case 1:
			if len(m) < 8 {
				return errors.New("short fixed64")
			}
			m = m[8:]
		case 5:
			if len(m) < 4 {
				return errors.New("short fixed32")
			}
			m = m[4:]
		default:
			return fmt.Errorf("wire type %d", wire)
		}
	}
	return nil
}
