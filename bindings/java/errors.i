/*
 * A negative comm_status_t becomes a thrown org.libcomm.CommException (the
 * subclass for its status, built by CommException.fromNative) carrying
 * comm_last_error(). The message is read in the same native call, so it is
 * this thread's and no other comm_* call can have replaced it.
 */

%{
#include <string.h>

/* Leave a CommException pending for `status`; the caller returns at once.
   When the exception cannot be made, the JNI error that stopped it is left
   pending instead. */
static void jcomm_throw(JNIEnv *jenv, comm_status_t status) {
  const char *text = comm_last_error();
  if (text[0] == '\0') text = comm_status_string(status);
  jclass cls = (*jenv)->FindClass(jenv, "org/libcomm/CommException");
  if (cls == NULL) return;
  jmethodID factory = (*jenv)->GetStaticMethodID(jenv, cls, "fromNative", "(I[B)Lorg/libcomm/CommException;");
  if (factory == NULL) return;
  /* Bytes, decoded as UTF-8 in Java: NewStringUTF wants modified UTF-8. */
  jsize length = (jsize)strlen(text);
  jbyteArray message = (*jenv)->NewByteArray(jenv, length);
  if (message == NULL) return;
  (*jenv)->SetByteArrayRegion(jenv, message, 0, length, (const jbyte *)text);
  jobject error = (*jenv)->CallStaticObjectMethod(jenv, cls, factory, (jint)status, message);
  if ((*jenv)->ExceptionCheck(jenv) || error == NULL) return;
  (*jenv)->Throw(jenv, (jthrowable)error);
}
%}

/* Argouts and freeargs test `result` so that, with an exception pending,
   they call no JNI function but the release ones JNI allows then. */
%typemap(out) comm_status_t %{
  if ($1 < 0) jcomm_throw(jenv, $1);
  $result = (jint)$1;
%}
