module github.com/seedfall/seedfall/examples/diskqueue

go 1.26

require (
	github.com/nsqio/go-diskqueue v1.1.0
	github.com/seedfall/seedfall v0.0.0
)

replace github.com/seedfall/seedfall => ../..
