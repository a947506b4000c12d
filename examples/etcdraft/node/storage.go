package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"go.etcd.io/etcd/server/v3/etcdserver/api/snap"
	"go.etcd.io/etcd/server/v3/storage/wal"
	"go.etcd.io/etcd/server/v3/storage/wal/walpb"
	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"go.uber.org/zap"

	"github.com/seedfall/seedfall/sim"
)

// disk is a node's durable state: etcd's WAL and snapshot directory, laid out as an
// etcd member's (<data>/member/wal, <data>/member/snap).
type disk struct {
	lg      *zap.Logger
	walDir  string
	snapDir string
	wal     *wal.WAL
	snaps   *snap.Snapshotter
	noFsync bool
}

// recovered is what a restart read back from the disk.
type recovered struct {
	fresh    bool // no WAL yet: bootstrap a new member
	snapshot *raftpb.Snapshot
	hard     *raftpb.HardState
	entries  []*raftpb.Entry
	repaired bool
}

// mkdirDurable creates dir (and missing parents) and fsyncs each new directory's
// parent, so that the directory itself survives a crash under strict_dirs.
func mkdirDurable(dir string) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	parent := filepath.Dir(dir)
	if err := mkdirDurable(parent); err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o750); err != nil && !os.IsExist(err) {
		return err
	}
	return syncDir(parent)
}

// writeDurable creates an empty file and makes it and its directory entry durable.
func writeDurable(path string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o640)
	if err != nil {
		return err
	}
	if err := errors.Join(f.Sync(), f.Close()); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}

// open recovers the node's state the way etcd's server bootstrap does: the newest
// snapshot that the WAL knows of and that is on disk, then the WAL from that snapshot
// on, repairing a torn tail once (io.ErrUnexpectedEOF) and reading it again.
func (d *disk) open() (*recovered, error) {
	if err := mkdirDurable(d.snapDir); err != nil {
		return nil, fmt.Errorf("create %s: %w", d.snapDir, err)
	}
	d.snaps = snap.New(d.lg, d.snapDir)
	// created marks, durably, that this member's WAL was created: from then on the
	// member has voted and acknowledged entries, and must never bootstrap again.
	created := filepath.Join(filepath.Dir(d.walDir), "wal-created")
	_, err := os.Stat(created)
	hadWAL := err == nil
	if hadWAL {
		sim.Always(wal.Exist(d.walDir), "a restarted member finds the WAL it created", nil)
	}
	if !wal.Exist(d.walDir) {
		if hadWAL {
			fmt.Printf("WAL lost: %s has no WAL files, though this member created its WAL before\n", d.walDir)
		}
		// wal.Create builds the directory under a temporary name, fsyncs it, renames
		// it into place and fsyncs the parent; the parent must itself be durable.
		if err := mkdirDurable(filepath.Dir(d.walDir)); err != nil {
			return nil, err
		}
		w, err := wal.Create(d.lg, d.walDir, nil)
		if err != nil {
			return nil, fmt.Errorf("create WAL: %w", err)
		}
		d.wal = w
		if d.noFsync {
			w.SetUnsafeNoFsync()
		}
		if !hadWAL {
			if err := writeDurable(created); err != nil {
				return nil, err
			}
		}
		return &recovered{fresh: true}, nil
	}

	walSnaps, err := wal.ValidSnapshotEntries(d.lg, d.walDir)
	if err != nil {
		return nil, fmt.Errorf("list WAL snapshots: %w", err)
	}
	rec := &recovered{}
	rec.snapshot, err = d.snaps.LoadNewestAvailable(walSnaps)
	if err != nil && !errors.Is(err, snap.ErrNoSnapshot) {
		return nil, fmt.Errorf("load snapshot: %w", err)
	}
	var at walpb.Snapshot
	if rec.snapshot != nil {
		at.Index = new(rec.snapshot.GetMetadata().GetIndex())
		at.Term = new(rec.snapshot.GetMetadata().GetTerm())
	}
	for {
		w, err := wal.Open(d.lg, d.walDir, &at)
		if err != nil {
			return nil, fmt.Errorf("open WAL: %w", err)
		}
		_, st, ents, err := w.ReadAll()
		if err != nil {
			w.Close()
			if rec.repaired || !errors.Is(err, io.ErrUnexpectedEOF) {
				return nil, fmt.Errorf("read WAL (repaired=%v): %w", rec.repaired, err)
			}
			if !wal.Repair(d.lg, d.walDir) {
				return nil, fmt.Errorf("repair WAL: %w", err)
			}
			rec.repaired = true
			continue
		}
		d.wal = w
		if d.noFsync {
			w.SetUnsafeNoFsync()
		}
		rec.hard, rec.entries = st, ents
		return rec, nil
	}
}

// saveSnap persists a snapshot: the snapshot file first, then its record in the WAL
// (so that the WAL never names a snapshot that is not on disk), then releases the WAL
// files before it.
func (d *disk) saveSnap(s *raftpb.Snapshot) error {
	md := s.GetMetadata()
	if err := d.snaps.SaveSnap(s); err != nil {
		return err
	}
	ws := &walpb.Snapshot{Index: new(md.GetIndex()), Term: new(md.GetTerm()), ConfState: md.GetConfState()}
	if err := d.wal.SaveSnapshot(ws); err != nil {
		return err
	}
	return d.wal.ReleaseLockTo(md.GetIndex())
}

// save persists a Ready's HardState and entries (fsynced when raft says it must be).
func (d *disk) save(st *raftpb.HardState, ents []*raftpb.Entry) error {
	return d.wal.Save(st, ents)
}

// load fills a fresh MemoryStorage with what was recovered.
func (rec *recovered) load(ms *raft.MemoryStorage) error {
	if rec.snapshot != nil {
		if err := ms.ApplySnapshot(rec.snapshot); err != nil {
			return err
		}
	}
	if rec.hard != nil {
		if err := ms.SetHardState(rec.hard); err != nil {
			return err
		}
	}
	return ms.Append(rec.entries)
}
