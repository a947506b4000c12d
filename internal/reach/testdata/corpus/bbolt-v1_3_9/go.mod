module example.com/reach/bbolt-v1_3_9

go 1.26

require (
	github.com/seedfall/seedfall v0.0.0
	go.etcd.io/bbolt v1.3.9
)

require golang.org/x/sys v0.44.0 // indirect

replace github.com/seedfall/seedfall => ../../../../..
