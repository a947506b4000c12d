module example.com/reach/xsys-v0_44_0

go 1.26

require (
	github.com/seedfall/seedfall v0.0.0
	golang.org/x/sys v0.44.0
)

replace github.com/seedfall/seedfall => ../../../../..

// The entry's x/sys, whatever else requires.
replace golang.org/x/sys => golang.org/x/sys v0.44.0
