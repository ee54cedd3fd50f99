/* A program built only with `pkg-config --cflags --libs comm`: a single-rank
 * world all-reduces a vector. */
#include <stdio.h>

#include <comm.h>

int main(void) {
  comm_t *world = NULL;
  if (comm_init(&world, NULL) != COMM_OK) {
    fprintf(stderr, "%s\n", comm_last_error());
    return 1;
  }
  float v[3] = {1, 2, 3};
  int64_t n = 3;
  comm_tensor_t *t = NULL;
  comm_tensor_create(&t, v, COMM_FLOAT32, 1, &n);
  comm_status_t s = comm_all_reduce(world, t, t, COMM_OP_SUM, NULL);
  comm_tensor_destroy(t);
  comm_destroy(world);
  printf("comm %s: all_reduce %s, v = %g %g %g\n", comm_version_string(), comm_status_string(s), v[0], v[1], v[2]);
  return s == COMM_OK && v[0] == 1 && v[2] == 3 ? 0 : 1;
}
