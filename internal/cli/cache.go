package cli

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// CacheFile is one file of seedfall's cache.
type CacheFile struct {
	Path    string
	Size    int64
	ModTime int64 // Unix nanoseconds: when it was written or last reused
}

// CacheFiles lists the regular files under dir, least recently used first (ties by
// path). A missing dir is an empty cache.
func CacheFiles(dir string) ([]CacheFile, error) {
	var files []CacheFile
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) && p == dir {
				return filepath.SkipDir
			}
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil // removed meanwhile
		}
		files = append(files, CacheFile{Path: p, Size: info.Size(), ModTime: info.ModTime().UnixNano()})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read cache %s: %w", dir, err)
	}
	sort.Slice(files, func(i, j int) bool {
		if files[i].ModTime != files[j].ModTime {
			return files[i].ModTime < files[j].ModTime
		}
		return files[i].Path < files[j].Path
	})
	return files, nil
}

// PruneCache removes the least recently used files under dir until what is left takes
// at most maxBytes (0 empties it), then the folders left empty. It returns the bytes
// and files removed. Builds and compiled modules that are removed are made again on
// next use.
func PruneCache(dir string, maxBytes int64) (freed int64, removed int, err error) {
	files, err := CacheFiles(dir)
	if err != nil {
		return 0, 0, err
	}
	var total int64
	for _, f := range files {
		total += f.Size
	}
	for _, f := range files {
		if total <= maxBytes {
			break
		}
		if err := os.Remove(f.Path); err != nil && !os.IsNotExist(err) {
			return freed, removed, fmt.Errorf("prune cache: %w", err)
		}
		total -= f.Size
		freed += f.Size
		removed++
	}
	removeEmptyDirs(dir)
	return freed, removed, nil
}

// removeEmptyDirs removes the empty folders below dir, deepest first; dir stays.
func removeEmptyDirs(dir string) {
	var dirs []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && p != dir {
			dirs = append(dirs, p)
		}
		return nil
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		os.Remove(dirs[i]) // fails, as it should, on a folder that is not empty
	}
}

// ParseSize reads a size such as 500MB, 2GiB, 1.5G or 1048576 (bytes).
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	units := []struct {
		suffix string
		mult   float64
	}{
		{"KIB", 1 << 10}, {"MIB", 1 << 20}, {"GIB", 1 << 30}, {"TIB", 1 << 40},
		{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
		{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40}, {"B", 1},
	}
	mult := 1.0
	up := strings.ToUpper(t)
	for _, u := range units {
		if strings.HasSuffix(up, u.suffix) {
			mult, t = u.mult, strings.TrimSpace(t[:len(t)-len(u.suffix)])
			break
		}
	}
	n, err := strconv.ParseFloat(t, 64)
	if err != nil || n < 0 || n*mult > 1<<62 {
		return 0, fmt.Errorf("size %q: want a number of bytes or one with a unit (500MB, 2GiB)", s)
	}
	return int64(n * mult), nil
}

// FormatSize prints bytes as a person reads them: 2.7 GB, 512 kB, 80 B.
func FormatSize(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.1f GB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.0f kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%d B", n)
}
