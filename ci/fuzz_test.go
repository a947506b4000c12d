package ci

import (
	"errors"
	"testing"
)

// FuzzParseBaseline: a corrupted baseline (a bad merge, a truncated write, a hostile
// pull request editing the data branch) is a *corruptError or a baseline that writes and
// reads back the same, never a panic.
//
//	go test ./ci -run '^$' -fuzz FuzzParseBaseline -fuzztime 1m
func FuzzParseBaseline(f *testing.F) {
	for _, s := range []string{
		`{"version": 1, "signatures": {"sig-1": {"reason": "lost", "seeds": [3, 1], "first_seen": "a", "last_seen": "b", "status": "failing"}}}`,
		`{"version": 1, "signatures": {"sig-1": null}}`,
		`{"version": 1, "signatures": {}, "mutation": {"score": "1/2", "mutants": [{"name": "fsync-noop", "killed": true}]}}`,
		`{"version": 2}`, `{"version": 1, "signatures": {"s": {"seeds": [-1]}}}`, `{`, ``, `null`, `[]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := ParseBaseline("baseline.json", data)
		if err != nil {
			var ce *corruptError
			if !errors.As(err, &ce) {
				t.Fatalf("error %v is not a *corruptError", err)
			}
			return
		}
		out, err := b.marshal()
		if err != nil {
			t.Fatalf("an accepted baseline does not marshal: %v", err)
		}
		c, err := ParseBaseline("again", out)
		if err != nil {
			t.Fatalf("a written baseline does not read back: %v\n%s", err, out)
		}
		again, _ := c.marshal()
		if string(again) != string(out) {
			t.Fatalf("baseline changed on a round trip:\n%s\n%s", out, again)
		}
		mergeBaselines(b, c) // must not panic
	})
}
