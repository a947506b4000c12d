package engine

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestSignatureOneBugOneSignature: every message with numbers that a node or workload of
// the examples can print (each Go string literal there with a %d or %x verb) normalizes
// to one text whatever the numbers are, narrow or wide, decimal or hex, so one bug keeps
// one signature on every seed. Different messages stay apart (the negative control).
func TestSignatureOneBugOneSignature(t *testing.T) {
	lit := regexp.MustCompile(`"((?:[^"\\\n]|\\.)*%[0-9]*[dxX](?:[^"\\\n]|\\.)*)"`)
	verb := regexp.MustCompile(`%[-+# 0-9.]*[a-zA-Z%]`)
	var formats []string
	seen := map[string]bool{}
	err := filepath.WalkDir(filepath.Join("..", "examples"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range lit.FindAllStringSubmatch(string(data), -1) {
			f, err := strconv.Unquote(`"` + m[1] + `"`)
			if err != nil || seen[f] {
				continue
			}
			seen[f] = true
			formats = append(formats, f)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(formats) < 20 {
		t.Fatalf("found %d message formats with numbers in examples/, want the examples' messages", len(formats))
	}
	// The values one seed or another prints for a number: narrow, 7 and 8 digits (the
	// old split), 19 digits, and for %x a hash that happens to be all digits.
	decimals := []string{"3", "1234567", "12345678", "1764600000123456789"}
	hexes := []string{"1f", "3fa9c2d1", "12345678", "0c1d2e3f4a5b"}
	fill := func(format string, pick int) string {
		i := 0
		return verb.ReplaceAllStringFunc(format, func(v string) string {
			i++
			switch v[len(v)-1] {
			case 'd':
				return decimals[(pick+i)%len(decimals)]
			case 'x', 'X':
				return hexes[(pick+i)%len(hexes)]
			case '%':
				return "%"
			case 'q':
				return `"v0"`
			}
			return "word"
		})
	}
	norms := map[string]string{}
	for _, f := range formats {
		want := NormalizeReason(fill(f, 0))
		for pick := 1; pick < len(decimals)*len(hexes); pick++ {
			if got := NormalizeReason(fill(f, pick)); got != want {
				t.Errorf("format %q: %q normalizes to %q, %q to %q: one bug, two signatures", f, fill(f, 0), want, fill(f, pick), got)
				break
			}
		}
		norms[f] = want
	}
	t.Logf("%d message formats of the examples", len(formats))
	// Negative control: messages that differ in words stay apart.
	a := NormalizeReason("acknowledged write lost: k1=v2, server now answers \"x\"")
	b := NormalizeReason("read returned a torn record at offset 12345678")
	if a == b {
		t.Errorf("two different messages normalize alike: %q", a)
	}
	for _, pair := range [][2]string{
		{"checksum 3fa9c2d1 does not match", "checksum 12345678 does not match"},
		{"offset 1234567 past the end", "offset 12345678 past the end"},
		{"missing key a3", "missing key a1234567"},
	} {
		if x, y := NormalizeReason(pair[0]), NormalizeReason(pair[1]); x != y {
			t.Errorf("%q -> %q but %q -> %q", pair[0], x, pair[1], y)
		}
	}
	if fmt.Sprint(norms) == "" {
		t.Fatal("no formats")
	}
}
