// Package etcdnode runs one etcd member through go.etcd.io/etcd/server/v3/embed, started
// the way etcd's own robustness tests start a member: a static initial cluster, the peer
// and client URLs on the member's host name, the data directory that survives its
// restarts. etcd is unmodified: it builds for wasip1 through seedfall's wasip1 platform
// layer (bbolt's mmap, the WAL's flock) and reaches the simulated network through the net
// overlay.
//
// It is a package, not a main, so that one node serves both etcd versions this example
// runs (v3.5.5 here, v3.5.7 in ./v3.5.7).
package etcdnode

import (
	"flag"
	"fmt"
	"net/url"
	"os"
	"strings"

	"go.etcd.io/etcd/server/v3/embed"
)

// Main parses the node's flags, starts the member and serves until it stops.
func Main() {
	name := flag.String("name", os.Getenv("SEEDFALL_NODE"), "member `name` (the node's host name)")
	cluster := flag.String("cluster", "", "initial cluster: `name=http://host:2380,...`")
	dir := flag.String("dir", "/data/etcd", "data `directory`")
	quota := flag.Int64("quota", 16<<20, "QuotaBackendBytes: etcd then maps 1.1x this much of its bbolt file (10 GiB without a quota, more than wasm memory holds)")
	flag.Parse()
	if err := run(*name, *cluster, *dir, *quota); err != nil {
		fmt.Fprintf(os.Stderr, "etcd %s: %v\n", *name, err)
		os.Exit(1)
	}
}

func mustURL(s string) url.URL {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return *u
}

func run(name, cluster, dir string, quota int64) error {
	if cluster == "" {
		cluster = name + "=http://" + name + ":2380"
	}
	cfg := embed.NewConfig()
	cfg.Name = name
	cfg.Dir = dir
	cfg.LPUrls = []url.URL{mustURL("http://0.0.0.0:2380")}
	cfg.APUrls = []url.URL{mustURL("http://" + name + ":2380")}
	cfg.LCUrls = []url.URL{mustURL("http://0.0.0.0:2379")}
	cfg.ACUrls = []url.URL{mustURL("http://" + name + ":2379")}
	cfg.InitialCluster = cluster
	cfg.InitialClusterToken = "seedfall"
	cfg.ClusterState = embed.ClusterStateFlagNew
	cfg.QuotaBackendBytes = quota
	cfg.LogLevel = "error"
	cfg.LogOutputs = []string{"stderr"}
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return err
	}
	defer e.Close()
	select {
	case <-e.Server.ReadyNotify():
		fmt.Printf("etcd %s ready (%d members)\n", name, strings.Count(cluster, "=")) // the trace marks each start
	case err := <-e.Err():
		return err
	}
	return <-e.Err()
}
