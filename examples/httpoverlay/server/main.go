// Command server is an ordinary net/http key-value server. It does not import seedfall:
// built with "net_overlay": true, its http.ListenAndServe listens on the simulated
// network; built normally, on the real one.
//
//	PUT /kv/{key}  body = value   -> 204
//	GET /kv/{key}                 -> 200 value, or 404
package main

import (
	"flag"
	"io"
	"log"
	"net/http"
	"sync"
)

func main() {
	addr := flag.String("addr", ":8080", "`address` to listen on")
	flag.Parse()
	var mu sync.Mutex
	kv := map[string]string{}
	mux := http.NewServeMux()
	mux.HandleFunc("PUT /kv/{key}", func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		kv[r.PathValue("key")] = string(b)
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /kv/{key}", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		v, ok := kv[r.PathValue("key")]
		mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, v)
	})
	log.SetFlags(0)
	log.Printf("listening on %s", *addr)
	log.Fatal(http.ListenAndServe(*addr, mux))
}
