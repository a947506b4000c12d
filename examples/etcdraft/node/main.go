// Command node is one member of the etcdraft example: a key-value store replicated with
// go.etcd.io/raft/v3, persisted with etcd's own WAL (storage/wal) and snapshotter
// (etcdserver/api/snap), talking to its peers through etcd's rafthttp transport. It
// has the shape of etcd's contrib/raftexample, with what a crash-safe member needs on
// top: a PUT is acknowledged only once its entry is committed and applied, GET is a
// linearizable ReadIndex read, and a restart recovers the way etcd's server bootstrap
// does (newest available snapshot, WAL from it on, wal.Repair of a torn tail) before
// the raft node starts.
//
// Nothing in it imports seedfall but the node name and incarnation; its network is
// plain net and net/http, reached through the config's "net_overlay".
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/types"
	"go.etcd.io/etcd/server/v3/etcdserver/api/rafthttp"
	stats "go.etcd.io/etcd/server/v3/etcdserver/api/v2stats"
	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"google.golang.org/protobuf/proto"

	"github.com/seedfall/seedfall/sim"
)

const clusterID = 0x5eedfa11

type node struct {
	name        string
	id          uint64
	incarnation int
	peers       []string
	rn          raft.Node
	ms          *raft.MemoryStorage
	disk        *disk
	kv          *kvStore
	transport   *rafthttp.Transport
	confState   *raftpb.ConfState
	snapIndex   uint64
	snapCount   uint64
	catchUp     uint64
}

func main() {
	peers := flag.String("peers", "n1,n2,n3", "comma-separated member names; a member's raft ID is its position, from 1")
	dataDir := flag.String("data", "/data", "data directory")
	raftPort := flag.Int("raft-port", 12380, "rafthttp port")
	apiPort := flag.Int("api-port", 8000, "client line-protocol port")
	tick := flag.Duration("tick", 100*time.Millisecond, "raft tick")
	snapCount := flag.Uint64("snap-count", 20, "take a snapshot after this many applied entries")
	catchUp := flag.Uint64("catch-up", 5, "entries kept in the log after a snapshot, for slow followers")
	timeout := flag.Duration("timeout", time.Second, "how long a request waits for raft")
	noFsync := flag.Bool("unsafe-no-fsync", false, "negative control: the WAL never fsyncs (etcd's --unsafe-no-fsync)")
	localReads := flag.Bool("local-reads", false, "negative control: GET reads local state without ReadIndex (a restarted member answers before it has replayed)")
	flag.Parse()
	log.SetFlags(0)

	n := &node{
		name:        sim.Node(),
		incarnation: sim.Incarnation(),
		peers:       strings.Split(*peers, ","),
		snapCount:   *snapCount,
		catchUp:     *catchUp,
		kv:          newKVStore(),
	}
	if n.name == "" {
		n.name, _ = os.Hostname()
	}
	i := slices.Index(n.peers, n.name)
	if i < 0 {
		log.Fatalf("node %q is not in -peers %s", n.name, *peers)
	}
	n.id = uint64(i + 1)

	member := filepath.Join(*dataDir, "member")
	n.disk = &disk{
		lg:      newLogger(zapcore.InfoLevel),
		walDir:  filepath.Join(member, "wal"),
		snapDir: filepath.Join(member, "snap"),
		noFsync: *noFsync,
	}
	rec, err := n.disk.open()
	if err != nil {
		log.Fatalf("recover: %v", err)
	}
	n.ms = raft.NewMemoryStorage()
	if err := rec.load(n.ms); err != nil {
		log.Fatalf("load recovered state: %v", err)
	}
	if rec.snapshot != nil {
		md := rec.snapshot.GetMetadata()
		if err := n.kv.restore(md.GetIndex(), rec.snapshot.GetData()); err != nil {
			log.Fatal(err)
		}
		n.confState = md.GetConfState()
		n.snapIndex = md.GetIndex()
	}
	lastIndex, _ := n.ms.LastIndex()
	fmt.Printf("recovered: snapshot at %d, %d WAL entries (last %d), commit %d, repaired %v\n",
		n.snapIndex, len(rec.entries), lastIndex, rec.hard.GetCommit(), rec.repaired)

	if n.incarnation > 1 {
		sim.Sometimes(rec.repaired, "a restart repaired a torn WAL tail", nil)
		sim.Sometimes(rec.snapshot != nil, "a restart loaded a snapshot", nil)
	}

	cfg := &raft.Config{
		ID:              n.id,
		ElectionTick:    10,
		HeartbeatTick:   1,
		Storage:         n.ms,
		MaxSizePerMsg:   1 << 20,
		MaxInflightMsgs: 256,
		CheckQuorum:     true,
		PreVote:         true,
		Logger:          quietLogger{},
	}
	if rec.fresh {
		var ps []raft.Peer
		for j := range n.peers {
			ps = append(ps, raft.Peer{ID: uint64(j + 1)})
		}
		n.rn = raft.StartNode(cfg, ps)
	} else {
		n.rn = raft.RestartNode(cfg)
	}

	n.transport = &rafthttp.Transport{
		Logger:      newLogger(zapcore.ErrorLevel),
		ID:          types.ID(n.id),
		ClusterID:   types.ID(clusterID),
		Raft:        n,
		ServerStats: stats.NewServerStats(n.name, strconv.FormatUint(n.id, 10)),
		LeaderStats: stats.NewLeaderStats(zap.NewNop(), strconv.FormatUint(n.id, 10)),
		ErrorC:      make(chan error, 1),
	}
	if err := n.transport.Start(); err != nil {
		log.Fatalf("rafthttp: %v", err)
	}
	for j, p := range n.peers {
		if uint64(j+1) != n.id {
			n.transport.AddPeer(types.ID(j+1), []string{fmt.Sprintf("http://%s:%d", p, *raftPort)})
		}
	}
	rln, err := net.Listen("tcp", fmt.Sprintf(":%d", *raftPort))
	if err != nil {
		log.Fatal(err)
	}
	go func() { log.Fatal(http.Serve(rln, n.transport.Handler())) }()

	aln, err := net.Listen("tcp", fmt.Sprintf(":%d", *apiPort))
	if err != nil {
		log.Fatal(err)
	}
	a := &api{n: n, kv: n.kv, timeout: *timeout, localReads: *localReads}
	go func() { log.Fatal(a.serve(aln)) }()

	n.run(*tick)
}

// run is the raft loop: tick, and handle each Ready in the order raft requires —
// persist (snapshot, then HardState and entries) before sending, then apply.
func (n *node) run(tick time.Duration) {
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			n.rn.Tick()
		case err := <-n.transport.ErrorC:
			log.Fatalf("rafthttp: %v", err)
		case rd := <-n.rn.Ready():
			if !raft.IsEmptySnap(rd.Snapshot) {
				if err := n.disk.saveSnap(rd.Snapshot); err != nil {
					log.Fatalf("save snapshot: %v", err)
				}
			}
			if err := n.disk.save(rd.HardState, rd.Entries); err != nil {
				log.Fatalf("save to WAL: %v", err)
			}
			if !raft.IsEmptySnap(rd.Snapshot) {
				// As etcd's server does (etcdserver/raft.go, etcd-io/etcd#10219): fsync the
				// WAL's HardState before acknowledging an installed snapshot. wal.Save does
				// not fsync a HardState whose commit alone changed (raft.MustSync), and
				// without it a crash leaves the snapshot record beyond the durable commit:
				// ValidSnapshotEntries skips it, the member restarts from an older snapshot,
				// and the leader's next heartbeat panics raft with "tocommit(20) is out of
				// range [lastIndex(4)]". Found by `seedfall crashes -faults` on the
				// snapshot-install plan (README, finding 2).
				if err := n.disk.wal.Sync(); err != nil {
					log.Fatalf("sync WAL after a snapshot: %v", err)
				}
				if err := n.ms.ApplySnapshot(rd.Snapshot); err != nil {
					log.Fatalf("apply snapshot: %v", err)
				}
				md := rd.Snapshot.GetMetadata()
				if err := n.kv.restore(md.GetIndex(), rd.Snapshot.GetData()); err != nil {
					log.Fatal(err)
				}
				n.confState = md.GetConfState()
				n.snapIndex = md.GetIndex()
				fmt.Printf("installed snapshot at %d from the leader\n", md.GetIndex())
			}
			if err := n.ms.Append(rd.Entries); err != nil {
				log.Fatalf("append: %v", err)
			}
			n.transport.Send(rd.Messages)
			n.apply(rd.CommittedEntries)
			for _, rs := range rd.ReadStates {
				n.kv.readState(rs.RequestCtx, rs.Index)
			}
			n.maybeSnapshot()
			n.rn.Advance()
		}
	}
}

func (n *node) apply(ents []*raftpb.Entry) {
	for _, e := range ents {
		if e.GetIndex() <= n.kv.appliedIndex() {
			continue // already in the state machine through a snapshot
		}
		switch e.GetType() {
		case raftpb.EntryNormal:
			if err := n.kv.apply(e.GetIndex(), e.GetData()); err != nil {
				log.Fatal(err)
			}
		case raftpb.EntryConfChange:
			var cc raftpb.ConfChange
			if err := proto.Unmarshal(e.GetData(), &cc); err != nil {
				log.Fatalf("conf change at %d: %v", e.GetIndex(), err)
			}
			n.confState = n.rn.ApplyConfChange(&cc)
			n.kv.apply(e.GetIndex(), nil)
		default:
			log.Fatalf("entry %d: unexpected type %v", e.GetIndex(), e.GetType())
		}
	}
}

// maybeSnapshot takes a snapshot every snapCount applied entries and compacts the
// in-memory log, keeping catchUp entries for followers that are a little behind.
func (n *node) maybeSnapshot() {
	applied := n.kv.appliedIndex()
	if applied-n.snapIndex < n.snapCount {
		return
	}
	data, err := n.kv.snapshot()
	if err != nil {
		log.Fatal(err)
	}
	s, err := n.ms.CreateSnapshot(applied, n.confState, data)
	if err != nil {
		log.Fatalf("create snapshot at %d: %v", applied, err)
	}
	if err := n.disk.saveSnap(s); err != nil {
		log.Fatalf("save snapshot at %d: %v", applied, err)
	}
	if applied > n.catchUp {
		if err := n.ms.Compact(applied - n.catchUp); err != nil && err != raft.ErrCompacted {
			log.Fatalf("compact to %d: %v", applied-n.catchUp, err)
		}
	}
	n.snapIndex = applied
}

// The rafthttp.Raft interface.

func (n *node) Process(ctx context.Context, m *raftpb.Message) error { return n.rn.Step(ctx, m) }
func (n *node) IsIDRemoved(id uint64) bool                           { return false }
func (n *node) ReportUnreachable(id uint64)                          { n.rn.ReportUnreachable(id) }
func (n *node) ReportSnapshot(id uint64, status raft.SnapshotStatus) {
	n.rn.ReportSnapshot(id, status)
}

// newLogger is a zap logger for etcd's packages: console lines on stderr, no
// timestamps (the trace has them), at level and above.
func newLogger(level zapcore.Level) *zap.Logger {
	enc := zap.NewDevelopmentEncoderConfig()
	enc.TimeKey, enc.CallerKey, enc.StacktraceKey = "", "", ""
	return zap.New(zapcore.NewCore(zapcore.NewConsoleEncoder(enc), zapcore.Lock(os.Stderr), level))
}

// quietLogger is raft's logger: leader changes, warnings and errors only.
type quietLogger struct{}

func (quietLogger) Debug(v ...any)                 {}
func (quietLogger) Debugf(format string, v ...any) {}
func (quietLogger) Info(v ...any)                  {}
func (quietLogger) Infof(format string, v ...any) {
	if strings.Contains(format, "became leader") {
		log.Printf(format, v...)
	}
}
func (quietLogger) Warning(v ...any)                 { log.Print(append([]any{"raft warning: "}, v...)...) }
func (quietLogger) Warningf(format string, v ...any) { log.Printf("raft warning: "+format, v...) }
func (quietLogger) Error(v ...any)                   { log.Print(append([]any{"raft error: "}, v...)...) }
func (quietLogger) Errorf(format string, v ...any)   { log.Printf("raft error: "+format, v...) }
func (quietLogger) Fatal(v ...any)                   { log.Fatal(v...) }
func (quietLogger) Fatalf(format string, v ...any)   { log.Fatalf(format, v...) }
func (quietLogger) Panic(v ...any)                   { log.Panic(v...) }
func (quietLogger) Panicf(format string, v ...any)   { log.Panicf(format, v...) }
