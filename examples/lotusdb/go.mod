module github.com/seedfall/seedfall/examples/lotusdb

go 1.26

require (
	github.com/lotusdblabs/lotusdb/v2 v2.1.0
	github.com/seedfall/seedfall v0.0.0
)

require (
	github.com/bwmarrin/snowflake v0.3.0 // indirect
	github.com/cespare/xxhash/v2 v2.2.0 // indirect
	github.com/dgraph-io/badger/v4 v4.2.0 // indirect
	github.com/dgraph-io/ristretto v0.1.1 // indirect
	github.com/dustin/go-humanize v1.0.1 // indirect
	github.com/gofrs/flock v0.8.1 // indirect
	github.com/gogo/protobuf v1.3.2 // indirect
	github.com/golang/glog v1.2.0 // indirect
	github.com/hashicorp/golang-lru/v2 v2.0.7 // indirect
	github.com/klauspost/compress v1.17.4 // indirect
	github.com/pkg/errors v0.9.1 // indirect
	github.com/rosedblabs/diskhash v0.0.0-20230910084041-289755737e2a // indirect
	github.com/rosedblabs/wal v1.3.6 // indirect
	github.com/spaolacci/murmur3 v1.1.0 // indirect
	github.com/valyala/bytebufferpool v1.0.0 // indirect
	go.etcd.io/bbolt v1.3.8 // indirect
	golang.org/x/net v0.19.0 // indirect
	golang.org/x/sync v0.20.0 // indirect
	golang.org/x/sys v0.44.0 // indirect
)

replace github.com/seedfall/seedfall => ../..
