module github.com/seedfall/seedfall/examples/dque

go 1.26

require (
	github.com/joncrlsn/dque v0.0.0-20241024143830-7723fd131a64
	github.com/seedfall/seedfall v0.0.0
)

require (
	github.com/gofrs/flock v0.7.1 // indirect
	github.com/pkg/errors v0.9.1 // indirect
)

replace github.com/seedfall/seedfall => ../..
