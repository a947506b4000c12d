package build

import "testing"

func FuzzPatch(f *testing.F) {
	f.Add([]byte("--- a/x/y.go\n+++ b/x/y.go\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"), []byte("a\nb\nc\n"))
	f.Add([]byte("+++ b/x/y.go\n@@ -0,0 +1 @@\n+new\n"), []byte(""))
	f.Add([]byte("@@ -1 +1 @@\n-a\n+b\n"), []byte("a\n"))
	f.Add([]byte("+++ b/x/y.go\n@@ -5,2 +5,2 @@\n-q\n+r\n"), []byte("a\nb\n"))
	f.Add([]byte("+++ b/x/y.go\n@@ x y @@\n"), []byte("a\n"))
	f.Fuzz(func(t *testing.T, diff, src []byte) {
		if len(src) > 1<<16 || len(diff) > 1<<16 {
			return
		}
		files, err := parseUnifiedDiff(diff)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an empty error")
			}
			return
		}
		for _, fl := range files {
			out, err := applyHunks(src, fl.hunks)
			if err == nil && len(fl.hunks) == 0 && string(out) != string(src) {
				t.Fatalf("no hunks changed the file")
			}
		}
	})
}
