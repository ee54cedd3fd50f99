/*
 * The JNI layer of org.libcomm: bindings/comm.i with Java's typemaps. It
 * generates the package-private classes CommNative (one static method per C
 * function), CommNativeJNI and the constant classes; the public API is the
 * hand-written code in src/main/java/org/libcomm, which checks arguments and
 * state before it calls in here.
 *
 * In this layer every opaque C object is a Java long, every out-parameter a
 * one-element array, and a negative comm_status_t a thrown exception
 * (errors.i).
 */
%module CommNative

%{
#include "comm.h"
%}

%include <enumtypeunsafe.swg>
%javaconst(1);

/* Nothing generated here is public API. */
%pragma(java) moduleclassmodifiers="final class"
%pragma(java) jniclassclassmodifiers="final class"
%typemap(javaclassmodifiers) enum SWIGTYPE "final class"

/* SWIG 4.1 puts #define constants in a public interface; the ones Java
   needs are functions instead. */
%ignore COMM_VERSION_MAJOR;
%ignore COMM_VERSION_MINOR;
%ignore COMM_VERSION_PATCH;
%ignore COMM_VERSION_NUMBER;
%ignore COMM_MAX_DIMS;
%ignore COMM_UNDEFINED;
%ignore COMM_TIMEOUT_DEFAULT;
%ignore COMM_TAG_MAX;
%inline %{
static int comm_java_max_dims(void) { return COMM_MAX_DIMS; }
static int comm_java_undefined(void) { return COMM_UNDEFINED; }
static int comm_java_timeout_default(void) { return COMM_TIMEOUT_DEFAULT; }
static int comm_java_tag_max(void) { return COMM_TAG_MAX; }
static comm_status_t comm_java_check_version(void) {
  return comm_check_version(COMM_VERSION_MAJOR, COMM_VERSION_MINOR);
}
%}

/* A CUDA stream travels as its address (a long, as JCuda and the like give
   it); Communicator keeps the current one itself. */
%typemap(jni) void *stream "jlong"
%typemap(jtype) void *stream "long"
%typemap(jstype) void *stream "long"
%typemap(javain) void *stream "$javainput"
%typemap(in) void *stream %{ $1 = (void *)(intptr_t)$input; %}
%ignore comm_stream;

/* Load libcomm_jni before the first native call, and refuse a libcomm of
   another major version or an older minor than the comm.h it was built
   against, as the loader refuses a missing symbol: UnsatisfiedLinkError. */
%pragma(java) jniclasscode=%{
  static {
    NativeLibrary.load();
    try {
      comm_java_check_version();
    } catch (RuntimeException e) {
      UnsatisfiedLinkError error = new UnsatisfiedLinkError("org.libcomm: " + e.getMessage());
      error.initCause(e);
      throw error;
    }
  }
%}

%include "errors.i"
%include "objects.i"
%include "arrays.i"

%include "comm.i"
