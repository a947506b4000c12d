package ci

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/seedfall/seedfall/engine"
)

// baselineVersion is the format version this package reads and writes.
const baselineVersion = 1

// Entry statuses in a baseline.
const (
	StatusFailing = "failing"
	StatusFixed   = "fixed"
)

// Baseline is what earlier runs learned: the known failure signatures with their seeds,
// shrunk plans and first/last seen commits, and durability-mutation results. It is
// written as JSON with sorted keys (encoding/json sorts map keys), so the same baseline
// always has the same bytes.
type Baseline struct {
	Version    int               `json:"version"`
	Signatures map[string]*Entry `json:"signatures"`
	Mutation   *Mutation         `json:"mutation,omitempty"`
	// Provenance is the build of the run that wrote the baseline last (seedfall and Go
	// versions, each node's wasm hash): replays of its seeds reproduce with that build.
	Provenance *engine.Provenance `json:"provenance,omitempty"`
}

// entryGo is the Go release e's seeds were recorded with: its own, else the baseline's.
func (b *Baseline) entryGo(e *Entry) string {
	if e.Go != "" {
		return e.Go
	}
	if b.Provenance != nil && b.Provenance.Go != "unknown" {
		return b.Provenance.Go
	}
	return ""
}

// entryDraw is the draw e's seeds were recorded with (seedDraw).
func (b *Baseline) entryDraw(e *Entry) seedDraw {
	return seedDraw{Go: b.entryGo(e), Placement: e.Placement}
}

// Entry is one known signature.
type Entry struct {
	Kind      string         `json:"kind,omitempty"`
	Reason    string         `json:"reason"`
	Seeds     []uint64       `json:"seeds"`
	Shrunk    []engine.Fault `json:"shrunk,omitempty"`
	FirstSeen string         `json:"first_seen"`
	LastSeen  string         `json:"last_seen"`
	Status    string         `json:"status"` // StatusFailing or StatusFixed
	// Go is the Go release Seeds were recorded with ("go1.26.8"). A run is deterministic
	// per toolchain: under another release the same seed runs another guest runtime and
	// may take another path, so a seed that passes there is no evidence of a fix. Empty
	// in baselines written before it was recorded: the baseline's Provenance.Go stands in.
	Go string `json:"go,omitempty"`
	// Placement is the crash placement Seeds were drawn with (engine.Provenance's
	// CrashPlacement): a seed is another run under another. Empty: the seeds drew no
	// mid-op crash, or were recorded before seedfall recorded it, when every mid-op
	// crash landed in the next op.
	Placement string `json:"crash_placement,omitempty"`
	// SearchSeeds are the seeds whose crash-state search (input crash-seeds) found the
	// signature: a search of one of them that runs every state and does not find it
	// again marks it fixed.
	SearchSeeds []uint64 `json:"search_seeds,omitempty"`
	FixedIn     string   `json:"fixed_in,omitempty"`
	// FirstRun, LastRun and FixedRun are the GITHUB_RUN_IDs of the runs that first saw,
	// last saw and fixed the signature. Run ids grow, so they order concurrent writers
	// when mergeBaselines reconciles them (commit SHAs have no order).
	FirstRun int64 `json:"first_run,omitempty"`
	LastRun  int64 `json:"last_run,omitempty"`
	FixedRun int64 `json:"fixed_run,omitempty"`
}

// Mutation is the latest durability-mutation result.
type Mutation struct {
	Score   string   `json:"score"` // killed/total, e.g. "7/7"
	Mutants []Mutant `json:"mutants"`
	Run     int64    `json:"run,omitempty"`
}

// Mutant is one mutation operator applied to one site.
type Mutant struct {
	Name   string `json:"name"`
	Site   string `json:"site,omitempty"`
	Killed bool   `json:"killed"`
	Seed   uint64 `json:"seed,omitempty"`
	// Outcome is "killed", "survived", "unknown" (a seed could not be judged) or "n/a".
	Outcome string `json:"outcome,omitempty"`
	Reason  string `json:"reason,omitempty"`
}

func (m Mutant) key() string { return m.Name + "\x00" + m.Site }

// newBaseline returns an empty baseline.
func newBaseline() *Baseline {
	return &Baseline{Version: baselineVersion, Signatures: map[string]*Entry{}}
}

// corruptError says a stored baseline could not be read. The run treats the baseline as
// empty and still reports.
type corruptError struct {
	Name string // the file or branch:path
	Err  error
}

func (e *corruptError) Error() string {
	return fmt.Sprintf("baseline %s is unreadable: %v; treating it as empty (the next write replaces it)", e.Name, e.Err)
}

func (e *corruptError) Unwrap() error { return e.Err }

// ParseBaseline decodes a baseline. An empty input is an empty baseline.
func ParseBaseline(name string, data []byte) (*Baseline, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return newBaseline(), nil
	}
	var b Baseline
	if err := json.Unmarshal(data, &b); err != nil {
		return nil, &corruptError{Name: name, Err: fmt.Errorf("invalid JSON: %w", err)}
	}
	if b.Version != baselineVersion {
		return nil, &corruptError{Name: name, Err: fmt.Errorf("field version: %d is not a version this seedfall reads (want %d)", b.Version, baselineVersion)}
	}
	if b.Signatures == nil {
		b.Signatures = map[string]*Entry{}
	}
	for sig, e := range b.Signatures {
		if e == nil {
			return nil, &corruptError{Name: name, Err: fmt.Errorf("field signatures.%s: null", sig)}
		}
	}
	return &b, nil
}

// marshal encodes the baseline: indented JSON, sorted keys, seeds sorted, a final newline.
func (b *Baseline) marshal() ([]byte, error) {
	for _, e := range b.Signatures {
		sortSeeds(e.Seeds)
	}
	data, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// clone returns a deep copy.
func (b *Baseline) clone() *Baseline {
	data, err := json.Marshal(b)
	if err != nil {
		panic(fmt.Sprintf("ci: baseline does not marshal: %v", err))
	}
	c := newBaseline()
	if err := json.Unmarshal(data, c); err != nil {
		panic(fmt.Sprintf("ci: baseline does not round-trip: %v", err))
	}
	if c.Signatures == nil {
		c.Signatures = map[string]*Entry{}
	}
	return c
}

// mergeBaselines reconciles a baseline read back after a write conflict (theirs) with
// the one this run wanted to write (mine): the union of signatures; for a signature in
// both, the union of seeds, the earliest first sighting, the latest last sighting, and
// the reason and shrunk plan of the latest sighting. A signature is fixed only if its
// latest fix comes after its latest sighting; a fix and a sighting in the same run (two
// shards of one deep sweep) leave it failing. The mutation result of the later run wins.
func mergeBaselines(theirs, mine *Baseline) *Baseline {
	out := theirs.clone()
	m := mine.clone()
	for sig, e := range m.Signatures {
		t, ok := out.Signatures[sig]
		if !ok {
			out.Signatures[sig] = e
			continue
		}
		out.Signatures[sig] = mergeEntry(t, e)
	}
	if m.Mutation != nil && (out.Mutation == nil || m.Mutation.Run >= out.Mutation.Run) {
		out.Mutation = m.Mutation
	}
	if m.Provenance != nil {
		out.Provenance = m.Provenance
	}
	return out
}

func mergeEntry(t, m *Entry) *Entry {
	r := *m
	r.Seeds = unionSeeds(t.Seeds, m.Seeds)
	r.SearchSeeds = unionSeeds(t.SearchSeeds, m.SearchSeeds)
	if t.Go != m.Go && t.Go != "" && m.Go != "" || t.Placement != m.Placement {
		// Seeds of two draws do not mix (Entry.Go, Entry.Placement): the later run's
		// draw wins.
		r.Seeds = append([]uint64(nil), m.Seeds...)
		if t.LastRun > m.LastRun {
			r.Seeds, r.Go, r.Placement = append([]uint64(nil), t.Seeds...), t.Go, t.Placement
		}
	}
	if earlier(t.FirstRun, m.FirstRun) {
		r.FirstSeen, r.FirstRun = t.FirstSeen, t.FirstRun
	}
	if t.LastRun > m.LastRun {
		r.LastSeen, r.LastRun, r.Reason, r.Kind = t.LastSeen, t.LastRun, t.Reason, t.Kind
		if len(t.Shrunk) > 0 {
			r.Shrunk = t.Shrunk
		}
	}
	if len(r.Shrunk) == 0 {
		r.Shrunk = t.Shrunk
	}
	if t.FixedRun > m.FixedRun {
		r.FixedIn, r.FixedRun = t.FixedIn, t.FixedRun
	}
	switch {
	case r.FixedRun > r.LastRun:
		r.Status = StatusFixed
	case r.FixedRun < r.LastRun || r.LastRun != 0:
		r.Status = StatusFailing
	default: // no run ids (local runs): mine decides
		r.Status = m.Status
	}
	if r.Status == StatusFailing {
		r.FixedIn, r.FixedRun = "", 0
	}
	return &r
}

// earlier reports whether run a came before run b; 0 is an unknown run, after all others.
func earlier(a, b int64) bool {
	if a == 0 {
		return false
	}
	return b == 0 || a < b
}

func sortSeeds(s []uint64) { sort.Slice(s, func(i, j int) bool { return s[i] < s[j] }) }

func unionSeeds(a, b []uint64) []uint64 {
	set := map[uint64]bool{}
	for _, s := range a {
		set[s] = true
	}
	for _, s := range b {
		set[s] = true
	}
	out := make([]uint64, 0, len(set))
	for s := range set {
		out = append(out, s)
	}
	sortSeeds(out)
	return out
}

// errConflict is returned by baselineStore.Save when the stored baseline changed since
// it was loaded.
var errConflict = errors.New("baseline changed since it was read")

// baselineStore keeps a baseline somewhere, with compare-and-swap: Load returns the
// baseline and an opaque version; Save writes only if the stored version is still that
// version, else it returns errConflict.
type baselineStore interface {
	// Name says where the baseline lives, for messages.
	Name() string
	// Load returns the stored baseline and its version. A missing baseline is an empty
	// one with version "". An unreadable one returns the version and a *corruptError.
	Load(ctx context.Context) (b *Baseline, version string, err error)
	// Save writes b if the stored version is still version.
	Save(ctx context.Context, b *Baseline, version string) error
}

// maxBaselineAttempts bounds compare-and-swap retries.
const maxBaselineAttempts = 5

// updateBaseline writes mine over the version the run loaded; when another run wrote in
// between, it reads the new baseline, merges (mergeBaselines) and tries again, up to 5
// attempts in all.
func updateBaseline(ctx context.Context, store baselineStore, version string, mine *Baseline) error {
	want := mine
	for attempt := 1; ; attempt++ {
		err := store.Save(ctx, want, version)
		if err == nil {
			return nil
		}
		if !errors.Is(err, errConflict) {
			return fmt.Errorf("write baseline %s: %w", store.Name(), err)
		}
		if attempt == maxBaselineAttempts {
			return fmt.Errorf("write baseline %s: still conflicting after %d attempts: %w", store.Name(), attempt, err)
		}
		theirs, v, err := store.Load(ctx)
		var ce *corruptError
		switch {
		case errors.As(err, &ce):
			theirs = newBaseline()
		case err != nil:
			return fmt.Errorf("write baseline %s: re-read after a conflict: %w", store.Name(), err)
		}
		want, version = mergeBaselines(theirs, mine), v
	}
}

// fileStore keeps the baseline in a local file, for any CI. Its version is the SHA-256
// of the file's bytes, so a write over a file changed since it was read is refused.
type fileStore struct {
	Path string
}

// Name returns the file path.
func (s fileStore) Name() string { return s.Path }

// Load reads the file; a missing file is an empty baseline.
func (s fileStore) Load(ctx context.Context) (*Baseline, string, error) {
	data, err := os.ReadFile(s.Path)
	if errors.Is(err, os.ErrNotExist) {
		return newBaseline(), "", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("read baseline: %w", err)
	}
	v := contentVersion(data)
	b, err := ParseBaseline(s.Path, data)
	return b, v, err
}

// Save writes the file if it still has version, durably and atomically: under a lock
// file (so that concurrent writers on this machine serialize their compare-and-swap), it
// writes a temporary file, fsyncs it, renames it over the baseline and fsyncs the
// directory, so that a crash leaves the old baseline or the new one, never an empty or
// missing file.
func (s fileStore) Save(ctx context.Context, b *Baseline, version string) error {
	data, err := b.marshal()
	if err != nil {
		return err
	}
	dir := filepath.Dir(s.Path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	unlock, err := lockFile(ctx, s.Path+".lock")
	if err != nil {
		return err
	}
	defer unlock()
	cur, err := os.ReadFile(s.Path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if version != "" {
			return errConflict
		}
	case err != nil:
		return err
	case contentVersion(cur) != version:
		return errConflict
	}
	tmp, err := os.CreateTemp(dir, ".baseline-*.json")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), s.Path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return syncDir(dir)
}

// syncDir makes a rename in dir durable. Windows cannot open a directory for syncing
// (and NTFS journals the rename itself).
func syncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// staleLock is how old a lock file may be before a writer takes it over (its owner
// died; a baseline write takes milliseconds).
const staleLock = 2 * time.Minute

// lockFile takes an exclusive lock by creating path with O_EXCL, waiting for another
// holder to release it; it returns the release. It works alike on every OS and file
// system, and a lock left by a killed writer is taken over once it is stale.
func lockFile(ctx context.Context, path string) (func(), error) {
	delay := time.Millisecond
	for {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err == nil {
			fmt.Fprintf(f, "%d\n", os.Getpid())
			f.Close()
			return func() { os.Remove(path) }, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("lock baseline: %w", err)
		}
		if st, err := os.Stat(path); err == nil && time.Since(st.ModTime()) > staleLock {
			os.Remove(path)
			continue
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("lock baseline: %w (held by %s)", ctx.Err(), path)
		case <-time.After(delay):
		}
		delay = min(2*delay, 50*time.Millisecond)
	}
}

func contentVersion(data []byte) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

// baselineLocation is a parsed baseline input.
type baselineLocation struct {
	File   string // a local file, or
	Branch string // a data branch, with
	Path   string // the file's path in it
}

// DefaultBaselinePath is the file's path on a data branch when the input names none.
const DefaultBaselinePath = "seedfall-baseline.json"

// parseBaselineLocation reads the baseline input: "" (none), "branch:NAME[:PATH]", or a
// local file path.
func parseBaselineLocation(s string) (baselineLocation, error) {
	rest, ok := strings.CutPrefix(s, "branch:")
	if !ok {
		return baselineLocation{File: s}, nil
	}
	name, path, _ := strings.Cut(rest, ":")
	if name == "" || strings.ContainsAny(name, " ~^:?*[\\") || strings.HasPrefix(name, "-") {
		return baselineLocation{}, fmt.Errorf("input baseline: %q does not name a branch (want branch:NAME or branch:NAME:PATH, e.g. branch:seedfall-baseline)", s)
	}
	if path == "" {
		path = DefaultBaselinePath
	}
	return baselineLocation{Branch: name, Path: strings.TrimPrefix(path, "/")}, nil
}
