/*
 * The Python extension libcomm._comm_swig: bindings/comm.i with Python's
 * typemaps. threads="1" releases the GIL around every C call, so a rank
 * waiting in a collective lets the process's other Python threads run;
 * calls that touch Python objects or return at once opt out with %nothread.
 */
%module(package="libcomm", threads="1") comm_swig

%{
#include "comm.h"
%}

%include "errors.i"
%include "outputs.i"
%include "tensors.i"
%include "dlpack.i"

/* Quick queries: not worth a GIL round trip. */
%nothread comm_version;
%nothread comm_version_string;
%nothread comm_status_string;
%nothread comm_last_error;
%nothread comm_dtype_size;
%nothread comm_dtype_name;
%nothread comm_op_name;
%nothread comm_rank;
%nothread comm_size;
%nothread comm_local_rank;
%nothread comm_local_size;
%nothread comm_name;
%nothread comm_rank_to_world;
%nothread comm_rank_from_world;
%nothread comm_handle_test;
%nothread comm_batch_create;
%nothread comm_batch_destroy;
%nothread comm_batch_add_send;
%nothread comm_batch_add_recv;

/* A CUDA stream travels as its address (an int, as CuPy's and PyTorch's
   stream.ptr / cuda_stream give it); Python keeps the current one itself. */
%typemap(in) void *stream {
  $1 = PyLong_AsVoidPtr($input);
  if (PyErr_Occurred()) SWIG_fail;
}
%ignore comm_stream;
%nothread comm_set_stream;
%nothread comm_cuda_device_count;

/* comm.h's makings without blocking give a communicator and a handle: as
   two outputs their argouts would overwrite each other, so they are
   wrapped again with the handle named `making` (outputs.i). */
%ignore comm_init_async;
%ignore comm_split_async;
%ignore comm_group_create_async;
%ignore comm_shrink_async;
%ignore comm_grow_async;

%include "comm.i"

%rename(comm_init_async) pycomm_init_async;
%rename(comm_split_async) pycomm_split_async;
%rename(comm_group_create_async) pycomm_group_create_async;
%rename(comm_shrink_async) pycomm_shrink_async;
%rename(comm_grow_async) pycomm_grow_async;
%inline %{
static comm_status_t pycomm_init_async(comm_t **out, const comm_config_t *config, comm_handle_t **making) {
  return comm_init_async(out, config, making);
}
static comm_status_t pycomm_split_async(comm_t **out, comm_t *parent, int color, int key, const char *name,
                                        comm_handle_t **making) {
  return comm_split_async(out, parent, color, key, name, making);
}
static comm_status_t pycomm_group_create_async(comm_t **out, comm_t *parent, int nranks, const int *ranks,
                                               const char *name, comm_handle_t **making) {
  return comm_group_create_async(out, parent, nranks, ranks, name, making);
}
static comm_status_t pycomm_shrink_async(comm_t **out, comm_t *comm, const char *name, comm_handle_t **making) {
  return comm_shrink_async(out, comm, name, making);
}
static comm_status_t pycomm_grow_async(comm_t **out, comm_t *comm, int count, const char *name,
                                       comm_handle_t **making) {
  return comm_grow_async(out, comm, count, name, making);
}
%}
