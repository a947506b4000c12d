module example.com/reach/nutsdb-v1_0_4

go 1.26

require (
	github.com/nutsdb/nutsdb v1.0.4
	github.com/seedfall/seedfall v0.0.0
)

require (
	github.com/antlabs/stl v0.0.1 // indirect
	github.com/antlabs/timer v0.0.11 // indirect
	github.com/bwmarrin/snowflake v0.3.0 // indirect
	github.com/gofrs/flock v0.8.1 // indirect
	github.com/pkg/errors v0.9.1 // indirect
	github.com/tidwall/btree v1.6.0 // indirect
	github.com/xujiajun/mmap-go v1.0.1 // indirect
	github.com/xujiajun/utils v0.0.0-20220904132955-5f7c5b914235 // indirect
	golang.org/x/sys v0.44.0 // indirect
)

replace github.com/seedfall/seedfall => ../../../../..
