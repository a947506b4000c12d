module github.com/seedfall/seedfall/examples/bbolt/v1.5

go 1.26

require github.com/seedfall/seedfall/examples/bbolt v0.0.0

require (
	github.com/seedfall/seedfall v0.0.0 // indirect
	go.etcd.io/bbolt v1.5.0 // indirect
	golang.org/x/sys v0.45.0 // indirect
)

replace (
	github.com/seedfall/seedfall => ../../..
	github.com/seedfall/seedfall/examples/bbolt => ..
)
