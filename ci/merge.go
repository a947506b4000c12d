package ci

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/seedfall/seedfall/engine"
)

// WriteResults writes results as JSON lines, one per seed, in the given order: the
// results file of `seedfall run` and `seedfall ci`.
func WriteResults(w io.Writer, results []engine.Result) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	for i := range results {
		if err := enc.Encode(&results[i]); err != nil {
			return fmt.Errorf("encode result of seed %d: %w", results[i].Seed, err)
		}
	}
	return bw.Flush()
}

// readResults reads a JSON-lines results file, applying check (when not nil) to each
// result; errors name the file (name) and the line.
func readResults(name string, r io.Reader, check func(*engine.Result) error) ([]engine.Result, error) {
	var out []engine.Result
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 256<<20)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var res engine.Result
		if err := json.Unmarshal(b, &res); err != nil {
			return nil, fmt.Errorf("%s:%d: not a seedfall result: %w", name, line, err)
		}
		if check != nil {
			if err := check(&res); err != nil {
				return nil, fmt.Errorf("%s:%d: %w", name, line, err)
			}
		}
		out = append(out, res)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return out, nil
}

// Merge joins the results files of a sharded sweep (JSON lines, as `seedfall run
// -shard i/n` and `seedfall ci` write them) into one list sorted by seed. A seed in two
// files means the shards overlap (or one file was given twice): that is an error naming
// both files.
func Merge(shardFiles []string) ([]engine.Result, error) {
	if len(shardFiles) == 0 {
		return nil, fmt.Errorf("merge: no results files given")
	}
	all, err := readResultsFiles(shardFiles, nil)
	if err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	return all, nil
}

// readResultsFiles reads results files (readResults) into one list sorted by test (in
// the order they first appear: a sweep of several simulation tests) and seed, refusing a
// seed of a test that appears twice.
func readResultsFiles(files []string, check func(*engine.Result) error) ([]engine.Result, error) {
	from := map[seedKey]string{}
	order := map[string]int{}
	var all []engine.Result
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		rs, err := readResults(name, f, check)
		f.Close()
		if err != nil {
			return nil, err
		}
		for _, r := range rs {
			k := seedKey{r.Test, r.Seed}
			of := ""
			if r.Test != "" {
				of = " of " + r.Test
			}
			if prev, dup := from[k]; dup {
				if prev == name {
					return nil, fmt.Errorf("seed %d%s appears twice in %s", r.Seed, of, name)
				}
				return nil, fmt.Errorf("seed %d%s is in both %s and %s: the shards overlap (were they run with the same -seeds and distinct -shard i/n?)", r.Seed, of, prev, name)
			}
			from[k] = name
			if _, ok := order[r.Test]; !ok {
				order[r.Test] = len(order)
			}
			all = append(all, r)
		}
	}
	sort.SliceStable(all, func(i, j int) bool {
		if a, b := order[all[i].Test], order[all[j].Test]; a != b {
			return a < b
		}
		return all[i].Seed < all[j].Seed
	})
	return all, nil
}
