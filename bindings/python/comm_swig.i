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

%include "comm.i"
