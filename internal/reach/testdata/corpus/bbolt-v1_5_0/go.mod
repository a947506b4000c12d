module example.com/reach/bbolt-v1_5_0

go 1.26

require (
	github.com/seedfall/seedfall v0.0.0
	go.etcd.io/bbolt v1.5.0
)

require golang.org/x/sys v0.45.0 // indirect

replace github.com/seedfall/seedfall => ../../../../..
