/*
 * package capi: bindings/comm.i for Go through cgo, the layer under the
 * hand-written package comm. SWIG writes comm_swig.go and comm_swig_wrap.c
 * next to this file (generate.sh; `cmake --build build --target go_capi`
 * after comm.h changes), and both are committed, so that `go build` and
 * `go get` of the module need no SWIG; the test go.capi_current fails when
 * they differ from what SWIG makes of this file.
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
%typemap(gotype) int *out, int *out_device, const int *ranks, int *out_count, int *out_ranks,
    int *out_failed_count, int *out_failed_ranks "*int32"
%typemap(in) int *out, int *out_device, const int *ranks, int *out_count, int *out_ranks, int *out_failed_count,
    int *out_failed_ranks %{ $1 = ($1_ltype)$input; %}

/* comm_agree's flags, read and written by C: 32 bits. */
%typemap(gotype) uint32_t *flags "*uint32"
%typemap(in) uint32_t *flags %{ $1 = ($1_ltype)$input; %}

/* Tensor data: Go memory (a slice's backing array) seen by cgo's pointer checks. */
%typemap(gotype) void *data, void *in_data, void *out_data "unsafe.Pointer"
%typemap(in) void *data, void *in_data, void *out_data %{ $1 = $input; %}

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

/* comm_cuda_device_count through helpers, for its C string out-parameter
   (see comm_name). */
%ignore comm_cuda_device_count;
%inline %{
static int comm_go_cuda_device_count(void) {
  int count = 0;
  return comm_cuda_device_count(&count, NULL) == COMM_OK ? count : 0;
}
static const char *comm_go_cuda_unavailable_reason(void) {
  int count = 0;
  const char *reason = NULL;
  return comm_cuda_device_count(&count, &reason) == COMM_OK && reason != NULL ? reason : "";
}
%}

/* A C string out-parameter has no Go mapping (see comm_name), and nothing
   in package comm needs the provider list: comm-info prints it. */
%ignore comm_providers;

/* Likewise the settings table (comm_setting_info's strings): comm-info
   prints it. */
%ignore comm_setting_count;
%ignore comm_setting_info;

/* Package comm describes slices itself and never reads descriptors back;
   it marks those of comm.DeviceSlice as CUDA memory. */
%ignore comm_tensor_set_data;
%ignore comm_tensor_data;
%ignore comm_tensor_dtype;
%ignore comm_tensor_ndim;
%ignore comm_tensor_dim;
%ignore comm_tensor_numel;
%ignore comm_tensor_nbytes;
%ignore comm_tensor_memory;

%include "comm.i"

/*
 * Fused calls: package comm describes its slices, makes the call and
 * releases the descriptors in one C call (comm_go_<call>), so that a
 * collective costs one cgo transition instead of five. Each slice comes as
 * data, element count and `present` (0: NULL, for the arguments the C call
 * allows to be absent; 1: host memory; 2 + d: memory of CUDA device d, a
 * comm.DeviceSlice); the slices of one call share `dtype`. The message of a
 * failure stays comm_last_error(): releasing descriptors succeeds.
 */
%{
static comm_status_t comm_go_describe(comm_tensor_t **out, void *data, int64_t count, comm_dtype_t dtype,
                                      int present) {
  *out = NULL;
  if (!present) return COMM_OK;
  comm_status_t status = comm_tensor_create(out, data, dtype, 1, &count);
  if (status == COMM_OK && present >= 2) status = comm_tensor_set_memory(*out, COMM_MEMORY_CUDA, present - 2);
  return status;
}
%}

/* The extra parameters and arguments of a call come parenthesised, with
   their leading comma: COMM_GO_FUSED_PAIR(reduce, (, comm_op_t op, int root), (, op, root)). */
#define COMM_GO_LIST(...) __VA_ARGS__

%define COMM_GO_FUSED_PAIR(NAME, PARAMETERS, ARGUMENTS)
%inline %{
static comm_status_t comm_go_##NAME(comm_t *comm, void *in_data, int64_t in_count, int in_present,
                                    void *out_data, int64_t out_count, int out_present,
                                    comm_dtype_t dtype COMM_GO_LIST PARAMETERS, comm_handle_t **handle) {
  comm_tensor_t *in = NULL, *out = NULL;
  comm_status_t status = comm_go_describe(&in, in_data, in_count, dtype, in_present);
  if (status == COMM_OK) status = comm_go_describe(&out, out_data, out_count, dtype, out_present);
  if (status == COMM_OK) status = comm_##NAME(comm, in, out COMM_GO_LIST ARGUMENTS, handle);
  comm_tensor_destroy(in);
  comm_tensor_destroy(out);
  return status;
}
%}
%enddef

%define COMM_GO_FUSED_ONE(NAME)
%inline %{
static comm_status_t comm_go_##NAME(comm_t *comm, void *data, int64_t count, comm_dtype_t dtype, int peer, int tag,
                                    comm_handle_t **handle) {
  comm_tensor_t *tensor = NULL;
  comm_status_t status = comm_go_describe(&tensor, data, count, dtype, 1);
  if (status == COMM_OK) status = comm_##NAME(comm, tensor, peer, tag, handle);
  comm_tensor_destroy(tensor);
  return status;
}
%}
%enddef

COMM_GO_FUSED_PAIR(all_reduce, (, comm_op_t op), (, op))
COMM_GO_FUSED_PAIR(reduce, (, comm_op_t op, int root), (, op, root))
COMM_GO_FUSED_PAIR(broadcast, (, int root), (, root))
COMM_GO_FUSED_PAIR(all_gather, (), ())
COMM_GO_FUSED_PAIR(reduce_scatter, (, comm_op_t op), (, op))
COMM_GO_FUSED_PAIR(gather, (, int root), (, root))
COMM_GO_FUSED_PAIR(scatter, (, int root), (, root))
COMM_GO_FUSED_PAIR(all_to_all_single, (, const int64_t *out_splits, const int64_t *in_splits),
                   (, out_splits, in_splits))
COMM_GO_FUSED_PAIR(all_gather_v, (, const int64_t *counts), (, counts))
COMM_GO_FUSED_PAIR(reduce_scatter_v, (, const int64_t *counts, comm_op_t op), (, counts, op))
COMM_GO_FUSED_PAIR(gather_v, (, const int64_t *counts, int root), (, counts, root))
COMM_GO_FUSED_PAIR(scatter_v, (, const int64_t *counts, int root), (, counts, root))
COMM_GO_FUSED_ONE(send)
COMM_GO_FUSED_ONE(recv)
