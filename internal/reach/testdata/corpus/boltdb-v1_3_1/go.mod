module example.com/reach/boltdb-v1_3_1

go 1.26

require (
	github.com/boltdb/bolt v1.3.1
	github.com/seedfall/seedfall v0.0.0
)

require golang.org/x/sys v0.44.0 // indirect

replace github.com/seedfall/seedfall => ../../../../..
