/*
 * Opaque C objects are Java longs (0 is NULL): the hand-written classes own
 * them and never hand them out. Out-parameters are one-element arrays the
 * Java caller allocates; the optional `comm_handle_t **handle` is null for a
 * blocking call and a long[1] that receives the handle for an async one.
 */

%define COMM_JAVA_OPAQUE(TYPE)
%typemap(jni) TYPE *, const TYPE * "jlong"
%typemap(jtype) TYPE *, const TYPE * "long"
%typemap(jstype) TYPE *, const TYPE * "long"
%typemap(javain) TYPE *, const TYPE * "$javainput"
%typemap(javaout) TYPE *, const TYPE * { return $jnicall; }
%typemap(in) TYPE *, const TYPE * %{ $1 = ($1_ltype)(intptr_t)$input; %}
%typemap(out) TYPE *, const TYPE * %{ $result = (jlong)(intptr_t)$1; %}

%typemap(jni) TYPE **out "jlongArray"
%typemap(jtype) TYPE **out "long[]"
%typemap(jstype) TYPE **out "long[]"
%typemap(javain) TYPE **out "$javainput"
%typemap(in) TYPE **out (TYPE *temp = NULL) %{
  if ($input == NULL || (*jenv)->GetArrayLength(jenv, $input) < 1) {
    SWIG_JavaThrowException(jenv, SWIG_JavaIllegalArgumentException, "an out-parameter needs a long[1]");
    return $null;
  }
  $1 = &temp;
%}
%typemap(argout) TYPE **out %{
  if (result == COMM_OK) {
    jlong value = (jlong)(intptr_t)temp$argnum;
    (*jenv)->SetLongArrayRegion(jenv, $input, 0, 1, &value);
  }
%}
%enddef

COMM_JAVA_OPAQUE(comm_t)
COMM_JAVA_OPAQUE(comm_tensor_t)
COMM_JAVA_OPAQUE(comm_handle_t)
COMM_JAVA_OPAQUE(comm_batch_t)
COMM_JAVA_OPAQUE(comm_config_t)

%typemap(jni) comm_handle_t **handle "jlongArray"
%typemap(jtype) comm_handle_t **handle "long[]"
%typemap(jstype) comm_handle_t **handle "long[]"
%typemap(javain) comm_handle_t **handle "$javainput"
%typemap(in) comm_handle_t **handle (comm_handle_t *temp = NULL) %{
  if ($input != NULL && (*jenv)->GetArrayLength(jenv, $input) < 1) {
    SWIG_JavaThrowException(jenv, SWIG_JavaIllegalArgumentException, "an async call needs a long[1] for its handle");
    return $null;
  }
  $1 = $input != NULL ? &temp : NULL;
%}
%typemap(argout) comm_handle_t **handle %{
  if ($1 != NULL && result == COMM_OK) {
    jlong value = (jlong)(intptr_t)temp$argnum;
    (*jenv)->SetLongArrayRegion(jenv, $input, 0, 1, &value);
  }
%}

/* Scalar out-parameters: int[1] / long[1]. int64_t is C long on LP64
   (SWIGWORDSIZE64), which SWIG maps to a Java int: make it a Java long. */
%include <typemaps.i>
%apply int *OUTPUT { int *out };
%apply long long { int64_t };
%apply long long *OUTPUT { int64_t *out_ms };
%apply int *OUTPUT { int *out_count, int *out_failed_count };
/* OUTPUT's own argouts write even after a failure, with the exception
   pending (errors.i): these write only on success. */
%typemap(argout) int *out, int *out_count, int *out_failed_count %{
  if (result == COMM_OK) {
    jint value = (jint)temp$argnum;
    (*jenv)->SetIntArrayRegion(jenv, $input, 0, 1, &value);
  }
%}
%typemap(argout) int64_t *out_ms %{
  if (result == COMM_OK) {
    jlong value = (jlong)temp$argnum;
    (*jenv)->SetLongArrayRegion(jenv, $input, 0, 1, &value);
  }
%}

/* comm_agree's flags: an int[1] holding the 32 bits in, the agreed ones out. */
%typemap(jni) uint32_t *flags "jintArray"
%typemap(jtype) uint32_t *flags "int[]"
%typemap(jstype) uint32_t *flags "int[]"
%typemap(javain) uint32_t *flags "$javainput"
%typemap(in) uint32_t *flags (uint32_t temp = 0) %{
  if ($input == NULL || (*jenv)->GetArrayLength(jenv, $input) < 1) {
    SWIG_JavaThrowException(jenv, SWIG_JavaIllegalArgumentException, "flags need an int[1]");
    return $null;
  }
  (*jenv)->GetIntArrayRegion(jenv, $input, 0, 1, (jint *)&temp);
  $1 = &temp;
%}
%typemap(argout) uint32_t *flags %{
  if (result == COMM_OK) (*jenv)->SetIntArrayRegion(jenv, $input, 0, 1, (const jint *)&temp$argnum);
%}

/* comm_name: the name as UTF-8 bytes in a byte[1][] (NewStringUTF wants modified UTF-8). */
%typemap(jni) const char **out "jobjectArray"
%typemap(jtype) const char **out "byte[][]"
%typemap(jstype) const char **out "byte[][]"
%typemap(javain) const char **out "$javainput"
%typemap(in) const char **out (const char *temp = NULL) %{
  if ($input == NULL || (*jenv)->GetArrayLength(jenv, $input) < 1) {
    SWIG_JavaThrowException(jenv, SWIG_JavaIllegalArgumentException, "an out-parameter needs a byte[1][]");
    return $null;
  }
  $1 = ($1_ltype)&temp;
%}
%typemap(argout) const char **out %{
  if (result == COMM_OK) {
    jsize length = (jsize)strlen(temp$argnum);
    jbyteArray bytes = (*jenv)->NewByteArray(jenv, length);
    if (bytes == NULL) return $null;
    (*jenv)->SetByteArrayRegion(jenv, bytes, 0, length, (const jbyte *)temp$argnum);
    (*jenv)->SetObjectArrayElement(jenv, $input, 0, bytes);
  }
%}
/* comm_cuda_device_count's reason, as comm_name's name. */
%apply const char **out { const char **out_reason };
