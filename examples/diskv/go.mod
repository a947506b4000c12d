module github.com/seedfall/seedfall/examples/diskv

go 1.26

require (
	github.com/peterbourgon/diskv/v3 v3.0.1
	github.com/seedfall/seedfall v0.0.0
)

require github.com/google/btree v1.0.0 // indirect

replace github.com/seedfall/seedfall => ../..
