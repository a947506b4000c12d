module github.com/seedfall/seedfall/examples/pogreb

go 1.26

require (
	github.com/akrylysov/pogreb v0.10.2
	github.com/seedfall/seedfall v0.0.0
)

replace github.com/seedfall/seedfall => ../..
