// Command client is the workload of the httpoverlay example: an ordinary net/http
// client (no seedfall import) that writes keys to http://server:8080 and reads them
// back, printing how long each request took. A request that fails (the server is not
// listening yet, a connection reset) is retried; a wrong answer exits 1.
package main

import (
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

func main() {
	base := flag.String("url", "http://server:8080", "server base `URL`")
	n := flag.Int("n", 20, "keys to write and read back")
	every := flag.Duration("every", 50*time.Millisecond, "pause between requests")
	flag.Parse()
	for i := 0; i < *n; i++ {
		key, val := fmt.Sprintf("k%d", i), fmt.Sprintf("v%d", i)
		do("PUT", *base+"/kv/"+key, val, http.StatusNoContent, "")
		time.Sleep(*every)
		do("GET", *base+"/kv/"+key, "", http.StatusOK, val)
		time.Sleep(*every)
	}
	fmt.Printf("ok: %d keys written and read back\n", *n)
}

// do sends one request until it gets an answer, and checks the answer.
func do(method, url, body string, wantCode int, wantBody string) {
	for attempt := 1; ; attempt++ {
		start := time.Now()
		req, err := http.NewRequest(method, url, strings.NewReader(body))
		if err != nil {
			fmt.Println(err)
			os.Exit(2)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			fmt.Printf("%s %s: %v (retrying)\n", method, url, err)
			time.Sleep(100 * time.Millisecond)
			continue
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			fmt.Printf("%s %s: reading the answer: %v (retrying)\n", method, url, err)
			continue
		}
		fmt.Printf("%s %s -> %d in %s\n", method, strings.TrimPrefix(url, "http://"), resp.StatusCode, time.Since(start).Round(time.Millisecond))
		if resp.StatusCode != wantCode || string(b) != wantBody {
			fmt.Printf("FAIL %s %s: got %d %q, want %d %q\n", method, url, resp.StatusCode, b, wantCode, wantBody)
			os.Exit(1)
		}
		return
	}
}
