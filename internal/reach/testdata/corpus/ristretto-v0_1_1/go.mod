module example.com/reach/ristretto-v0_1_1

go 1.26

require (
	github.com/dgraph-io/ristretto v0.1.1
	github.com/seedfall/seedfall v0.0.0
)

require (
	github.com/cespare/xxhash/v2 v2.1.1 // indirect
	github.com/dustin/go-humanize v1.0.0 // indirect
	github.com/golang/glog v0.0.0-20160126235308-23def4e6c14b // indirect
	github.com/pkg/errors v0.9.1 // indirect
	golang.org/x/sys v0.44.0 // indirect
)

replace github.com/seedfall/seedfall => ../../../../..
