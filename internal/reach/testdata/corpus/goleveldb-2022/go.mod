module example.com/reach/goleveldb-2022

go 1.26

require (
	github.com/seedfall/seedfall v0.0.0
	github.com/syndtr/goleveldb v1.0.1-0.20220721030215-126854af5e6d
)

require github.com/golang/snappy v0.0.4 // indirect

replace github.com/seedfall/seedfall => ../../../../..
