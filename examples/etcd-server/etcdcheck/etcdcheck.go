// Package etcdcheck is the workload of examples/etcd-server: it puts keys into an etcd
// cluster, defragments one member now and then, and checks etcd's own invariants at the
// end, the ones its robustness tests check:
//
//   - a put creates exactly one revision, so no member's revision exceeds 1 plus the
//     puts ever sent (a put applied twice breaks it);
//   - members agree on the revision and on HashKV at it;
//   - an acknowledged put keeps the mod revision it was acknowledged with: on every
//     member, the key at that revision holds the value put, with that ModRevision.
//
// A violation is printed and the workload exits 1, which fails the run.
package etcdcheck

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/seedfall/seedfall/sim"
	"github.com/seedfall/seedfall/simtest"
)

type put struct {
	key, value string
	rev        int64
}

// Main parses the workload's flags and runs it.
func Main() {
	members := flag.String("members", "n1", "comma-separated member `names` (clients on name:2379)")
	defrag := flag.String("defrag", "", "member to defragment (default: the first)")
	every := flag.Int("defrag-every", 10, "defragment after this many puts")
	dur := flag.Duration("for", 6*time.Second, "how long to put keys (virtual time)")
	keys := flag.Int("keys", 8, "distinct keys")
	flag.Parse()
	names := strings.Split(*members, ",")
	if *defrag == "" {
		*defrag = names[0]
	}
	if err := run(names, *defrag, *every, *dur, *keys); err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
}

func endpoint(name string) string { return "http://" + name + ":2379" }

func client(names ...string) (*clientv3.Client, error) {
	eps := make([]string, len(names))
	for i, n := range names {
		eps[i] = endpoint(n)
	}
	return clientv3.New(clientv3.Config{Endpoints: eps, DialTimeout: 2 * time.Second, Logger: zap.NewNop()})
}

func run(names []string, defrag string, every int, dur time.Duration, keys int) error {
	cli, err := client(names...)
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	defer cli.Close()
	// The cluster is up once a put succeeds; the faults start then (faults.start_on).
	for start := time.Now(); ; {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := cli.Put(ctx, "setup", "done")
		cancel()
		if err == nil {
			break
		}
		if time.Since(start) > 30*time.Second {
			return fmt.Errorf("liveness: no put succeeded in 30s: %w", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	sim.SetupComplete(map[string]any{"members": len(names)})
	var acked []put
	sent, defrags := 1, 0
	deadline := time.Now().Add(dur)
	for i := 0; time.Now().Before(deadline); i++ {
		k, v := fmt.Sprintf("k%d", i%keys), fmt.Sprintf("v%d", i)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		resp, err := cli.Put(ctx, k, v)
		cancel()
		sent++
		if err == nil {
			acked = append(acked, put{k, v, resp.Header.Revision})
		}
		if every > 0 && i%every == every-1 {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			if _, err := cli.Defragment(ctx, endpoint(defrag)); err == nil {
				defrags++
			}
			cancel()
		}
		time.Sleep(10 * time.Millisecond)
	}
	fmt.Printf("%d puts sent, %d acknowledged, %d defragmentations of %s\n", sent, len(acked), defrags, defrag)
	// No more faults: every member comes back and catches up before the checks.
	sim.StopFaults(0)
	return check(names, sent, acked)
}

// check waits for every member to answer with the same revision (up to 20 s), then
// checks the invariants.
func check(names []string, sent int, acked []put) error {
	clis := map[string]*clientv3.Client{}
	for _, n := range names {
		c, err := client(n)
		if err != nil {
			return fmt.Errorf("client of %s: %w", n, err)
		}
		defer c.Close()
		clis[n] = c
	}
	revs := map[string]int64{}
	for wait := time.Now().Add(20 * time.Second); ; {
		for _, n := range names {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			st, err := clis[n].Status(ctx, endpoint(n))
			cancel()
			if err == nil {
				revs[n] = st.Header.Revision
			}
		}
		if len(revs) == len(names) && agree(revs) || time.Now().After(wait) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if len(revs) < len(names) {
		return fmt.Errorf("liveness: members did not all answer within 20s: %s", show(revs))
	}
	for _, n := range names {
		if revs[n] > int64(1+sent) {
			return fmt.Errorf("member %s is at revision %d after %d puts (at most %d): a put was applied twice; revisions %s", n, revs[n], sent, 1+sent, show(revs))
		}
	}
	if !agree(revs) {
		return fmt.Errorf("members disagree on the revision: %s", show(revs))
	}
	rev := revs[names[0]]
	hashes := map[string]int64{}
	for _, n := range names {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		h, err := clis[n].HashKV(ctx, endpoint(n), rev)
		cancel()
		if err != nil {
			return fmt.Errorf("HashKV of %s at revision %d: %w", n, rev, err)
		}
		hashes[n] = int64(h.Hash)
	}
	if !agree(hashes) {
		return fmt.Errorf("members disagree on HashKV at revision %d: %s", rev, show(hashes))
	}
	for _, p := range acked {
		for _, n := range names {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			resp, err := clis[n].Get(ctx, p.key, clientv3.WithRev(p.rev), clientv3.WithSerializable())
			cancel()
			if err != nil {
				return fmt.Errorf("get %s at revision %d from %s: %w", p.key, p.rev, n, err)
			}
			if len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != p.value || resp.Kvs[0].ModRevision != p.rev {
				got := "nothing"
				if len(resp.Kvs) == 1 {
					got = fmt.Sprintf("%s=%s at mod revision %d", resp.Kvs[0].Key, resp.Kvs[0].Value, resp.Kvs[0].ModRevision)
				}
				return fmt.Errorf("acknowledged put lost its revision: %s=%s was acknowledged at revision %d; member %s has %s there", p.key, p.value, p.rev, n, got)
			}
		}
	}
	fmt.Printf("checked: revision %d and HashKV %d on %d members, %d acknowledged puts at their revisions\n", rev, hashes[names[0]], len(names), len(acked))
	return nil
}

func agree[V comparable](m map[string]V) bool {
	var first V
	i := 0
	for _, v := range m {
		if i > 0 && v != first {
			return false
		}
		first = v
		i++
	}
	return true
}

func show[V any](m map[string]V) string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for i, n := range names {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "%s=%v", n, m[n])
	}
	return b.String()
}

// DefragThenKill is finding 32's scenario as a test with its own faults (package
// simtest): it puts keys until the cluster answered puts puts, defragments member,
// kills it right away (no write after the defragmentation, so the backend has not
// committed since: the window of finding 32, which a process death is enough to hit),
// restarts it, and checks the invariants of check once every member answers. With
// etcd 3.5.5 the restarted member applies puts again (its consistent index on disk is
// the one from before the defragmentation).
func DefragThenKill(t *simtest.T, names []string, member string, puts int) {
	cli, err := client(names...)
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	defer cli.Close()
	var acked []put
	sent := 0
	for start := time.Now(); len(acked) < puts; {
		if time.Since(start) > 30*time.Second {
			t.Fatalf("liveness: %d of %d puts acknowledged in 30s", len(acked), puts)
		}
		k, v := fmt.Sprintf("k%d", sent%8), fmt.Sprintf("v%d", sent)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		resp, err := cli.Put(ctx, k, v)
		cancel()
		sent++
		if err != nil {
			time.Sleep(100 * time.Millisecond) // the cluster is still forming
			continue
		}
		acked = append(acked, put{k, v, resp.Header.Revision})
		time.Sleep(10 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	_, err = cli.Defragment(ctx, endpoint(member))
	cancel()
	if err != nil {
		t.Fatalf("defragment %s: %v", member, err)
	}
	t.Kill(member)
	t.Restart(member)
	if err := check(names, sent, acked); err != nil {
		t.Fatal(err)
	}
}
