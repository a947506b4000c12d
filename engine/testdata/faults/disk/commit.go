package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"time"
)

// The commit mode, the negative control of seedfall crashes (engine/crashstates_test.go),
// lives in this file and is dispatched from init so that main.go's lines, which the
// scenario traces quote, stay where they are.
//
//	commit     (every incarnation) check, then run transactions -n times, 20ms
//	           apart: append "txn NNNN\n" to /data and fsync it, then write NNNN
//	           over /commit and fsync it. Transaction -unsafe (if >= 0) fsyncs /data
//	           only after /commit: a crash between the two (or before the /commit
//	           fsync, keeping /commit and not /data) commits a record that is gone.
//	           The check exits 1 ("LOST ...") when /commit names more records than
//	           /data holds.
func init() {
	fs := flag.NewFlagSet("disk", flag.ContinueOnError)
	fs.SetOutput(new(bytes.Buffer))
	mode := fs.String("mode", "", "")
	n := fs.Int("n", 20, "")
	unsafe := fs.Int("unsafe", -1, "")
	fs.Duration("delay", 0, "")
	if fs.Parse(os.Args[1:]) != nil || *mode != "commit" {
		return // another mode: main parses its own flags
	}
	commitLoop(*n, *unsafe)
}

func commitLoop(n, unsafe int) {
	last := -1
	if b, err := os.ReadFile("/commit"); err == nil && len(b) > 0 {
		fmt.Sscanf(string(b), "%d", &last)
	}
	data, _ := os.ReadFile("/data")
	if recs := bytes.Count(data, []byte("\n")); recs < last+1 {
		fmt.Printf("LOST commit names txn %d, /data holds %d records\n", last, recs)
		os.Exit(1)
	}
	fmt.Printf("ready at txn %d\n", last)
	df := must(os.OpenFile("/data", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644))
	for i := last + 1; i < n; i++ {
		time.Sleep(20 * time.Millisecond)
		must(df.Write([]byte(fmt.Sprintf("txn %04d\n", i))))
		if i != unsafe {
			try(df.Sync())
		}
		cf := must(os.OpenFile("/commit", os.O_CREATE|os.O_WRONLY, 0o644))
		must(cf.WriteAt([]byte(fmt.Sprintf("%04d", i)), 0))
		try(cf.Sync())
		try(cf.Close())
		if i == unsafe {
			try(df.Sync()) // THE BUG: the data is synced after the commit that names it
		}
	}
	fmt.Println("done")
	sleepForever()
}
