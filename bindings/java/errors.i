/*
 * A negative comm_status_t becomes a thrown exception carrying
 * comm_last_error(): the one CommException.fromNative makes for its status
 * (a CommException subclass, or for misuse CommInvalidArgumentException, an
 * IllegalArgumentException, and CommInvalidUsageException, an
 * IllegalStateException). The message is read in the same native call, so
 * it is this thread's and no other comm_* call can have replaced it.
 */

%{
#include <string.h>

/* Leave the exception for `status` pending; the caller returns at once.
   When the exception cannot be made, the JNI error that stopped it is left
   pending instead. */
static void jcomm_throw(JNIEnv *jenv, comm_status_t status) {
  const char *text = comm_last_error();
  if (text[0] == '\0') text = comm_status_string(status);
  jclass cls = (*jenv)->FindClass(jenv, "org/libcomm/CommException");
  if (cls == NULL) return;
  jmethodID factory = (*jenv)->GetStaticMethodID(jenv, cls, "fromNative", "(I[B)Ljava/lang/RuntimeException;");
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
