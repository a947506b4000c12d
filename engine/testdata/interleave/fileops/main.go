// Command fileops acknowledges a record before its fsync returned, the race of a
// commit loop that answers its caller before it syncs: for each request of the client
// goroutine, the writer goroutine appends a record, hands it to the acknowledger over a
// channel, then fsyncs the file; the acknowledger answers the client.
// On Linux the acknowledger can run while the writer is inside fsync(2) and see the
// record before it is durable. Go's wasip1 runtime runs a syscall without switching
// goroutines, so the fsync always finishes first and the program passes on every seed,
// with or without plain interleave; with {"interleave": {"file_ops": true}} the host may
// run the acknowledger before the fsync, and the program exits 1.
//
// With -fixed the writer hands the record over only after the fsync returned (the
// negative control: no interleaving acknowledges an unsynced record).
package main

import (
	"flag"
	"fmt"
	"os"
)

const records = 8

func main() {
	fixed := flag.Bool("fixed", false, "hand a record to the acknowledger only after its fsync")
	flag.Parse()
	f, err := os.OpenFile("log", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		fmt.Println(err)
		os.Exit(2)
	}
	synced := 0 // written by the writer only, after each fsync
	reqs, written, acks := make(chan int), make(chan int), make(chan int)
	ackerReady, writerReady := make(chan struct{}), make(chan struct{})
	go func() { // the acknowledger: answers each request once the writer handed it over
		close(ackerReady)
		for n := range written {
			if synced < n {
				fmt.Printf("record %d acknowledged before its fsync returned (synced up to %d)\n", n, synced)
				os.Exit(1)
			}
			acks <- n
		}
	}()
	<-ackerReady
	go func() { // the writer: appends each request's record and fsyncs it
		close(writerReady)
		for n := range reqs {
			if _, err := f.Write([]byte(fmt.Sprintf("record %d\n", n))); err != nil {
				fmt.Println(err)
				os.Exit(2)
			}
			if !*fixed {
				written <- n
			}
			if err := f.Sync(); err != nil {
				fmt.Println(err)
				os.Exit(2)
			}
			synced = n
			if *fixed {
				written <- n
			}
		}
	}()
	<-writerReady
	for n := 1; n <= records; n++ { // the client: one request at a time
		reqs <- n
		<-acks
	}
	fmt.Printf("%d records, each acknowledged after its fsync\n", records)
}
