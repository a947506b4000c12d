module github.com/seedfall/seedfall/examples/fsyncgate

go 1.26

require github.com/seedfall/seedfall v0.0.0

replace github.com/seedfall/seedfall => ../..
