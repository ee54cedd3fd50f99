/*
 * package capi: bindings/comm.i for Go through cgo, the layer under the
 * hand-written package comm. SWIG writes comm_swig.go and
 * comm_swig_wrap.c next to this file (CMake does it in the build tree;
 * `go generate` does it here, see generate.go); both are generated, never
 * committed.
 *
 * Every opaque C object is a uintptr (C memory: the Go collector ignores
 * it), every out-parameter a Go pointer the C call writes through, and
 * tensor data an unsafe.Pointer, so that cgo checks the memory it points
 * to. Statuses are returned as they are: package comm turns them into
 * errors with comm_last_error() read on the same OS thread.
 */
%module comm_swig

%{
#include "comm.h"
%}

%define COMM_GO_OPAQUE(TYPE)
%typemap(gotype) TYPE *, const TYPE * "uintptr"
%typemap(in) TYPE *, const TYPE * %{ $1 = ($1_ltype)$input; %}
%typemap(out) TYPE *, const TYPE * %{ $result = (uintptr_t)$1; %}
%typemap(gotype) TYPE **out "*uintptr"
%typemap(in) TYPE **out %{ $1 = ($1_ltype)$input; %}
%enddef

COMM_GO_OPAQUE(comm_t)
COMM_GO_OPAQUE(comm_tensor_t)
COMM_GO_OPAQUE(comm_handle_t)
COMM_GO_OPAQUE(comm_batch_t)
COMM_GO_OPAQUE(comm_config_t)

/* nil: block until done; else the handle is written there. */
%typemap(gotype) comm_handle_t **handle "*uintptr"
%typemap(in) comm_handle_t **handle %{ $1 = ($1_ltype)$input; %}

/* Arrays of descriptors for all_to_all: a pointer to the first of a []uintptr. */
%typemap(gotype) const comm_tensor_t *const *ins, comm_tensor_t *const *outs "*uintptr"
%typemap(in) const comm_tensor_t *const *ins, comm_tensor_t *const *outs %{ $1 = ($1_ltype)$input; %}

/* C int is 32 bits: SWIG 4.1's default `*int` (64-bit Go int) would get half-written values. */
%typemap(gotype) int *out, int *out_device, const int *ranks "*int32"
%typemap(in) int *out, int *out_device, const int *ranks %{ $1 = ($1_ltype)$input; %}

/* Tensor data: Go memory (a slice's backing array) seen by cgo's pointer checks. */
%typemap(gotype) void *data "unsafe.Pointer"
%typemap(in) void *data %{ $1 = $input; %}

/* Names: "" is NULL (a generated name). */
%typemap(in) const char *name %{
  $1 = NULL;
  if ($input.n > 0) {
    $1 = ($1_ltype)malloc((size_t)$input.n + 1);
    if ($1 == NULL) return COMM_ERR_NO_MEMORY;
    memcpy((char *)$1, $input.p, (size_t)$input.n);
    ((char *)$1)[$input.n] = '\0';
  }
%}
%typemap(freearg) const char *name %{ free((char *)$1); %}

/* comm_name through a helper: a C string out-parameter has no Go mapping;
   package comm only asks for valid communicators. */
%ignore comm_name;
%inline %{
static const char *comm_go_name(const comm_t *comm) {
  const char *name = NULL;
  return comm_name(&name, comm) == COMM_OK ? name : "";
}
%}

/* Package comm describes slices itself and never reads descriptors back;
   CUDA memory has no Go slice. */
%ignore comm_tensor_set_data;
%ignore comm_tensor_set_memory;
%ignore comm_tensor_data;
%ignore comm_tensor_dtype;
%ignore comm_tensor_ndim;
%ignore comm_tensor_dim;
%ignore comm_tensor_numel;
%ignore comm_tensor_nbytes;
%ignore comm_tensor_memory;

%include "comm.i"
