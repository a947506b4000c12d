package mcpserver

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
)

// resolve turns a path argument into an absolute path inside root, following symlinks.
// Relative paths are relative to root. A path that leaves root, lexically ("..",
// an absolute path elsewhere) or through a symlink, is refused: an agent must not read
// or build files the user did not put in front of it.
func resolve(root, what, p string) (string, error) {
	if strings.TrimSpace(p) == "" {
		return "", fmt.Errorf("%s path is empty: give a file inside the working directory %s, e.g. seedfall.json", what, root)
	}
	abs := p
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(root, abs)
	}
	abs = filepath.Clean(abs)
	if !within(root, abs) {
		return "", outside(root, what, p)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("%s %q: no such file in the working directory %s", what, p, root)
		}
		return "", fmt.Errorf("%s %q: %w", what, p, err)
	}
	if !within(root, real) {
		return "", outside(root, what, p)
	}
	return real, nil
}

func outside(root, what, p string) error {
	return fmt.Errorf("%s path %q is outside the working directory %s: give a path inside it (relative paths are resolved against it)", what, p, root)
}

// within reports whether p is root or below it; both are clean absolute paths.
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return false
	}
	return rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// display is p relative to root, for results an agent passes back as arguments.
func display(root, p string) string {
	rel, err := filepath.Rel(root, p)
	if err != nil || !within(root, p) {
		return p
	}
	return filepath.ToSlash(rel)
}
