package main

// Mode readback (every incarnation): first read back /data/rb as the last life left it,
// then write -n 512-byte records (record i at i*512, its bytes a pattern of i), fsync
// each and read each back; print the outcomes counted:
//
//	readback life=L before: ok= eio= wrong= / after: ok= eio= wrong= werr=
//
// (ok: the bytes written, eio: the read failed with EIO, wrong: other bytes or cut short
// by the end of the file, werr: the write or fsync failed). It is dispatched from init,
// so that main.go's line numbers, which other tests' traces name, stay put.

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"syscall"
)

func init() {
	fs := flag.NewFlagSet("readback", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	mode := fs.String("mode", "", "")
	n := fs.Int("n", 20, "")
	fs.Duration("delay", 0, "")
	if err := fs.Parse(os.Args[1:]); err != nil || *mode != "readback" {
		return
	}
	readback(*n)
}

// record is readback's record i: 512 bytes no two records share.
func record(i int) []byte {
	b := make([]byte, 512)
	for j := range b {
		b[j] = byte('a' + (i+j)%26)
	}
	copy(b, fmt.Sprintf("rec%04d|", i))
	return b
}

func readback(n int) {
	try(os.MkdirAll("/data", 0o755))
	f := must(os.OpenFile("/data/rb", os.O_CREATE|os.O_RDWR, 0o644))
	count := func(i int) string {
		got := make([]byte, 512)
		_, err := f.ReadAt(got, int64(i)*512)
		switch {
		case errors.Is(err, syscall.EIO):
			return "eio"
		case err != nil && !errors.Is(err, io.EOF):
			fmt.Printf("read %d: %v\n", i, err)
			return "other"
		case !bytes.Equal(got, record(i)): // or cut short by the end of the file
			return "wrong"
		}
		return "ok"
	}
	st := must(f.Stat())
	before := map[string]int{}
	for i := 0; i < int(st.Size()/512); i++ {
		before[count(i)]++
	}
	after := map[string]int{}
	for i := 0; i < n; i++ {
		if _, err := f.WriteAt(record(i), int64(i)*512); err != nil {
			fmt.Printf("write %d: %v\n", i, err)
			after["werr"]++
			continue
		}
		if err := f.Sync(); err != nil {
			fmt.Printf("fsync %d: %v\n", i, err)
			after["werr"]++
			continue
		}
		after[count(i)]++
	}
	fmt.Printf("readback life=%s before: ok=%d eio=%d wrong=%d / after: ok=%d eio=%d wrong=%d werr=%d\n",
		os.Getenv("SEEDFALL_INCARNATION"), before["ok"], before["eio"], before["wrong"],
		after["ok"], after["eio"], after["wrong"], after["werr"])
	fmt.Println("ready")
	sleepForever()
}
