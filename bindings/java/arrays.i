/*
 * Java arrays and buffers in place of C pointers and lengths. Arrays are
 * copied into C memory for the call (they are small: shapes, ranks, row
 * counts); data is never copied: a tensor's memory is a direct
 * java.nio.Buffer whose address goes to C as it is.
 */

%{
#include <stdlib.h>

/* A malloc'd copy of `array` (may be NULL) as int64_t[]; *ok = 0 with an
   exception pending when it cannot be made. */
static int64_t *jcomm_longs(JNIEnv *jenv, jlongArray array, jsize *length, int *ok) {
  *length = 0;
  *ok = 1;
  if (array == NULL) return NULL;
  *length = (*jenv)->GetArrayLength(jenv, array);
  int64_t *values = (int64_t *)malloc(sizeof(int64_t) * (size_t)(*length > 0 ? *length : 1));
  if (values == NULL) {
    SWIG_JavaThrowException(jenv, SWIG_JavaOutOfMemoryError, "no memory for a long[] argument");
    *ok = 0;
    return NULL;
  }
  (*jenv)->GetLongArrayRegion(jenv, array, 0, *length, (jlong *)values);
  return values;
}
%}

/* Tensor data: the address of a direct buffer. */
%typemap(jni) void *data "jobject"
%typemap(jtype) void *data "java.nio.Buffer"
%typemap(jstype) void *data "java.nio.Buffer"
%typemap(javain) void *data "$javainput"
%typemap(in) void *data %{
  $1 = $input != NULL ? (*jenv)->GetDirectBufferAddress(jenv, $input) : NULL;
  if ($input != NULL && $1 == NULL && (*jenv)->GetDirectBufferCapacity(jenv, $input) != 0) {
    SWIG_JavaThrowException(jenv, SWIG_JavaIllegalArgumentException, "a direct java.nio.Buffer is required");
    return $null;
  }
%}

/* long[] for the shape; its length is ndim. */
%typemap(jni) (int ndim, const int64_t *shape) "jlongArray"
%typemap(jtype) (int ndim, const int64_t *shape) "long[]"
%typemap(jstype) (int ndim, const int64_t *shape) "long[]"
%typemap(javain) (int ndim, const int64_t *shape) "$javainput"
%typemap(in) (int ndim, const int64_t *shape) (int64_t *temp = NULL, jsize length = 0, int ok = 1) %{
  temp = jcomm_longs(jenv, $input, &length, &ok);
  if (!ok) return $null;
  $1 = (int)length;
  $2 = temp;
%}
%typemap(freearg) (int ndim, const int64_t *shape) %{ free(temp$argnum); %}

/* long[] of row counts (one per rank; the Java caller checks the length), or null. */
%typemap(jni) const int64_t *counts "jlongArray"
%typemap(jtype) const int64_t *counts "long[]"
%typemap(jstype) const int64_t *counts "long[]"
%typemap(javain) const int64_t *counts "$javainput"
%typemap(in) const int64_t *counts (int64_t *temp = NULL, jsize length = 0, int ok = 1) %{
  temp = jcomm_longs(jenv, $input, &length, &ok);
  if (!ok) return $null;
  $1 = temp;
%}
%typemap(freearg) const int64_t *counts %{ free(temp$argnum); %}
%apply const int64_t *counts { const int64_t *out_splits, const int64_t *in_splits };

/* long[] of tensor descriptors for all_to_all; its length is the count. */
%typemap(jni) (int nins, const comm_tensor_t *const *ins) "jlongArray"
%typemap(jtype) (int nins, const comm_tensor_t *const *ins) "long[]"
%typemap(jstype) (int nins, const comm_tensor_t *const *ins) "long[]"
%typemap(javain) (int nins, const comm_tensor_t *const *ins) "$javainput"
%typemap(in) (int nins, const comm_tensor_t *const *ins) (int64_t *temp = NULL, jsize length = 0, int ok = 1) %{
  temp = jcomm_longs(jenv, $input, &length, &ok);
  if (!ok) return $null;
  $1 = (int)length;
  $2 = ($2_ltype)temp;
%}
%typemap(freearg) (int nins, const comm_tensor_t *const *ins) %{ free(temp$argnum); %}
%apply (int nins, const comm_tensor_t *const *ins) { (int nouts, comm_tensor_t *const *outs) };

/* int[] of ranks for comm_group_create; its length is nranks. */
%typemap(jni) (int nranks, const int *ranks) "jintArray"
%typemap(jtype) (int nranks, const int *ranks) "int[]"
%typemap(jstype) (int nranks, const int *ranks) "int[]"
%typemap(javain) (int nranks, const int *ranks) "$javainput"
%typemap(in) (int nranks, const int *ranks) (int *temp = NULL) %{
  $1 = $input != NULL ? (int)(*jenv)->GetArrayLength(jenv, $input) : 0;
  temp = (int *)malloc(sizeof(int) * (size_t)($1 > 0 ? $1 : 1));
  if (temp == NULL) {
    SWIG_JavaThrowException(jenv, SWIG_JavaOutOfMemoryError, "no memory for the ranks");
    return $null;
  }
  if ($input != NULL) (*jenv)->GetIntArrayRegion(jenv, $input, 0, $1, (jint *)temp);
  $2 = temp;
%}
%typemap(freearg) (int nranks, const int *ranks) %{ free(temp$argnum); %}

/* int[] that receives failed ranks (comm_failed_ranks, comm_agree); its
   length is the capacity. Entries past the count stay 0. */
%typemap(jni) (int *out_ranks, int capacity) "jintArray"
%typemap(jtype) (int *out_ranks, int capacity) "int[]"
%typemap(jstype) (int *out_ranks, int capacity) "int[]"
%typemap(javain) (int *out_ranks, int capacity) "$javainput"
%typemap(in) (int *out_ranks, int capacity) (int *temp = NULL) %{
  $2 = $input != NULL ? (int)(*jenv)->GetArrayLength(jenv, $input) : 0;
  temp = (int *)calloc((size_t)($2 > 0 ? $2 : 1), sizeof(int));
  if (temp == NULL) {
    SWIG_JavaThrowException(jenv, SWIG_JavaOutOfMemoryError, "no memory for the ranks");
    return $null;
  }
  $1 = temp;
%}
%typemap(argout) (int *out_ranks, int capacity) %{
  if (result == COMM_OK && $input != NULL) {
    (*jenv)->SetIntArrayRegion(jenv, $input, 0, $2, (const jint *)temp$argnum);
  }
%}
%typemap(freearg) (int *out_ranks, int capacity) %{ free(temp$argnum); %}
%apply (int *out_ranks, int capacity) { (int *out_failed_ranks, int capacity) };

/* Names, keys and values as UTF-8 bytes, NUL-terminated here (the Java
   caller rejects strings holding a NUL); null is NULL. */
%typemap(jni) const char *name, const char *key, const char *value "jbyteArray"
%typemap(jtype) const char *name, const char *key, const char *value "byte[]"
%typemap(jstype) const char *name, const char *key, const char *value "byte[]"
%typemap(javain) const char *name, const char *key, const char *value "$javainput"
%typemap(in) const char *name, const char *key, const char *value %{
  $1 = NULL;
  if ($input != NULL) {
    jsize length = (*jenv)->GetArrayLength(jenv, $input);
    $1 = ($1_ltype)malloc((size_t)length + 1);
    if ($1 == NULL) {
      SWIG_JavaThrowException(jenv, SWIG_JavaOutOfMemoryError, "no memory for a string argument");
      return $null;
    }
    (*jenv)->GetByteArrayRegion(jenv, $input, 0, length, (jbyte *)$1);
    ((char *)$1)[length] = '\0';
  }
%}
%typemap(freearg) const char *name, const char *key, const char *value %{ free((char *)$1); %}

/* Tensor.ofDevice: a descriptor of `shape` elements of `dtype` at `address`
   in the memory of CUDA device `device` (comm_tensor_set_memory refuses it
   where no device is visible, naming the cause). */
%inline %{
static comm_status_t comm_java_tensor_create_cuda(comm_tensor_t **out, int64_t address, comm_dtype_t dtype,
                                                  int ndim, const int64_t *shape, int device) {
  comm_status_t status = comm_tensor_create(out, (void *)(intptr_t)address, dtype, ndim, shape);
  if (status != COMM_OK) return status;
  status = comm_tensor_set_memory(*out, COMM_MEMORY_CUDA, device);
  if (status != COMM_OK) {
    comm_tensor_destroy(*out);
    *out = NULL;
  }
  return status;
}
%}

/* Java's Tensor knows its dtype, shape, size and memory; CUDA memory has no Java view. */
%ignore comm_tensor_set_data;
%ignore comm_tensor_set_memory;
%ignore comm_tensor_data;
%ignore comm_tensor_dtype;
%ignore comm_tensor_ndim;
%ignore comm_tensor_dim;
%ignore comm_tensor_numel;
%ignore comm_tensor_nbytes;
%ignore comm_tensor_memory;
