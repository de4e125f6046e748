// Package stdfds tells whether the standard descriptors (0, 1, 2) were
// closed when the process started (sframesim validate >&-).
//
// The Go runtime opens /dev/null read-write on a closed standard
// descriptor before any Go code runs, so a write to a closed stdout then
// succeeds and is lost: a verdict nobody can read, and exit status 0. A
// descriptor read-write on /dev/null cannot be told from one a daemon set
// up on purpose; in a build with cgo, a C constructor, which runs before
// the Go runtime starts, looks at the descriptors first. Without cgo,
// Closed always says false: the runtime's /dev/null is all there is.
package stdfds
