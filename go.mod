module github.com/sframesim/sframesim

go 1.26.8
