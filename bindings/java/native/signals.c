/*
 * libcomm_jni_signals: keeps the JVM's signal handlers across the loading of
 * libcomm_jni. libcomm needs libfabric, and libfabric pulls in provider
 * libraries whose constructors install crash handlers: libinfinipath (PSM)
 * takes SIGSEGV, SIGBUS, SIGILL, SIGINT and SIGTERM. HotSpot turns SIGSEGV
 * into NullPointerExceptions and safepoints, so with those handlers the JVM
 * dies at its first implicit null check. NativeLibrary saves the handlers
 * with this library (which needs nothing but libc), loads libcomm_jni, and
 * puts them back. libinfinipath itself is asked not to install its
 * handlers at all (IPATH_NO_BACKTRACE, unless the user set it), so that no
 * other JVM thread can fault into them while libcomm_jni loads.
 */
#include <jni.h>
#include <signal.h>
#include <stdlib.h>

static const int kSignals[] = {SIGSEGV, SIGBUS, SIGILL,  SIGFPE, SIGTRAP, SIGABRT, SIGPIPE,
                               SIGXFSZ, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
#define SIGNAL_COUNT (sizeof kSignals / sizeof kSignals[0])

static struct sigaction saved[SIGNAL_COUNT];
static int savedOk[SIGNAL_COUNT];

JNIEXPORT void JNICALL Java_org_libcomm_NativeLibrary_saveSignalHandlers(JNIEnv *env, jclass cls) {
  (void)env;
  (void)cls;
  setenv("IPATH_NO_BACKTRACE", "1", 0);
  for (size_t i = 0; i < SIGNAL_COUNT; ++i) savedOk[i] = sigaction(kSignals[i], NULL, &saved[i]) == 0;
}

JNIEXPORT void JNICALL Java_org_libcomm_NativeLibrary_restoreSignalHandlers(JNIEnv *env, jclass cls) {
  (void)env;
  (void)cls;
  for (size_t i = 0; i < SIGNAL_COUNT; ++i) {
    if (savedOk[i]) sigaction(kSignals[i], &saved[i], NULL);
  }
}
