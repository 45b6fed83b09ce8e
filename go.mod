module github.com/dtree-dev/dtree

go 1.26
