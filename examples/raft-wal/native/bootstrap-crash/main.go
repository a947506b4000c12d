// Command bootstrap-crash reproduces the raft-wal example's finding in hashicorp/raft
// natively, on the host, without seedfall: a server killed inside its first
// BootstrapCluster, between the write of CurrentTerm 1 (api.go:262) and the write of the
// configuration entry (api.go:278), restarts with a term and no configuration; every
// later BootstrapCluster returns ErrCantBootstrap (HasExistingState, api.go:462-494) and
// the lone server never elects a leader.
//
// Each server start is a child process: raft-wal v0.4.2 on a data directory as the log
// and stable store (16 KiB segments and raft's timeouts as ../../node), raft.NewRaft, then
// (*Raft).BootstrapCluster with a one-server configuration, ignoring ErrCantBootstrap as
// ../../node and Consul do. Every durable write raft makes through the stores is
// numbered, and with -kill K the child kills itself (SIGKILL) at the start of write #K:
// writes 1..K-1 are on disk (raft-wal fsyncs before each call returns), nothing after
// them is. The driver runs the first start once without a kill and once killed at each
// write 1..-max, each in a new directory, then starts the server again over the same
// directory (no kill), bootstraps again and waits -wait for a leader.
//
//	go run ./native/bootstrap-crash                  # raft v1.7.2 as released: 1 of 6 crash points elect no leader
//	go run github.com/seedfall/seedfall/examples/nativerun \
//	    -patch patches/fix-bootstrap-order.patch ./native/bootstrap-crash    # 0 of 6
//
// It exits 0 once every start ran, whatever the count; 1 if a start failed.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	wal "github.com/hashicorp/raft-wal"
)

func main() {
	dir := flag.String("child", "", "internal: run one server start on this data directory")
	kill := flag.Int("kill", 0, "internal: with -child, SIGKILL at the start of durable write #N (0: never)")
	wait := flag.Duration("wait", 5*time.Second, "how long a restart waits for a leader")
	max := flag.Int("max", 6, "crash points: the first start killed at each durable write 1..max")
	flag.Parse()
	var err error
	if *dir != "" {
		err = start(*dir, *kill, *wait)
	} else {
		err = drive(*max, *wait)
	}
	if err != nil {
		fmt.Println("ERROR", err)
		os.Exit(1)
	}
}

// stores is raft-wal's WAL (raft's log and stable store) numbering each durable write
// and killing the process at write #killAt, before the write.
type stores struct {
	*wal.WAL
	mu     sync.Mutex
	n      int
	killAt int
}

func (s *stores) write(what string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	if s.n == s.killAt {
		fmt.Printf("TRACE write #%d %s: SIGKILL before it\n", s.n, what)
		p, _ := os.FindProcess(os.Getpid())
		p.Kill()
		select {}
	}
	fmt.Printf("TRACE write #%d %s\n", s.n, what)
}

func (s *stores) SetUint64(key []byte, v uint64) error {
	s.write(fmt.Sprintf("stable.SetUint64(%s, %d)", key, v))
	return s.WAL.SetUint64(key, v)
}

func (s *stores) Set(key, v []byte) error {
	s.write(fmt.Sprintf("stable.Set(%s, %q)", key, v))
	return s.WAL.Set(key, v)
}

func (s *stores) StoreLog(l *raft.Log) error { return s.StoreLogs([]*raft.Log{l}) }

func (s *stores) StoreLogs(ls []*raft.Log) error {
	var d []string
	for _, l := range ls {
		d = append(d, fmt.Sprintf("{index %d term %d %s}", l.Index, l.Term, l.Type))
	}
	s.write("logs.StoreLogs(" + strings.Join(d, " ") + ")")
	return s.WAL.StoreLogs(ls)
}

func (s *stores) DeleteRange(min, max uint64) error {
	s.write(fmt.Sprintf("logs.DeleteRange(%d, %d)", min, max))
	return s.WAL.DeleteRange(min, max)
}

// start is one start of the server. It prints "TRACE ..." lines and, unless it is
// killed, a last "RESULT ..." line.
func start(dir string, killAt int, wait time.Duration) error {
	logger := hclog.New(&hclog.LoggerOptions{Name: "raft", Level: hclog.Info, DisableTime: true, Output: &lines{f: func(l string) {
		for _, w := range []string{"initial configuration", "no known peers", "entering candidate state", "election won", "failed"} {
			if strings.Contains(l, w) {
				fmt.Println("TRACE log: " + l)
				return
			}
		}
	}}})
	if err := os.MkdirAll(filepath.Join(dir, "wal"), 0o755); err != nil {
		return err
	}
	w, err := wal.Open(filepath.Join(dir, "wal"), wal.WithSegmentSize(16<<10))
	if err != nil {
		return err
	}
	term, terr := w.GetUint64([]byte("CurrentTerm"))
	last, err := w.LastIndex()
	if err != nil {
		return err
	}
	if terr != nil {
		fmt.Printf("TRACE on disk at start: CurrentTerm %v, LastIndex %d\n", terr, last)
	} else {
		fmt.Printf("TRACE on disk at start: CurrentTerm %d, LastIndex %d\n", term, last)
	}
	st := &stores{WAL: w, killAt: killAt}
	snaps, err := raft.NewFileSnapshotStoreWithLogger(dir, 2, logger)
	if err != nil {
		return err
	}
	conf := raft.DefaultConfig()
	conf.LocalID = "n1"
	conf.Logger = logger
	// ../../node's timeouts: an election within a second.
	conf.HeartbeatTimeout = 300 * time.Millisecond
	conf.ElectionTimeout = 300 * time.Millisecond
	conf.LeaderLeaseTimeout = 200 * time.Millisecond
	_, trans := raft.NewInmemTransport("n1")
	r, err := raft.NewRaft(conf, fsm{}, st, st, snaps, trans)
	if err != nil {
		return err
	}
	berr := r.BootstrapCluster(raft.Configuration{Servers: []raft.Server{{ID: "n1", Address: trans.LocalAddr()}}}).Error()
	fmt.Printf("TRACE BootstrapCluster: %v\n", berr)
	if berr != nil && !errors.Is(berr, raft.ErrCantBootstrap) {
		return fmt.Errorf("bootstrap: %w", berr)
	}
	for deadline := time.Now().Add(wait); time.Now().Before(deadline) && r.State() != raft.Leader; {
		time.Sleep(20 * time.Millisecond)
	}
	stats := r.Stats()
	fmt.Printf("RESULT bootstrap=%q state=%s term=%s last_log_index=%s latest_configuration=%s\n",
		fmt.Sprint(berr), r.State(), stats["term"], stats["last_log_index"], stats["latest_configuration"])
	return nil
}

// drive runs the first start without a kill and killed at each write 1..max, each
// followed by a restart, and prints what each restart did.
func drive(max int, wait time.Duration) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	base, err := os.MkdirTemp("", "bootstrap-crash-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(base)
	child := func(dir string, kill int) (string, error) {
		out, err := exec.Command(exe, "-child", dir, "-kill", fmt.Sprint(kill), "-wait", wait.String()).CombinedOutput()
		return string(out), err
	}
	points, stuck := 0, 0
	for k := 0; k <= max; k++ {
		dir := filepath.Join(base, fmt.Sprint(k))
		first, err := child(dir, k)
		killed := ""
		for _, l := range strings.Split(first, "\n") {
			if strings.HasSuffix(l, "SIGKILL before it") {
				killed = strings.TrimPrefix(l, "TRACE ")
			}
		}
		switch {
		case k == 0 && err != nil:
			return fmt.Errorf("first start: %v\n%s", err, first)
		case k > 0 && killed == "":
			return fmt.Errorf("first start: no write #%d to kill at (%v)\n%s", k, err, first)
		}
		again, err := child(dir, 0)
		if err != nil {
			return fmt.Errorf("restart after kill %d: %v\n%s", k, err, again)
		}
		result := ""
		if k == 0 {
			fmt.Println("== first start without a crash; its durable writes:")
			for _, l := range strings.Split(first, "\n") {
				if strings.HasPrefix(l, "TRACE write #") {
					fmt.Println("   " + strings.TrimPrefix(l, "TRACE "))
				}
			}
		} else {
			points++
			fmt.Printf("== first start killed at %s\n", killed)
			fmt.Printf("   restart (BootstrapCluster again, wait %v for a leader):\n", wait)
		}
		for _, l := range strings.Split(again, "\n") {
			switch {
			case strings.HasPrefix(l, "RESULT "):
				result = strings.TrimPrefix(l, "RESULT ")
			case k > 0 && strings.HasPrefix(l, "TRACE ") && !strings.HasPrefix(l, "TRACE write #"):
				fmt.Println("     " + strings.TrimPrefix(l, "TRACE "))
			}
		}
		verdict := "leader elected"
		if !strings.Contains(result, "state=Leader") {
			verdict = "NO LEADER"
			stuck++
		}
		if k == 0 {
			fmt.Printf("   restart: %s -> %s\n", result, verdict)
		} else {
			fmt.Printf("     %s -> %s\n", result, verdict)
		}
	}
	fmt.Printf("%d of %d crash points leave a server that elects no leader within %v\n", stuck, points, wait)
	return nil
}

// lines hands each line of raft's log to f.
type lines struct {
	mu  sync.Mutex
	buf bytes.Buffer
	f   func(string)
}

func (w *lines) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	for {
		i := bytes.IndexByte(w.buf.Bytes(), '\n')
		if i < 0 {
			return len(p), nil
		}
		w.f(string(w.buf.Next(i + 1)[:i]))
	}
}

// fsm is an empty state machine: nothing is applied but raft's own entries.
type fsm struct{}

func (fsm) Apply(*raft.Log) interface{}         { return nil }
func (fsm) Snapshot() (raft.FSMSnapshot, error) { return snapshot{}, nil }
func (fsm) Restore(rc io.ReadCloser) error      { return rc.Close() }

type snapshot struct{}

func (snapshot) Persist(sink raft.SnapshotSink) error { return sink.Close() }
func (snapshot) Release()                             {}
