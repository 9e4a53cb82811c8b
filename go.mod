module github.com/useprickle/prickle

go 1.26.8
