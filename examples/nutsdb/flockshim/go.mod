module github.com/gofrs/flock

go 1.21
