// Command pathops acknowledges a record before the rename that publishes it returned:
// for each request of the client goroutine, the writer goroutine writes the record to a
// temporary file and fsyncs it, hands it to the acknowledger over a channel, then
// renames the file into place; the acknowledger answers the client. On Linux the
// acknowledger can run while the writer is inside rename(2). Go's wasip1 runtime runs
// the syscall without switching goroutines; {"interleave": {"file_ops": true}} puts a
// scheduling point before each path operation (open, mkdir, unlink, rmdir, rename,
// link, symlink), so the host may run the acknowledger first, and the program exits 1.
//
// With -fixed the writer hands the record over only after the rename returned (the
// negative control).
package main

import (
	"flag"
	"fmt"
	"os"
)

const records = 8

func main() {
	fixed := flag.Bool("fixed", false, "hand a record to the acknowledger only after its rename")
	flag.Parse()
	renamed := 0 // written by the writer only, after each rename
	reqs, written, acks := make(chan int), make(chan int), make(chan int)
	ackerReady, writerReady := make(chan struct{}), make(chan struct{})
	go func() { // the acknowledger
		close(ackerReady)
		for n := range written {
			if renamed < n {
				fmt.Printf("record %d acknowledged before its rename returned (renamed up to %d)\n", n, renamed)
				os.Exit(1)
			}
			acks <- n
		}
	}()
	<-ackerReady
	go func() { // the writer
		close(writerReady)
		for n := range reqs {
			tmp := fmt.Sprintf("rec-%d.tmp", n)
			f, err := os.Create(tmp)
			if err == nil {
				_, err = f.Write([]byte(fmt.Sprintf("record %d\n", n)))
			}
			if err == nil {
				err = f.Sync()
			}
			if err == nil {
				err = f.Close()
			}
			if err != nil {
				fmt.Println(err)
				os.Exit(2)
			}
			if !*fixed {
				written <- n
			}
			if err := os.Rename(tmp, fmt.Sprintf("rec-%d", n)); err != nil {
				fmt.Println(err)
				os.Exit(2)
			}
			renamed = n
			if *fixed {
				written <- n
			}
		}
	}()
	<-writerReady
	for n := 1; n <= records; n++ {
		reqs <- n
		<-acks
	}
	fmt.Printf("%d records, each acknowledged after its rename\n", records)
}
