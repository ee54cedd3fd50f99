package capi

// The flags of the generated wrapper (comm_swig_wrap.c, built by cgo with
// this package): comm.h and libcomm from pkg-config, so PKG_CONFIG_PATH
// picks the build tree's or an installation's comm.pc.

// #cgo pkg-config: comm
import "C"
