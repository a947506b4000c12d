module example.com/reach/goleveldb-v1_0_0

go 1.26

require (
	github.com/seedfall/seedfall v0.0.0
	github.com/syndtr/goleveldb v1.0.0
)

require github.com/golang/snappy v0.0.0-20180518054509-2e65f85255db // indirect

replace github.com/seedfall/seedfall => ../../../../..
