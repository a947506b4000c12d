// Command server is one NATS server with JetStream, embedded the way an application
// embeds it (server.NewServer, Start). Nothing in it knows about seedfall: built with
// seedfall's net_overlay, its listeners and routes are on the simulated network, and its
// JetStream store is on the node's simulated disk.
//
// The server's name is the node's name (SEEDFALL_NODE, set by seedfall; -name outside
// it), and it advertises <name>:<port> to clients and routes, so that no address is
// derived from the machine's interfaces.
package main

import (
	"flag"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/logger"
	"github.com/nats-io/nats-server/v2/server"
)

func main() {
	name := flag.String("name", os.Getenv("SEEDFALL_NODE"), "server name, also the host name it advertises")
	port := flag.Int("port", 4222, "client port")
	storeDir := flag.String("store", "/data/jetstream", "JetStream store directory")
	sync := flag.String("sync", "always", `JetStream fsync policy: "always" (sync_interval: always) or a Go duration (sync_interval, the default is 2m)`)
	routes := flag.String("routes", "", "comma-separated server names of the cluster (empty: a single server)")
	clusterPort := flag.Int("cluster-port", 6222, "route port")
	flag.Parse()
	if *name == "" {
		fmt.Fprintln(os.Stderr, "server: no name (-name or SEEDFALL_NODE)")
		os.Exit(2)
	}

	opts := &server.Options{
		ServerName:      *name,
		Host:            "0.0.0.0",
		Port:            *port,
		ClientAdvertise: fmt.Sprintf("%s:%d", *name, *port),
		JetStream:       true,
		StoreDir:        *storeDir,
		NoSigs:          true,
		// Small limits: the simulated disk and memory are small, and the server
		// otherwise sizes them from the machine.
		JetStreamMaxMemory: 64 << 20,
		JetStreamMaxStore:  256 << 20,
	}
	switch *sync {
	case "always":
		opts.SyncAlways = true
	default:
		d, err := time.ParseDuration(*sync)
		if err != nil {
			fmt.Fprintf(os.Stderr, "server: -sync %q: want \"always\" or a duration\n", *sync)
			os.Exit(2)
		}
		opts.SyncInterval = d
	}
	if *routes != "" {
		opts.Cluster = server.ClusterOpts{
			Name:      "seedfall",
			Host:      "0.0.0.0",
			Port:      *clusterPort,
			Advertise: fmt.Sprintf("%s:%d", *name, *clusterPort),
		}
		for _, peer := range strings.Split(*routes, ",") {
			if peer == *name {
				continue
			}
			opts.Routes = append(opts.Routes, &url.URL{Scheme: "nats-route", Host: fmt.Sprintf("%s:%d", peer, *clusterPort)})
		}
	}

	ns, err := server.NewServer(opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "server:", err)
		os.Exit(1)
	}
	// The server's own logger, without colors (seedfall's stdio is a terminal) or pids.
	ns.SetLogger(logger.NewStdLogger(false, false, false, false, false), false, false)
	ns.Start()
	if !ns.ReadyForConnections(30 * time.Second) {
		fmt.Fprintln(os.Stderr, "server: not ready for connections after 30s")
		os.Exit(1)
	}
	ns.WaitForShutdown()
}
