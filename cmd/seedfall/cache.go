package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"sort"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/internal/cli"
)

// cmdCache prints where the cache is and how big each part of it is; `cache prune`
// shrinks it. Nothing in it is needed: what is removed is built again on next use.
func cmdCache(_ context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "prune" {
		return cmdCachePrune(args[1:], stdout, stderr)
	}
	fs := newFlags("cache", stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: seedfall cache            print the cache's folder and size")
		fmt.Fprintln(stderr, "       seedfall cache prune [-max-size 1GB]   remove least recently used files")
	}
	if code, stop := parseFlags(fs, args); stop {
		return code
	}
	dir := engine.CacheDir()
	files, err := cli.CacheFiles(dir)
	if err != nil {
		fmt.Fprintf(stderr, "seedfall cache: %v\n", err)
		return exitUsage
	}
	parts := map[string]int64{}
	var total int64
	for _, f := range files {
		rel, _ := filepath.Rel(dir, f.Path)
		parts[firstElem(rel)] += f.Size
		total += f.Size
	}
	fmt.Fprintf(stdout, "%s: %s in %d files\n", dir, cli.FormatSize(total), len(files))
	names := sortedKeys(parts)
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(stdout, "  %-8s %s\n", n, cli.FormatSize(parts[n]))
	}
	return exitPass
}

func cmdCachePrune(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("cache prune", stderr)
	maxSize := fs.String("max-size", "0", "keep the most recently used files up to this `size` (500MB, 2GiB; 0 empties the cache)")
	if code, stop := parseFlags(fs, args); stop {
		return code
	}
	max, err := cli.ParseSize(*maxSize)
	if err != nil {
		fmt.Fprintf(stderr, "seedfall cache prune: -max-size: %v\n", err)
		return exitUsage
	}
	dir := engine.CacheDir()
	freed, n, err := cli.PruneCache(dir, max)
	if err != nil {
		fmt.Fprintf(stderr, "seedfall cache prune: %v\n", err)
		return exitUsage
	}
	fmt.Fprintf(stdout, "removed %d files (%s) from %s\n", n, cli.FormatSize(freed), dir)
	return exitPass
}

func firstElem(rel string) string {
	for i := 0; i < len(rel); i++ {
		if rel[i] == filepath.Separator {
			return rel[:i]
		}
	}
	return "."
}
