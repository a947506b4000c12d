// Command threeop is the negative control of faults.crash_placement: a node whose every
// request is three disk ops, and whose bug needs a crash inside the third.
//
// Request i (every 5-25 ms):
//
//  1. write its number to /data/seq (8 bytes, no sync),
//  2. fsync /data/seq,
//  3. write record i (1024 bytes: two 512-byte sectors) at i*1024 of /data/log, which
//     is opened O_SYNC, so that every record is durable once its write returns.
//
// At start it reads the log back. A record cut between its sectors, which only a
// crash inside the third op with torn writes leaves (ops 1 and 2 never touch the log,
// and every finished record is synced), makes it exit 1 with "threeop: torn record":
// that is the bug. With -fixed it truncates the torn record instead, as a log should.
package main

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"time"
)

const recSize = 1024

func record(i int64) []byte {
	b := make([]byte, recSize)
	copy(b, "REC1")
	binary.LittleEndian.PutUint64(b[4:], uint64(i))
	for j := 16; j < recSize; j++ {
		b[j] = byte(i)
	}
	binary.LittleEndian.PutUint32(b[12:], crc32.ChecksumIEEE(b[16:]))
	return b
}

func valid(b []byte, i int64) bool {
	return len(b) == recSize && bytes.Equal(b, record(i))
}

func main() {
	fixed := flag.Bool("fixed", false, "truncate a torn record instead of refusing to start")
	flag.Parse()
	if err := os.MkdirAll("/data", 0o755); err != nil {
		fail(err)
	}
	data, err := os.ReadFile("/data/log")
	if err != nil && !os.IsNotExist(err) {
		fail(err)
	}
	var n int64
	for ; (n+1)*recSize <= int64(len(data)); n++ {
		if !valid(data[n*recSize:(n+1)*recSize], n) {
			break
		}
	}
	if n*recSize < int64(len(data)) {
		if !*fixed {
			fmt.Printf("threeop: torn record %d (%d bytes of the log past the last whole record)\n", n, int64(len(data))-n*recSize)
			os.Exit(1)
		}
		if err := os.Truncate("/data/log", n*recSize); err != nil {
			fail(err)
		}
	}
	fmt.Printf("threeop: %d records\n", n)
	seq, err := os.OpenFile("/data/seq", os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		fail(err)
	}
	log, err := os.OpenFile("/data/log", os.O_CREATE|os.O_WRONLY|os.O_SYNC, 0o644)
	if err != nil {
		fail(err)
	}
	var num [8]byte
	for i := n; ; i++ {
		// Inside the simulator math/rand's top-level functions follow the seed.
		time.Sleep(time.Duration(5+rand.IntN(21)) * time.Millisecond)
		binary.LittleEndian.PutUint64(num[:], uint64(i))
		if _, err := seq.WriteAt(num[:], 0); err != nil {
			fail(err)
		}
		if err := seq.Sync(); err != nil {
			fail(err)
		}
		if _, err := log.WriteAt(record(i), i*recSize); err != nil {
			fail(err)
		}
	}
}

func fail(err error) {
	fmt.Println("threeop:", err)
	os.Exit(2)
}
