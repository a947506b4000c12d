package templates

import "testing"

func TestFSHoldsTheReportFiles(t *testing.T) {
	for _, name := range []string{"report.html.tmpl", "report.css", "report.js"} {
		b, err := FS.ReadFile(name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
		} else if len(b) == 0 {
			t.Errorf("%s is empty", name)
		}
	}
}
