module github.com/seedfall/seedfall/examples/pudge

go 1.26

require (
	github.com/recoilme/pudge v1.0.3
	github.com/seedfall/seedfall v0.0.0
)

replace github.com/seedfall/seedfall => ../..
