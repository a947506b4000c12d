// Command metasum reproduces finding 13 natively, on the host, against the real
// nats-server v2.15.2 and nats.go (no seedfall): a stream directory left with meta.inf
// but no meta.sum is skipped at start-up; re-creating the stream reuses the directory
// without writing meta.sum, so every message acknowledged to the re-created stream is
// gone at the next restart.
//
//	go run ./native/metasum
//	go run github.com/seedfall/seedfall/examples/nativerun -patch patches/metasum-rewrite.patch ./native/metasum
//
// writeStreamMeta renames meta.inf into place, then meta.sum (filestore.go:1035,
// :1044): a process killed between the two renames leaves the directory as this
// program does by removing meta.sum after a clean shutdown (killing a process at that
// instant is not reproducible; removing the file is). Servers are embedded and shut
// down cleanly; SyncAlways is on, so every acknowledged message was fsynced.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func start(store string) (*server.Server, jetstream.JetStream, *nats.Conn, error) {
	ns, err := server.NewServer(&server.Options{
		ServerName: "native", Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: store,
		NoSigs: true, SyncAlways: true, JetStreamMaxMemory: 64 << 20, JetStreamMaxStore: 256 << 20,
	})
	if err != nil {
		return nil, nil, nil, err
	}
	ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		return nil, nil, nil, errors.New("server not ready")
	}
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		return nil, nil, nil, err
	}
	js, err := jetstream.New(nc)
	return ns, js, nc, err
}

func stop(ns *server.Server, nc *nats.Conn) {
	nc.Close()
	ns.Shutdown()
	ns.WaitForShutdown()
}

var cfg = jetstream.StreamConfig{Name: "EVENTS", Subjects: []string{"events.>"}, Storage: jetstream.FileStorage}

func run() error {
	store, err := os.MkdirTemp("", "nats-native-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(store)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	ns, js, nc, err := start(store)
	if err != nil {
		return err
	}
	if _, err := js.CreateStream(ctx, cfg); err != nil {
		return err
	}
	stop(ns, nc)
	sums, _ := filepath.Glob(filepath.Join(store, "jetstream", "*", "streams", "EVENTS", "meta.sum"))
	if len(sums) != 1 {
		return fmt.Errorf("meta.sum not found under %s", store)
	}
	if err := os.Remove(sums[0]); err != nil {
		return err
	}
	fmt.Println("created stream EVENTS, shut down; removed meta.sum (as a kill between the two renames leaves it)")

	ns, js, nc, err = start(store)
	if err != nil {
		return err
	}
	if _, err := js.Stream(ctx, "EVENTS"); errors.Is(err, jetstream.ErrStreamNotFound) {
		fmt.Println("restart: stream EVENTS skipped (no meta.sum); the client creates it again")
	}
	if _, err := js.CreateStream(ctx, cfg); err != nil {
		return err
	}
	for i := range 10 {
		if _, err := js.Publish(ctx, "events.e", []byte(fmt.Sprintf("m%d", i))); err != nil {
			return err
		}
	}
	fmt.Println("published 10 messages, each acknowledged (SyncAlways); shut down cleanly")
	stop(ns, nc)

	ns, js, nc, err = start(store)
	if err != nil {
		return err
	}
	defer stop(ns, nc)
	s, err := js.Stream(ctx, "EVENTS")
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		fmt.Println("restart: stream EVENTS not found: 0 of 10 acknowledged messages")
		return nil
	}
	if err != nil {
		return err
	}
	info, err := s.Info(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("restart: stream EVENTS has %d of 10 acknowledged messages\n", info.State.Msgs)
	return nil
}
