// Command client is the workload: an ordinary nats.go JetStream client. It makes sure
// its stream exists (and creates it again when the servers say it does not exist, as an
// application that owns its stream does), publishes messages one at a time with
// acknowledgements, remembers the sequence and payload of every acknowledged one, and
// reads them all back by sequence every few publishes and at the end. Servers crash,
// restart and are cut off meanwhile; the client reconnects and retries.
//
// It exits 1 with
//
//	stream EVENTS lost after restart, 186 acknowledged messages gone
//
// when the servers answer "stream not found" after a message was acknowledged, and with
//
//	acknowledged message seq 42 lost: message not found
//
// when one acknowledged message is missing or holds another payload. Errors that a
// restart or a partition explain (timeouts, no responders, no leader, no suitable peers)
// are retried, with a budget in (virtual) time: no progress for -stall is a failure too.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

var (
	servers  = flag.String("servers", "server", "comma-separated server names")
	port     = flag.Int("port", 4222, "client port of every server")
	stream   = flag.String("stream", "EVENTS", "stream name")
	replicas = flag.Int("replicas", 1, "stream replicas")
	count    = flag.Int("n", 200, "messages to get acknowledged")
	interval = flag.Duration("interval", 25*time.Millisecond, "pause between publishes")
	every    = flag.Int("check-every", 25, "read every acknowledged message back after this many publishes")
	stall    = flag.Duration("stall", 120*time.Second, "fail when nothing succeeds for this long")
)

// acked is one acknowledged publish.
type acked struct {
	seq  uint64
	data string
}

type client struct {
	js    jetstream.JetStream
	cfg   jetstream.StreamConfig
	acked []acked
	// progress is when the last operation succeeded.
	progress time.Time
}

func main() {
	flag.Parse()
	var urls []string
	for _, s := range strings.Split(*servers, ",") {
		urls = append(urls, fmt.Sprintf("nats://%s:%d", s, *port))
	}
	nc, err := nats.Connect(strings.Join(urls, ","),
		nats.RetryOnFailedConnect(true),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(100*time.Millisecond),
		nats.Timeout(2*time.Second),
	)
	if err != nil {
		fail("connect: %v", err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		fail("jetstream: %v", err)
	}
	c := &client{
		js: js,
		cfg: jetstream.StreamConfig{
			Name:     *stream,
			Subjects: []string{"events.>"},
			Storage:  jetstream.FileStorage,
			Replicas: *replicas,
		},
		progress: time.Now(),
	}

	for i := 0; len(c.acked) < *count; i++ {
		c.ensureStream()
		data := fmt.Sprintf("event-%d", i)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		ack, err := js.Publish(ctx, "events.e", []byte(data), jetstream.WithExpectStream(*stream))
		cancel()
		if err != nil {
			c.retry("publish "+data, err)
			continue
		}
		c.acked = append(c.acked, acked{ack.Sequence, data})
		c.progress = time.Now()
		if len(c.acked)%*every == 0 {
			c.readBack()
		}
		time.Sleep(*interval)
	}
	c.readBack()
	fmt.Printf("client: %d acknowledged messages, all read back\n", len(c.acked))
	nc.Close()
}

// ensureStream returns once the stream exists, creating it if the servers say it does
// not exist and nothing was acknowledged yet.
func (c *client) ensureStream() {
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err := c.js.Stream(ctx, c.cfg.Name)
		cancel()
		if err == nil {
			return
		}
		if !errors.Is(err, jetstream.ErrStreamNotFound) {
			c.retry("stream info", err)
			continue
		}
		c.lost()
		ctx, cancel = context.WithTimeout(context.Background(), 2*time.Second)
		_, err = c.js.CreateStream(ctx, c.cfg)
		cancel()
		if err == nil || errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			fmt.Printf("client: stream %s created\n", c.cfg.Name)
			c.progress = time.Now()
			return
		}
		c.retry("create stream", err)
	}
}

// readBack reads every acknowledged message by its sequence.
func (c *client) readBack() {
	var s jetstream.Stream
	for i := 0; i < len(c.acked); {
		a := c.acked[i]
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		var err error
		if s == nil {
			s, err = c.js.Stream(ctx, c.cfg.Name)
		}
		var m *jetstream.RawStreamMsg
		if err == nil {
			m, err = s.GetMsg(ctx, a.seq)
		}
		cancel()
		switch {
		case errors.Is(err, jetstream.ErrStreamNotFound):
			c.lost()
		case errors.Is(err, jetstream.ErrMsgNotFound):
			fail("acknowledged message seq %d lost: message not found (%d acknowledged)", a.seq, len(c.acked))
		case err != nil:
			s = nil
			c.retry(fmt.Sprintf("get seq %d", a.seq), err)
			continue
		case string(m.Data) != a.data:
			fail("acknowledged message seq %d lost: want %q, the stream has %q", a.seq, a.data, m.Data)
		}
		c.progress = time.Now()
		i++
	}
}

// lost fails the run if the servers say the stream does not exist after a message was
// acknowledged.
func (c *client) lost() {
	if len(c.acked) > 0 {
		fail("stream %s lost after restart, %d acknowledged messages gone", c.cfg.Name, len(c.acked))
	}
}

// retry waits a little after an error that a crash or a partition explains, or fails
// the run if nothing has succeeded for -stall.
func (c *client) retry(what string, err error) {
	if since := time.Since(c.progress); since > *stall {
		fail("no progress for %v: %s: %v", since.Round(time.Second), what, err)
	}
	time.Sleep(200 * time.Millisecond)
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(1)
}
