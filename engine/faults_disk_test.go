package engine_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seedfall/seedfall/engine"
)

// A program that fsyncs a new file and renames it into place without fsyncing the
// directory is fine on a journaling filesystem (default mode) and loses the file under
// strict_dirs; fsyncing the directory after the rename fixes it.
func TestFaultStrictDirsRename(t *testing.T) {
	crash := ftPlan(ftCrash("disk", 300*time.Millisecond, 100*time.Millisecond))
	const seeds = 6
	t.Run("default mode keeps the rename", func(t *testing.T) {
		out := ftOutcomes(t, ftSim(t, ftDiskConfig("", "-mode", "rename")), seeds, crash)
		if n := ftCount(out, "pass"); n != seeds {
			t.Fatalf("want every seed to pass, got %q", out)
		}
	})
	t.Run("strict_dirs loses it", func(t *testing.T) {
		out := ftOutcomes(t, ftSim(t, ftDiskConfig(`"strict_dirs":true`, "-mode", "rename")), seeds, crash)
		if ftCount(out, "LOST /final.db") == 0 {
			t.Fatalf("want some seed to lose /final.db, got %q", out)
		}
		if ftCount(out, "pass")+ftCount(out, "LOST /final.db") != seeds {
			t.Fatalf("unexpected outcomes %q", out)
		}
	})
	t.Run("strict_dirs with a directory fsync keeps it", func(t *testing.T) {
		out := ftOutcomes(t, ftSim(t, ftDiskConfig(`"strict_dirs":true`, "-mode", "rename", "-dirsync")), seeds, crash)
		if n := ftCount(out, "pass"); n != seeds {
			t.Fatalf("want every seed to pass, got %q", out)
		}
	})
}

// The hashicorp/raft snapshot case: the file inside a new directory is fsynced and the
// directory renamed into place with its parent fsynced, but the directory itself was
// never fsynced, so under strict_dirs it can come back empty.
func TestFaultStrictDirsDirectoryRename(t *testing.T) {
	crash := ftPlan(ftCrash("disk", 300*time.Millisecond, 100*time.Millisecond))
	const seeds = 8
	for _, tc := range []struct {
		name, extra string
		dirsync     bool
		wantLoss    bool
	}{
		{"default mode", "", false, false},
		{"strict_dirs", `"strict_dirs":true`, false, true},
		{"strict_dirs with the directory fsynced", `"strict_dirs":true`, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"-mode", "dirrename"}
			if tc.dirsync {
				args = append(args, "-dirsync")
			}
			out := ftOutcomes(t, ftSim(t, ftDiskConfig(tc.extra, args...)), seeds, crash)
			lost := ftCount(out, "LOST /snap/state.bin")
			if tc.wantLoss && lost == 0 || !tc.wantLoss && ftCount(out, "pass") != seeds {
				t.Fatalf("outcomes %q", out)
			}
		})
	}
}

func TestFaultFsyncEIO(t *testing.T) {
	crash := ftCrash("disk", 300*time.Millisecond, 100*time.Millisecond)
	// Disk ops of -mode fsyncgate: #1 create /wal, #2 write, #3 fsync.
	eioAtOp := engine.Fault{Kind: engine.FaultFsyncEIO, Node: "disk", DiskOp: 3, Incarnation: 1}
	for _, tc := range []struct {
		name, onEIO string
		plan        *engine.FaultPlan
		wantLost    bool
	}{
		{"retry trusts the second fsync: data lost", "retry", ftPlan(eioAtOp, crash), true},
		// EIO planned by time is the scenario fsync_eio.txt; -on-eio=rewrite keeping the
		// data is fsync_eio_rewrite.txt.
		{"control: no EIO", "retry", ftPlan(crash), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := ftSim(t, ftDiskConfig("", "-mode", "fsyncgate", "-on-eio", tc.onEIO))
			for seed := uint64(1); seed <= 3; seed++ {
				r := ftRun(t, s, seed, tc.plan)
				lost := r.Verdict == engine.VerdictFail && strings.Contains(r.Failure.Reason, `LOST /wal: content ""`)
				if lost != tc.wantLost || !lost && r.Verdict != engine.VerdictPass {
					t.Fatalf("seed %d: lost=%v, want %v: %s\n%s", seed, lost, tc.wantLost, r, ftDump(r))
				}
				injected := slices.IndexFunc(r.Faults, func(f engine.Fault) bool { return f.Kind == engine.FaultFsyncEIO }) >= 0
				if injected != (len(tc.plan.Faults) == 2) {
					t.Fatalf("seed %d: applied faults %v", seed, r.Faults)
				}
				if injected {
					ftMust(t, r, "disk#1", `^disk #3 fsync /wal: EIO \(injected\)`)
					ftMust(t, r, "disk#1", `^\| fsync: sync /wal: I/O error$`)
					ftMust(t, r, "disk#1", `^\| second fsync ok$`)
				}
			}
		})
	}
}

// Writes with O_SYNC or O_DSYNC, or followed by fd_datasync, survive a crash without an
// fsync; plain writes may not.
func TestFaultSyncWrites(t *testing.T) {
	crash := ftPlan(ftCrash("disk", 300*time.Millisecond, 100*time.Millisecond))
	const seeds = 8
	for _, how := range []string{"osync", "dsync", "fdatasync", "none"} {
		t.Run(how, func(t *testing.T) {
			out := ftOutcomes(t, ftSim(t, ftDiskConfig("", "-mode", "sync", "-flag", how)), seeds, crash)
			if how != "none" {
				if ftCount(out, "pass") != seeds {
					t.Fatalf("want every seed to keep the data, got %q", out)
				}
				return
			}
			if ftCount(out, "LOST /data") == 0 || ftCount(out, "pass") == 0 {
				t.Fatalf("want plain writes to be lost on some seeds and kept on others, got %q", out)
			}
		})
	}
}

func TestFaultSizeOutlivesData(t *testing.T) {
	crash := ftPlan(ftCrash("disk", 300*time.Millisecond, 100*time.Millisecond))
	const seeds = 8
	report := func(t *testing.T, s *engine.Sim) []string {
		var out []string
		for seed := uint64(1); seed <= seeds; seed++ {
			r := ftRun(t, s, seed, crash)
			lines := ftOutput(t, r, "disk#2")
			if r.Verdict != engine.VerdictPass || len(lines) != 1 {
				t.Fatalf("seed %d: %s\n%s", seed, r, ftDump(r))
			}
			out = append(out, lines[0].text)
		}
		return out
	}
	t.Run("truncate synced, head written without sync", func(t *testing.T) {
		out := report(t, ftSim(t, ftDiskConfig("", "-mode", "zeros")))
		if ftCount(out, "size 4096 ") != seeds {
			t.Fatalf("the synced size must survive every crash: %q", out)
		}
		if ftCount(out, "head zeros") == 0 || ftCount(out, "head data") == 0 {
			t.Fatalf("want the unsynced head lost (zeros) on some seeds and kept on others: %q", out)
		}
	})
	t.Run("fd_allocate then fsync", func(t *testing.T) {
		out := report(t, ftSim(t, ftDiskConfig("", "-mode", "allocate", "-sync")))
		if ftCount(out, "size 8192") != seeds {
			t.Fatalf("want the allocation to survive: %q", out)
		}
	})
	t.Run("fd_allocate without fsync", func(t *testing.T) {
		out := report(t, ftSim(t, ftDiskConfig("", "-mode", "allocate")))
		if ftCount(out, "size 0") == 0 || ftCount(out, "size 8192") == 0 {
			t.Fatalf("want an unsynced allocation lost on some seeds and kept on others: %q", out)
		}
	})
}

// Disk ops of -mode log: #1 create /log, then for record k (from 0) #2k+2 write and
// #2k+3 fsync, one record every 10ms from t=100ms.
func ftLogConfig(extra string) string { return ftDiskConfig(extra, "-mode", "log") }

func TestFaultCrashIdle(t *testing.T) {
	s := ftSim(t, ftLogConfig(""))
	r := ftRun(t, s, 1, ftPlan(ftCrash("disk", 125*time.Millisecond, 200*time.Millisecond)))
	if r.Verdict != engine.VerdictPass {
		t.Fatalf("%s\n%s", r, ftDump(r))
	}
	c := ftMust(t, r, "fault", `^crash disk#1 \(idle\)$`)
	st := ftMust(t, r, "disk#2", `^start$`)
	if c.at != 125*time.Millisecond || st.at != 325*time.Millisecond {
		t.Fatalf("crash at %s, restart at %s; want 125ms and 325ms", c.at, st.at)
	}
	// Records 0, 1 and 2 were written and fsynced at 100, 110 and 120ms.
	ftMust(t, r, "disk#2", `^\| recovered 3 records, tail 0 bytes$`)
	if len(r.Faults) != 1 || r.Faults[0].Kind != engine.FaultCrash || r.Faults[0].DiskOp != 0 {
		t.Fatalf("applied faults %+v", r.Faults)
	}

	t.Run("no restart", func(t *testing.T) {
		r := ftRun(t, s, 1, ftPlan(ftCrash("disk", 125*time.Millisecond, 0)))
		if _, ok := ftFind(t, r, "disk#2", `^start$`); ok || r.Verdict != engine.VerdictPass {
			t.Fatalf("a crash without restart delay must leave the node down:\n%s", ftDump(r))
		}
	})
}

func TestFaultCrashDuringDiskOp(t *testing.T) {
	s := ftSim(t, ftLogConfig(""))
	plan := ftPlan(engine.Fault{Kind: engine.FaultCrash, Node: "disk", DiskOp: 12, Incarnation: 1, RestartNS: int64(300 * time.Millisecond)})
	// The plan's run (op #12 is the write of record 5; the next life recovers 5 records)
	// is the scenario testdata/scenarios/disk_crash_during_op.txt.

	t.Run("armed by time (mid_op)", func(t *testing.T) {
		// Armed at 125ms: the next disk op is the write of record 3 (#8) at 130ms.
		f := ftCrash("disk", 125*time.Millisecond, 100*time.Millisecond)
		f.MidOp = true
		r := ftRun(t, s, 1, ftPlan(f))
		ftMust(t, r, "fault", `^crash disk#1 during disk op #8 write /log @27\+9`)
		ftMust(t, r, "disk#2", `^\| recovered 3 records, tail 0 bytes$`)
		if len(r.Faults) != 1 || r.Faults[0].DiskOp != 8 || r.Faults[0].ArmedNS != int64(125*time.Millisecond) {
			t.Fatalf("applied faults %+v", r.Faults)
		}
	})

	t.Run("torn writes", func(t *testing.T) {
		// With torn_writes a crash during a write keeps a torn prefix on some seeds;
		// without, never.
		for _, torn := range []bool{false, true} {
			s := ftSim(t, ftLogConfig(fmt.Sprintf(`"faults":{"torn_writes":%v,"tear_unit":1}`, torn)))
			tornSeeds := 0
			for seed := uint64(1); seed <= 10; seed++ {
				r := ftRun(t, s, seed, plan)
				l := ftMust(t, r, "disk#2", `^\| recovered \d+ records, tail \d+ bytes$`)
				if !strings.HasSuffix(l.text, "tail 0 bytes") {
					tornSeeds++
					if !strings.HasPrefix(l.text, "recovered 5 records") {
						t.Fatalf("seed %d: %s", seed, l.text)
					}
				}
			}
			if torn != (tornSeeds > 0) {
				t.Fatalf("torn_writes=%v: %d of 10 seeds left a torn tail", torn, tornSeeds)
			}
		}
	})
}

// TestFaultCrashSeveralNodes is the scenario testdata/scenarios/disk_crash_at_op.txt.

// TestFaultTearUnit: a crash during a write, and the crash-time tearing of a pending
// write, cut it only at file offsets that are multiples of faults.tear_unit (512 by
// default: sectors are written whole); tear_unit 1 tears at any byte. The guest syncs
// 100 bytes, then writes 1500 bytes at offset 100 (crossing 512, 1024 and 1536).
func TestFaultTearUnit(t *testing.T) {
	sizes := func(t *testing.T, extra string, midOp bool) map[int]int {
		s := ftSim(t, ftDiskConfig(extra, "-mode", "sectors"))
		// Find the 1500-byte write's op number in a run without faults.
		r := ftRun(t, s, 1, ftPlan())
		w := ftMust(t, r, "disk#1", `^disk #\d+ write /sectors @100\+1500`)
		op, _ := strconv.Atoi(strings.TrimPrefix(strings.Fields(w.raw)[1], "#"))
		got := map[int]int{}
		for seed := uint64(1); seed <= 40; seed++ {
			f := ftCrash("disk", 300*time.Millisecond, 100*time.Millisecond)
			if midOp {
				f = engine.Fault{Kind: engine.FaultCrash, Node: "disk", DiskOp: int64(op), Incarnation: 1, RestartNS: int64(100 * time.Millisecond)}
			}
			r := ftRun(t, s, seed, ftPlan(f))
			l := ftMust(t, r, "disk#2", `^\| size \d+$`)
			n, _ := strconv.Atoi(strings.TrimPrefix(l.text, "size "))
			got[n]++
		}
		return got
	}
	for _, midOp := range []bool{false, true} {
		t.Run(fmt.Sprintf("mid-op %v", midOp), func(t *testing.T) {
			got := sizes(t, `"faults":{"torn_writes":true}`, midOp)
			for n := range got {
				if n != 100 && n != 1600 && n%512 != 0 {
					t.Errorf("tear_unit 512: file cut at %d bytes, not on a sector boundary (%v)", n, got)
				}
			}
			if got[512]+got[1024]+got[1536] == 0 {
				t.Errorf("tear_unit 512: no seed tore the write at a sector boundary: %v", got)
			}
			bytewise := sizes(t, `"faults":{"torn_writes":true,"tear_unit":1}`, midOp)
			odd := 0
			for n, k := range bytewise {
				if n != 100 && n != 1600 && n%512 != 0 {
					odd += k
				}
			}
			if odd == 0 {
				t.Errorf("tear_unit 1: no seed tore the write off a sector boundary: %v", bytewise)
			}
		})
	}
}

// TestFaultRenamedPaths: after a rename of a file, or of a directory above it, the
// trace, fault lines and sync sites name the file by its current path.
func TestFaultRenamedPaths(t *testing.T) {
	s := ftSim(t, ftDiskConfig("", "-mode", "renamed"))
	r := ftRun(t, s, 1, ftPlan())
	ftMust(t, r, "disk#1", `^disk #\d+ write /data/wal @4\+17`)
	ftMust(t, r, "disk#1", `^disk #\d+ fsync /data/wal( at \S+)?$`)
	ftMust(t, r, "disk#1", `^disk #\d+ write /store/wal @21\+16`)
	ftMust(t, r, "disk#1", `^disk #\d+ fsync /store/wal( at \S+)?$`)
	ftMust(t, r, "disk#1", `^disk #\d+ fsync /store( at \S+)?$`)
	last := ftMust(t, r, "disk#1", `^disk #\d+ write /store/wal @37\+4`)
	if _, ok := ftFind(t, r, "disk#1", `(write /data/wal\.tmp @4|fsync /data/wal\.tmp)`); ok {
		t.Fatalf("a write after the rename is traced under the old name:\n%s", ftDump(r))
	}
	op, _ := strconv.Atoi(strings.TrimPrefix(strings.Fields(last.raw)[1], "#"))
	r = ftRun(t, s, 1, ftPlan(engine.Fault{Kind: engine.FaultCrash, Node: "disk", DiskOp: int64(op), Incarnation: 1}))
	ftMust(t, r, "fault", fmt.Sprintf(`^crash disk#1 during disk op #%d write /store/wal @37\+4`, op))
	if len(r.Faults) != 1 || !strings.HasPrefix(r.Faults[0].Where, "write /store/wal @37+4") {
		t.Fatalf("applied faults %+v", r.Faults)
	}
}

// TestDiskLimits: disk_limit_mib and file_limit_mib bound a node's disk and its files;
// a guest that reaches one gets ENOSPC or EFBIG, and the trace names the limit.
func TestDiskLimits(t *testing.T) {
	for _, tc := range []struct {
		extra, errno, trace string
		bytes               string
	}{
		// Unsynced data counts twice (page cache and disk): the 1 MiB disk is full
		// before the file reaches 1 MiB.
		{`"disk_limit_mib":1`, "no space left on device", `: ENOSPC \(disk full: disk_limit_mib is 1, \d+ bytes in use\)$`, `\d+`},
		{`"file_limit_mib":2`, "file too large", `: EFBIG \(file too large: file_limit_mib is 2\)$`, "2097152"},
	} {
		t.Run(tc.extra, func(t *testing.T) {
			s := ftSim(t, ftDiskConfig(tc.extra, "-mode", "fill"))
			r := ftRun(t, s, 1, ftPlan())
			ftMust(t, r, "disk#1", fmt.Sprintf(`^\| write failed after %s bytes: write /fill: (?i:%s)$`, tc.bytes, tc.errno))
			ftMust(t, r, "disk#1", `^disk #\d+ write /fill @\d+\+65536 at \S+`+tc.trace)
		})
	}
}

// A kill is a process death on a live machine: writes still in the page cache survive
// without an fsync, on every seed. The negative control is a crash (power loss) at the
// same moment, which loses them on some seeds.
func TestFaultKillKeepsPageCache(t *testing.T) {
	const seeds = 8
	s := ftSim(t, ftDiskConfig("", "-mode", "sync", "-flag", "none"))
	// A kill at 300ms keeps the unsynced write: the scenario kill_keeps_page_cache.txt.
	crash := ftPlan(ftCrash("disk", 300*time.Millisecond, 100*time.Millisecond))
	if out := ftOutcomes(t, s, seeds, crash); ftCount(out, "LOST /data") == 0 {
		t.Fatalf("crash: want the unsynced write lost on some seeds, got %q", out)
	}
}
