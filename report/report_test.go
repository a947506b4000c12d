package report

import (
	"bytes"
	"encoding/xml"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/engine"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

const ms = int64(1e6)

// pwn is guest text that would set window.__pwned if any renderer let it become markup.
const pwn = `<script>window.__pwned=1</script>`

// fixture is a sweep with one signature of each status (and a second new one), listed
// out of order, with hostile guest text in reasons, traces, property and node names.
func fixture() *Data {
	crashMid := engine.Fault{AtNS: 427268 * 1000, Kind: engine.FaultCrash, Node: "server", MidOp: true, DiskOp: 56, Where: "write server/log.go:88"}
	crashRestart := engine.Fault{AtNS: 1705200 * 1000, Kind: engine.FaultCrash, Node: "server", RestartNS: 237389 * 1000}
	return &Data{
		Title: "seedfall · kvlog",
		Summary: Summary{
			Config: "seedfall.json", Seeds: "1-1000", Commit: "0123456789abcdef0123456789abcdef01234567",
			Ref: "refs/pull/42/merge", Event: "pull_request",
			Total: 1000, Passed: 991, Failed: 6, Liveness: 1, Horizon: 3,
			Checked: true, New: 2, Known: 1, Fixed: 1,
			Conclusion: "failure", ReportURL: "https://github.com/acme/kv/actions/runs/123",
			MutationScore: "6/7",
		},
		Groups: []Group{
			{
				Signature: "sig-0a1b2c3d4e5f", Status: StatusKnown, Kind: "linearizability",
				Reason:       "history not linearizable: k3 read v7 after v9 was acknowledged",
				Seeds:        []uint64{5, 6, 7, 300},
				FaultClasses: []string{"partition"},
				Shrunk:       []engine.Fault{{AtNS: 800 * ms, Kind: engine.FaultPartition, Node: "n1", Peers: []string{"n2", "n3"}, DurationNS: 900 * ms}},
				ShrinkNote:   "4 → 1 faults in 9 runs",
				Faults: []engine.Fault{
					{AtNS: 300 * ms, Kind: engine.FaultLatency, Node: "n2", LatencyNS: 20 * ms, DurationNS: 500 * ms},
					{AtNS: 800 * ms, Kind: engine.FaultPartition, Node: "n1", Peers: []string{"n2", "n3"}, DurationNS: 900 * ms},
					{AtNS: 1900 * ms, Kind: engine.FaultReset, Node: "n3"},
					{AtNS: 2100 * ms, Kind: engine.FaultPause, Node: "n2", DurationNS: 150 * ms},
				},
				Trace:     []string{"1.2s n1 | became leader term 3", "2.39s client#1 | read k3 -> v7 ]]> <![CDATA[ \x00\x1b[31m"},
				Replay:    "seedfall replay -c seedfall.json -seed 5 -faults sig-0a1b2c3d4e5f.faults.json",
				FirstSeen: "a1b2c3d", LastSeen: "0123456", AtNS: 2400 * ms,
			},
			{
				Signature: "sig-9f8e7d6c5b4a", Status: StatusNew, Kind: "workload-exit",
				Reason:       `client#1: acknowledged entry 27 lost: server now answers "VAL ` + pwn + `" </pre>` + pwn + " ``[x](javascript:window.__pwned=1)`` @octocat",
				Seeds:        []uint64{1, 9, 10, 11, 17, 42},
				FaultClasses: []string{"crash", "crash-mid-op", "partition"},
				Shrunk:       []engine.Fault{crashMid, crashRestart},
				ShrinkNote:   "26 → 2 faults in 41 runs",
				Faults: []engine.Fault{
					{AtNS: 120 * ms, Kind: engine.FaultLatency, Node: "client", LatencyNS: 5 * ms, DurationNS: 200 * ms},
					{AtNS: 292108 * 1000, Kind: engine.FaultPartition, Node: "server", Peers: []string{"client"}, DurationNS: 150 * ms},
					crashMid,
					{AtNS: 900 * ms, Kind: engine.FaultClockJump, Node: "client", JumpNS: -2000 * ms},
					{AtNS: 1100 * ms, Kind: engine.FaultFsyncEIO, Node: "server"},
					crashRestart,
				},
				Trace: []string{
					"0.427268s server | crash during disk op #56 (write server/log.go:88)",
					"0.430000s server#2 | open log: 3 records, tail 17 bytes",
					"1.100000s server#2 | fsync: EIO",
					"1.500000s client#1 | put k27=e141 ok",
					"1.705200s server#2 | killed",
					"1.942589s server#3 | open log: torn chunk at 4096 </pre>" + pwn,
					`1.950000s server#3 | <img src=x onerror="window.__pwned=1"> & done`,
					"2.000000s client#1 | get k27 -> \"VAL e141-1111111111111111111111\"",
				},
				Replay:    "seedfall replay -c seedfall.json -seed 1 -faults sig-9f8e7d6c5b4a.faults.json",
				FirstSeen: "0123456", LastSeen: "0123456", AtNS: 2000 * ms,
			},
			{
				Signature: "sig-112233445566", Status: StatusFixed, Kind: "always",
				Reason: "always: recovered log has no torn tail", Seeds: []uint64{88},
				Replay:    "seedfall replay -c seedfall.json -seed 88",
				FirstSeen: "deadbee", LastSeen: "a1b2c3d",
			},
			{
				Signature: "sig-aabbccddeeff", Status: StatusNew, Kind: "node-exit",
				Reason: "server#2 crashed: exit_code(2): panic: log not found", Seeds: []uint64{77},
				FaultClasses: []string{"clock_skew", "crash"},
				ShrinkNote:   "not shrunk: budget exhausted",
				Faults: []engine.Fault{
					{AtNS: 50 * ms, Kind: engine.FaultClockSkew, Node: "server", SkewPPM: 300},
					{AtNS: 400 * ms, Kind: engine.FaultCrash, Node: "server", RestartNS: 100 * ms},
				},
				Trace:  []string{"0.5s server#2 | panic: log not found", "\tgoroutine 1 [running]:"},
				Replay: "seedfall replay -c seedfall.json -seed 77",
				AtNS:   510 * ms,
			},
		},
		Properties: []Property{
			{Name: "recovery found a torn tail", Kind: "sometimes", Reached: 1000, Held: 406, Verdict: "ok"},
			{Name: "acknowledged writes survive restart", Kind: "always", Reached: 1000, Held: 994, Verdict: "FAIL"},
			{Name: "leader elected", Kind: "reachable", Reached: 1000, Held: 1000},
			{Name: "<b>corrupt</b> branch " + pwn, Kind: "unreachable", Reached: 12, Held: 12, Verdict: "ok"},
		},
		Mutants: []Mutant{
			{Name: "fsync is a no-op", Site: "fd_sync", Killed: true, Seed: 3},
			{Name: "fdatasync is a no-op", Site: "fd_datasync", Killed: true, Seed: 3},
			{Name: "directory fsync is a no-op", Site: "fd_sync(dir)", Killed: true, Seed: 14},
			{Name: "O_SYNC ignored", Site: "path_open", Killed: true, Seed: 2},
			{Name: "rename not atomic", Site: "path_rename", Killed: true, Seed: 40},
			{Name: "torn writes off", Site: "fd_write", Killed: true, Seed: 1},
			{Name: "fsync EIO keeps data durable", Site: "fd_sync", Killed: false},
		},
	}
}

// render runs one renderer into a byte slice.
func render(t *testing.T, f func(*bytes.Buffer) error) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := f(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./report -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test ./report -update rewrites it)\n%s", path, firstDiff(want, got))
	}
}

func firstDiff(want, got []byte) string {
	wl, gl := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return fmt.Sprintf("line %d:\nwant %q\n got %q", i+1, w, g)
		}
	}
	return ""
}

var renderers = []struct {
	name, golden string
	render       func(*bytes.Buffer, *Data) error
}{
	{"markdown", "report.md", func(b *bytes.Buffer, d *Data) error { return Markdown(b, d, CommentLimit) }},
	{"junit", "report.junit.xml", func(b *bytes.Buffer, d *Data) error { return JUnit(b, d) }},
	{"html", "report.html", func(b *bytes.Buffer, d *Data) error { return HTML(b, d) }},
}

func TestGolden(t *testing.T) {
	for _, r := range renderers {
		t.Run(r.name, func(t *testing.T) {
			got := render(t, func(b *bytes.Buffer) error { return r.render(b, fixture()) })
			golden(t, r.golden, got)
		})
	}
}

func TestDeterministic(t *testing.T) {
	for _, r := range renderers {
		t.Run(r.name, func(t *testing.T) {
			first := render(t, func(b *bytes.Buffer) error { return r.render(b, fixture()) })
			for range 5 {
				again := render(t, func(b *bytes.Buffer) error { return r.render(b, fixture()) })
				if !bytes.Equal(first, again) {
					t.Fatalf("two renders of the same data differ\n%s", firstDiff(first, again))
				}
			}
		})
	}
}

func TestGroupOrder(t *testing.T) {
	var got []string
	for _, g := range orderedGroups(fixture().Groups) {
		got = append(got, g.Signature)
	}
	want := []string{"sig-9f8e7d6c5b4a", "sig-aabbccddeeff", "sig-0a1b2c3d4e5f", "sig-112233445566"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("order = %v, want new (in input order), known, fixed: %v", got, want)
	}
	html := string(render(t, func(b *bytes.Buffer) error { return HTML(b, fixture()) }))
	last := -1
	for _, sig := range want {
		i := strings.Index(html, `<h2><code>`+sig)
		if i < last {
			t.Errorf("card %s is out of order in the HTML", sig)
		}
		last = i
	}
}

// bigData has n signatures, each as long as the Markdown lets one be.
func bigData(n int) *Data {
	d := fixture()
	d.Groups = nil
	for i := range n {
		var seeds []uint64
		for s := range 60 {
			seeds = append(seeds, uint64(i*1000+s*2))
		}
		var shrunk []engine.Fault
		for k := range 20 {
			shrunk = append(shrunk, engine.Fault{AtNS: int64(k) * ms, Kind: engine.FaultCrash, Node: "server", DiskOp: int64(k + 1), Where: "write " + strings.Repeat("x", 300)})
		}
		d.Groups = append(d.Groups, Group{
			Signature: fmt.Sprintf("sig-%012x", i), Status: []Status{StatusNew, StatusKnown, StatusFixed}[i%3],
			Kind: "workload-exit", Reason: strings.Repeat("lost write "+pwn, 50), Seeds: seeds,
			FaultClasses: []string{"crash", "partition"}, Shrunk: shrunk, ShrinkNote: "40 → 20 faults in 99 runs",
			Replay: fmt.Sprintf("seedfall replay -c seedfall.json -seed %d -faults sig-%012x.faults.json", i*1000, i),
			AtNS:   int64(i) * ms,
		})
	}
	return d
}

var moreNote = regexp.MustCompile(`… (\d+) more signatures?, see the \[full report\]\(https://github\.com/acme/kv/actions/runs/123\)\.`)

func TestMarkdownLimit(t *testing.T) {
	for _, tc := range []struct {
		name   string
		groups int
		limit  int
	}{
		{"500 groups in a comment", 500, CommentLimit},
		{"500 groups in 10k", 500, 10000},
		{"30 groups in 4k", 30, 4000},
		{"3 groups fit", 3, CommentLimit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := bigData(tc.groups)
			out := string(render(t, func(b *bytes.Buffer) error { return Markdown(b, d, tc.limit) }))
			if len(out) >= tc.limit {
				t.Fatalf("markdown is %d bytes, limit %d", len(out), tc.limit)
			}
			shown := strings.Count(out, "\n### ")
			left := 0
			if m := moreNote.FindStringSubmatch(out); m != nil {
				left, _ = strconv.Atoi(m[1])
			} else if shown < tc.groups {
				t.Fatalf("%d of %d signatures shown and no note says how many were left out", shown, tc.groups)
			}
			if shown+left != tc.groups {
				t.Errorf("shown %d + left out %d != %d signatures", shown, left, tc.groups)
			}
			if tc.groups == 500 && shown == 0 {
				t.Errorf("no signature fits")
			}
			// The kept ones are the first in report order: new before known before fixed.
			if strings.Contains(out, "### FIXED") && !strings.Contains(out, "### KNOWN") {
				t.Errorf("a fixed signature was kept while every known one was dropped")
			}
			t.Logf("%d bytes, %d shown, %d left out", len(out), shown, left)
		})
	}
	t.Run("limit too small for the summary", func(t *testing.T) {
		var b bytes.Buffer
		if err := Markdown(&b, fixture(), 100); err == nil {
			t.Errorf("Markdown with limit 100 succeeded with %d bytes; want an error", b.Len())
		}
	})
}

func TestMarkdownGuestTextStaysText(t *testing.T) {
	var md bytes.Buffer
	if err := Markdown(&md, fixture(), 0); err != nil {
		t.Fatal(err)
	}
	out, err := renderMarkdown(md.String())
	if err != nil {
		t.Fatal(err)
	}
	html := strings.ToLower(string(out))
	for _, bad := range []string{"<script", "<img", "href=\"javascript", "<b>"} {
		if strings.Contains(html, bad) {
			t.Errorf("goldmark output contains %q", bad)
		}
	}
	if !strings.Contains(html, "&lt;script&gt;window.__pwned=1&lt;/script&gt;") {
		t.Errorf("guest text is not shown escaped in the rendered Markdown")
	}
	// Every guest reason is in a code span whose fence no backtick run can close.
	if !strings.Contains(md.String(), "```client#1: acknowledged entry 27 lost") {
		t.Errorf("the reason with a double backtick is not fenced with three:\n%s", md.String())
	}
}

func TestCodeSpanAndFence(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain", "`plain`"},
		{"a`b", "``a`b``"},
		{"`x`", "`` `x` ``"},
		{"  ", "` `"},
		{"two\nlines", "`two lines`"},
	} {
		if got := codeSpan(tc.in); got != tc.want {
			t.Errorf("codeSpan(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := fenced("sh", []string{"echo ```"}); got != "````sh\necho ```\n````\n" {
		t.Errorf("fenced = %q", got)
	}
}

func TestFormatSeeds(t *testing.T) {
	for _, tc := range []struct {
		seeds []uint64
		max   int
		want  string
	}{
		{nil, 0, ""},
		{[]uint64{9}, 0, "9"},
		{[]uint64{1, 2, 3, 9, 17, 18}, 0, "1-3, 9, 17-18"},
		{[]uint64{1, 3, 5, 7, 8}, 2, "1, 3 … and 3 more"},
	} {
		if got := formatSeeds(tc.seeds, tc.max); got != tc.want {
			t.Errorf("formatSeeds(%v, %d) = %q, want %q", tc.seeds, tc.max, got, tc.want)
		}
	}
}

func TestJUnitParses(t *testing.T) {
	out := render(t, func(b *bytes.Buffer) error { return JUnit(b, fixture()) })
	var suite struct {
		XMLName  xml.Name `xml:"testsuite"`
		Tests    int      `xml:"tests,attr"`
		Failures int      `xml:"failures,attr"`
		Errors   int      `xml:"errors,attr"`
		Cases    []struct {
			Name    string `xml:"name,attr"`
			Failure *struct {
				Message string `xml:"message,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
		} `xml:"testcase"`
	}
	if err := xml.Unmarshal(out, &suite); err != nil {
		t.Fatalf("JUnit output does not parse: %v", err)
	}
	// 4 signatures + passed seeds + determinism.
	if suite.Tests != 6 || len(suite.Cases) != 6 {
		t.Errorf("tests = %d, cases = %d, want 6", suite.Tests, len(suite.Cases))
	}
	if suite.Failures != 3 {
		t.Errorf("failures = %d, want 3 (2 new + 1 known; fixed passes)", suite.Failures)
	}
	failed := map[string]bool{}
	for _, c := range suite.Cases {
		sig, _, _ := strings.Cut(c.Name, " ")
		failed[sig] = c.Failure != nil
	}
	for sig, want := range map[string]bool{"sig-9f8e7d6c5b4a": true, "sig-aabbccddeeff": true, "sig-0a1b2c3d4e5f": true, "sig-112233445566": false} {
		if failed[sig] != want {
			t.Errorf("%s failed = %v, want %v", sig, failed[sig], want)
		}
	}
	c := suite.Cases[0]
	if c.Failure == nil || !strings.Contains(c.Failure.Message, pwn) || !strings.Contains(c.Failure.Text, "seedfall replay -c seedfall.json -seed 1") {
		t.Errorf("first failure does not carry the reason and the replay command: %+v", c.Failure)
	}
	if c := suite.Cases[2]; c.Failure == nil || !strings.Contains(c.Failure.Text, "v7 ]]> <![CDATA[") {
		t.Errorf("a trace line holding ]]> did not survive the CDATA section: %+v", c.Failure)
	}
	if suite.Cases[4].Name != JUnitPassedName {
		t.Errorf("passing case = %q, want %q (a name that does not change with the counts)", suite.Cases[4].Name, JUnitPassedName)
	}
}

func TestPropertyTable(t *testing.T) {
	var b strings.Builder
	PropertyTable(&b, []Property{
		{Name: "recovery found a torn tail", Kind: "sometimes", Reached: 1000, Held: 406, Verdict: "ok"},
		{Name: "acked writes survive", Kind: "always", Reached: 1000, Held: 994},
		{Name: "new\nline", Kind: "sometimes", Reached: 7, Held: 0},
	})
	want := "" +
		"property                    seeds reached  seeds true  always\n" +
		"acked writes survive                 1000         994  FAIL\n" +
		"\n" +
		"property                    seeds reached  seeds true  sometimes\n" +
		"new line                                7           0  FAIL\n" +
		"recovery found a torn tail           1000         406  ok\n"
	if b.String() != want {
		t.Errorf("PropertyTable:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	PropertyTable(&b, nil)
	if b.Len() != 0 {
		t.Errorf("PropertyTable(nil) = %q, want nothing", b.String())
	}
}

func TestHTMLEscapesGuestText(t *testing.T) {
	html := string(render(t, func(b *bytes.Buffer) error { return HTML(b, fixture()) }))
	if n := strings.Count(strings.ToLower(html), "<script"); n != 1 {
		t.Errorf("%d <script elements, want only the report's own", n)
	}
	for _, bad := range []string{pwn, "<img src=x", "<b>corrupt", "href=\"javascript"} {
		if strings.Contains(html, bad) {
			t.Errorf("HTML contains guest markup %q", bad)
		}
	}
	if !strings.Contains(html, "&lt;/pre&gt;&lt;script&gt;window.__pwned=1&lt;/script&gt;") {
		t.Errorf("the trace's </pre><script> is not shown escaped")
	}
	for _, ext := range []string{"http://", "https://cdn", "<link rel=\"stylesheet\"", "src=\"http"} {
		if strings.Contains(html, ext) {
			t.Errorf("HTML refers to something outside the file: %q", ext)
		}
	}
	if !strings.Contains(html, "Content-Security-Policy") {
		t.Errorf("no Content-Security-Policy")
	}
}

func TestHTMLEmpty(t *testing.T) {
	// A clean sweep renders too: no groups, properties or mutants.
	d := &Data{Summary: Summary{Total: 10, Passed: 10, Conclusion: "success"}}
	for _, r := range renderers {
		render(t, func(b *bytes.Buffer) error { return r.render(b, d) })
	}
}
