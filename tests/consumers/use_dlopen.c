/* A program that finds comm at run time with dlopen("libcomm.so.0"), as a
 * foreign runtime would, and checks that internal symbols stay hidden. */
#include <dlfcn.h>
#include <stdio.h>

int main(void) {
  void *lib = dlopen("libcomm.so.0", RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return 1;
  }
  unsigned (*version)(void) = (unsigned (*)(void))dlsym(lib, "comm_version");
  const char *(*status_string)(int) = (const char *(*)(int))dlsym(lib, "comm_status_string");
  int (*init)(void **, const void *) = (int (*)(void **, const void *))dlsym(lib, "comm_init");
  int (*destroy)(void *) = (int (*)(void *))dlsym(lib, "comm_destroy");
  if (!version || !status_string || !init || !destroy) {
    fprintf(stderr, "missing comm_* symbols\n");
    return 1;
  }
  if (dlsym(lib, "_ZN4comm3log5writeENS0_5LevelESt17basic_string_viewIcSt11char_traitsIcEE") != NULL) {
    fprintf(stderr, "an internal symbol is visible\n");
    return 1;
  }
  void *world = NULL;
  int status = init(&world, NULL);
  printf("comm %u via dlopen: comm_init says %s\n", version(), status_string(status));
  if (status != 0) return 1;
  destroy(world);
  dlclose(lib);
  return 0;
}
