// Package cachedir says where seedfall keeps its cache: built modules, wazero's
// compilation cache, the overlays and coverage meta-data. The engine's build and the
// commands (cache, cache prune) read it from here alone.
package cachedir

import (
	"os"
	"path/filepath"
)

// Dir is $SEEDFALL_CACHE, else seedfall under the user cache directory (the temporary
// directory when there is none).
func Dir() string {
	if d := os.Getenv("SEEDFALL_CACHE"); d != "" {
		return d
	}
	d, err := os.UserCacheDir()
	if err != nil {
		d = os.TempDir()
	}
	return filepath.Join(d, "seedfall")
}
