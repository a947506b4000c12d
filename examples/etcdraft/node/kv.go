package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"
)

// put is the payload of a normal raft entry.
type put struct {
	ID    string `json:"id"`
	Key   string `json:"k"`
	Value string `json:"v"`
}

// kvStore is the replicated state machine: a map from key to value, applied in log
// order by the raft loop. Request handlers wait on it for their proposal to be
// applied (PUT) or for the applied index to reach a read index (GET).
type kvStore struct {
	mu       sync.Mutex
	data     map[string]string
	applied  uint64
	changed  chan struct{} // closed and replaced whenever applied moves
	proposed map[string]chan struct{}
	reads    map[string]chan uint64
}

func newKVStore() *kvStore {
	return &kvStore{
		data:     map[string]string{},
		changed:  make(chan struct{}),
		proposed: map[string]chan struct{}{},
		reads:    map[string]chan uint64{},
	}
}

// apply applies one committed entry's payload at index (nil data: an empty entry).
func (s *kvStore) apply(index uint64, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(data) > 0 {
		var p put
		if err := json.Unmarshal(data, &p); err != nil {
			return fmt.Errorf("entry %d: %w", index, err)
		}
		s.data[p.Key] = p.Value
		if ch, ok := s.proposed[p.ID]; ok {
			close(ch)
			delete(s.proposed, p.ID)
		}
	}
	s.advance(index)
	return nil
}

func (s *kvStore) advance(index uint64) {
	if index > s.applied {
		s.applied = index
		close(s.changed)
		s.changed = make(chan struct{})
	}
}

// snapshot returns the state as snapshot data (JSON sorts map keys: deterministic).
func (s *kvStore) snapshot() ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return json.Marshal(s.data)
}

// restore replaces the state with a snapshot's data taken at index.
func (s *kvStore) restore(index uint64, data []byte) error {
	m := map[string]string{}
	if len(data) > 0 {
		if err := json.Unmarshal(data, &m); err != nil {
			return fmt.Errorf("snapshot at %d: %w", index, err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.data = m
	s.advance(index)
	return nil
}

func (s *kvStore) appliedIndex() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.applied
}

// readState delivers a ReadIndex answer to the GET that asked for it.
func (s *kvStore) readState(rctx []byte, index uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ch, ok := s.reads[string(rctx)]; ok {
		ch <- index
		delete(s.reads, string(rctx))
	}
}

// api answers the client's line protocol on one node:
//
//	PUT key value -> OK | ERR reason     (OK once the entry is committed and applied here)
//	GET key       -> VAL value | NONE | ERR reason   (linearizable, through ReadIndex)
type api struct {
	n          *node
	kv         *kvStore
	timeout    time.Duration
	localReads bool // negative control: answer GET from local state, no ReadIndex
	mu         sync.Mutex
	seq        uint64
}

func (a *api) nextID() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.seq++
	return fmt.Sprintf("%s.%d.%d", a.n.name, a.n.incarnation, a.seq)
}

func (a *api) serve(ln net.Listener) error {
	for {
		c, err := ln.Accept()
		if err != nil {
			return err
		}
		go a.serveConn(c)
	}
}

func (a *api) serveConn(c net.Conn) {
	defer c.Close()
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		if _, err := io.WriteString(c, a.handle(strings.TrimSuffix(line, "\n"))+"\n"); err != nil {
			return
		}
	}
}

func (a *api) handle(line string) string {
	cmd, args, _ := strings.Cut(line, " ")
	ctx, cancel := context.WithTimeout(context.Background(), a.timeout)
	defer cancel()
	switch cmd {
	case "PUT":
		key, value, ok := strings.Cut(args, " ")
		if !ok || key == "" {
			return "ERR usage: PUT key value"
		}
		if err := a.put(ctx, key, value); err != nil {
			return "ERR " + err.Error()
		}
		return "OK"
	case "GET":
		v, found, err := a.get(ctx, args)
		switch {
		case err != nil:
			return "ERR " + err.Error()
		case !found:
			return "NONE"
		}
		return "VAL " + v
	}
	return "ERR unknown command"
}

// put proposes key=value and waits until this node has applied it.
func (a *api) put(ctx context.Context, key, value string) error {
	p := put{ID: a.nextID(), Key: key, Value: value}
	data, err := json.Marshal(p)
	if err != nil {
		return err
	}
	done := make(chan struct{})
	a.kv.mu.Lock()
	a.kv.proposed[p.ID] = done
	a.kv.mu.Unlock()
	defer func() {
		a.kv.mu.Lock()
		delete(a.kv.proposed, p.ID)
		a.kv.mu.Unlock()
	}()
	if err := a.n.rn.Propose(ctx, data); err != nil {
		return fmt.Errorf("propose: %w", err)
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("not applied in %s", a.timeout)
	}
}

// get reads key linearizably: ask raft for a read index (the leader confirms it
// still leads with a heartbeat round), wait until this node has applied up to it,
// then read the local state.
func (a *api) get(ctx context.Context, key string) (string, bool, error) {
	if !a.localReads {
		rctx := a.nextID()
		ch := make(chan uint64, 1)
		a.kv.mu.Lock()
		a.kv.reads[rctx] = ch
		a.kv.mu.Unlock()
		defer func() {
			a.kv.mu.Lock()
			delete(a.kv.reads, rctx)
			a.kv.mu.Unlock()
		}()
		if err := a.n.rn.ReadIndex(ctx, []byte(rctx)); err != nil {
			return "", false, fmt.Errorf("read index: %w", err)
		}
		var index uint64
		select {
		case index = <-ch:
		case <-ctx.Done():
			return "", false, fmt.Errorf("no read index in %s", a.timeout)
		}
		for {
			a.kv.mu.Lock()
			applied, changed := a.kv.applied, a.kv.changed
			a.kv.mu.Unlock()
			if applied >= index {
				break
			}
			select {
			case <-changed:
			case <-ctx.Done():
				return "", false, fmt.Errorf("applied %d < read index %d after %s", applied, index, a.timeout)
			}
		}
	}
	a.kv.mu.Lock()
	defer a.kv.mu.Unlock()
	v, ok := a.kv.data[key]
	return v, ok, nil
}
