package platform

import (
	"os/exec"
	"strings"
)

// goroot is the go command's GOROOT.
func goroot() string {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
