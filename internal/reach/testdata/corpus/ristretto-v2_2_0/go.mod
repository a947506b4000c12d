module example.com/reach/ristretto-v2_2_0

go 1.26

require (
	github.com/dgraph-io/ristretto/v2 v2.2.0
	github.com/seedfall/seedfall v0.0.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/dustin/go-humanize v1.0.1 // indirect
	golang.org/x/sys v0.44.0 // indirect
)

replace github.com/seedfall/seedfall => ../../../../..
