package capi

// Outside CMake, `go generate ./...` in bindings/go writes the SWIG layer
// here (comm_swig.go, comm_swig_wrap.c; git ignores both).

//go:generate swig -go -cgo -intgosize 64 -package capi -DSWIGWORDSIZE64 -I../../../../include -I../../.. -outdir . -o comm_swig_wrap.c comm_go.i
