module github.com/sframesim/sframesim

go 1.26.8

require golang.org/x/arch v0.32.0
