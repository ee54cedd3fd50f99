/* Point-to-point through commrun at any rank count, over shm or tcp:
 * a 64 MiB ring where every rank sends first, tags, batches in opposite
 * orders, handles, empty and mismatched messages, abort from another thread. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "comm.h"
#include "world.h"

#define OK(call) assert_int_equal((call), COMM_OK)

static comm_tensor_t *bytes_at(void *data, int64_t n) {
  comm_tensor_t *t = NULL;
  OK(comm_tensor_create(&t, data, COMM_UINT8, 1, &n));
  return t;
}

static int right(void) { return (rank + 1) % size; }
static int left(void) { return (rank + size - 1) % size; }

/* A byte pattern that depends on the sender, so a mixed-up message shows. */
static uint8_t pattern(int sender, size_t i, int salt) { return (uint8_t)(sender * 131 + i * 7 + (i >> 12) + salt); }

static void ring_64mib_every_rank_sends_first(void **state) {
  (void)state;
  const size_t n = 64u << 20;
  uint8_t *out = malloc(n), *in = malloc(n);
  assert_non_null(out);
  assert_non_null(in);
  for (size_t i = 0; i < n; ++i) out[i] = pattern(rank, i, 1);
  memset(in, 0, n);
  comm_tensor_t *o = bytes_at(out, (int64_t)n), *r = bytes_at(in, (int64_t)n);
  comm_batch_t *batch = NULL;
  OK(comm_batch_create(&batch));
  OK(comm_batch_add_send(batch, o, right(), 11));
  OK(comm_batch_add_recv(batch, r, left(), 11));
  OK(comm_batch_start(world, batch, NULL));
  for (size_t i = 0; i < n; i += 4093) assert_int_equal(in[i], pattern(left(), i, 1));
  assert_int_equal(in[n - 1], pattern(left(), n - 1, 1));
  assert_memory_equal(in + n / 2, out + n / 2, 0);
  OK(comm_batch_destroy(batch));
  comm_tensor_destroy(o);
  comm_tensor_destroy(r);
  free(out);
  free(in);
}

static void tags_keep_concurrent_messages_apart(void **state) {
  (void)state;
  enum { N = 1000 };
  uint8_t a[N], b[N], ra[N], rb[N];
  for (int i = 0; i < N; ++i) {
    a[i] = pattern(rank, (size_t)i, 3);
    b[i] = pattern(rank, (size_t)i, 9);
  }
  comm_tensor_t *ta = bytes_at(a, N), *tb = bytes_at(b, N), *tra = bytes_at(ra, N), *trb = bytes_at(rb, N);
  comm_handle_t *h[4];
  /* Receive tag 2 before tag 1; send tag 1 before tag 2. */
  OK(comm_recv(world, trb, left(), 2, &h[0]));
  OK(comm_recv(world, tra, left(), 1, &h[1]));
  OK(comm_send(world, ta, right(), 1, &h[2]));
  OK(comm_send(world, tb, right(), 2, &h[3]));
  for (int i = 3; i >= 0; --i) {
    OK(comm_handle_wait(h[i], COMM_TIMEOUT_DEFAULT));
    OK(comm_handle_destroy(h[i]));
  }
  for (int i = 0; i < N; ++i) {
    assert_int_equal(ra[i], pattern(left(), (size_t)i, 3));
    assert_int_equal(rb[i], pattern(left(), (size_t)i, 9));
  }
  comm_tensor_destroy(ta);
  comm_tensor_destroy(tb);
  comm_tensor_destroy(tra);
  comm_tensor_destroy(trb);
}

static void same_tag_messages_arrive_in_order(void **state) {
  (void)state;
  enum { K = 8 };
  int64_t sent[K], got[K];
  comm_batch_t *batch = NULL;
  OK(comm_batch_create(&batch));
  comm_tensor_t *ts[K], *tr[K];
  for (int k = 0; k < K; ++k) {
    sent[k] = rank * 1000 + k;
    got[k] = -1;
    int64_t one = 1;
    OK(comm_tensor_create(&ts[k], &sent[k], COMM_INT64, 1, &one));
    OK(comm_tensor_create(&tr[k], &got[k], COMM_INT64, 1, &one));
    OK(comm_batch_add_recv(batch, tr[k], left(), 5));
  }
  for (int k = 0; k < K; ++k) OK(comm_batch_add_send(batch, ts[k], right(), 5));
  OK(comm_batch_start(world, batch, NULL));
  for (int k = 0; k < K; ++k) {
    assert_int_equal(got[k], left() * 1000 + k);
    comm_tensor_destroy(ts[k]);
    comm_tensor_destroy(tr[k]);
  }
  OK(comm_batch_destroy(batch));
}

static void batches_in_opposite_orders_complete(void **state) {
  (void)state;
  const size_t n = (1u << 20) + 3;
  uint8_t *to_right = malloc(n), *to_left = malloc(n), *from_left = malloc(n), *from_right = malloc(n);
  for (size_t i = 0; i < n; ++i) {
    to_right[i] = pattern(rank, i, 21);
    to_left[i] = pattern(rank, i, 22);
  }
  comm_tensor_t *a = bytes_at(to_right, (int64_t)n), *b = bytes_at(to_left, (int64_t)n);
  comm_tensor_t *c = bytes_at(from_left, (int64_t)n), *d = bytes_at(from_right, (int64_t)n);
  comm_batch_t *batch = NULL;
  OK(comm_batch_create(&batch));
  if (rank % 2 == 0) {
    OK(comm_batch_add_send(batch, a, right(), 0));
    OK(comm_batch_add_send(batch, b, left(), 1));
    OK(comm_batch_add_recv(batch, c, left(), 0));
    OK(comm_batch_add_recv(batch, d, right(), 1));
  } else {
    OK(comm_batch_add_recv(batch, d, right(), 1));
    OK(comm_batch_add_recv(batch, c, left(), 0));
    OK(comm_batch_add_send(batch, b, left(), 1));
    OK(comm_batch_add_send(batch, a, right(), 0));
  }
  comm_handle_t *h = NULL;
  OK(comm_batch_start(world, batch, &h));
  OK(comm_batch_destroy(batch)); /* a started batch may go at once */
  comm_status_t s;
  while ((s = comm_handle_test(h)) == COMM_IN_PROGRESS) usleep(100);
  OK(s);
  OK(comm_handle_destroy(h));
  for (size_t i = 0; i < n; i += 997) {
    assert_int_equal(from_left[i], pattern(left(), i, 21));
    assert_int_equal(from_right[i], pattern(right(), i, 22));
  }
  comm_tensor_destroy(a);
  comm_tensor_destroy(b);
  comm_tensor_destroy(c);
  comm_tensor_destroy(d);
  free(to_right);
  free(to_left);
  free(from_left);
  free(from_right);
}

static void empty_messages_and_blocking_pairs(void **state) {
  (void)state;
  comm_tensor_t *empty = NULL;
  int64_t zero = 0;
  OK(comm_tensor_create(&empty, NULL, COMM_FLOAT32, 1, &zero));
  comm_handle_t *h = NULL;
  OK(comm_recv(world, empty, left(), 3, &h));
  OK(comm_send(world, empty, right(), 3, NULL));
  OK(comm_handle_wait(h, COMM_TIMEOUT_DEFAULT));
  OK(comm_handle_destroy(h));
  comm_tensor_destroy(empty);
  /* Blocking send/recv in pairs: even ranks send first. */
  if (size > 1 && !(size % 2 == 1 && rank == size - 1)) {
    double value = rank + 0.5, got = 0;
    int64_t one = 1;
    comm_tensor_t *tv = NULL, *tg = NULL;
    OK(comm_tensor_create(&tv, &value, COMM_FLOAT64, 1, &one));
    OK(comm_tensor_create(&tg, &got, COMM_FLOAT64, 1, &one));
    int partner = rank ^ 1;
    if (rank % 2 == 0) {
      OK(comm_send(world, tv, partner, 4, NULL));
      OK(comm_recv(world, tg, partner, 4, NULL));
    } else {
      OK(comm_recv(world, tg, partner, 4, NULL));
      OK(comm_send(world, tv, partner, 4, NULL));
    }
    assert_true(got == partner + 0.5);
    comm_tensor_destroy(tv);
    comm_tensor_destroy(tg);
  }
}

static void a_message_of_the_wrong_size_is_a_mismatch(void **state) {
  (void)state;
  uint8_t small[8] = {0}, big[16] = {0};
  comm_tensor_t *ts = bytes_at(small, 8), *tb = bytes_at(big, 16);
  comm_handle_t *h = NULL;
  OK(comm_recv(world, ts, left(), 6, &h));
  OK(comm_send(world, tb, right(), 6, NULL));
  comm_status_t s = comm_handle_wait(h, COMM_TIMEOUT_DEFAULT);
  assert_int_equal(s, COMM_ERR_MISMATCH);
  assert_non_null(strstr(comm_last_error(), "bytes"));
  OK(comm_handle_destroy(h));
  comm_tensor_destroy(ts);
  comm_tensor_destroy(tb);
  /* It runs last: with FI_OFI_RXM_ENABLE_DYN_RBUF=1 (comm sets 0 unless the
   * user chose), tcp;ofi_rxm drops the connection of a truncated message. */
}

static void *abort_later(void *group) {
  struct timespec nap = {0, 200 * 1000 * 1000};
  nanosleep(&nap, NULL);
  comm_abort((comm_t *)group);
  return NULL;
}

static void abort_from_another_thread_unblocks_a_wait(void **state) {
  (void)state;
  int *members = malloc(sizeof(int) * (size_t)size);
  for (int r = 0; r < size; ++r) members[r] = r;
  comm_t *group = NULL;
  OK(comm_group_create(&group, world, size, members, "abortable"));
  free(members);
  uint8_t byte;
  comm_tensor_t *t = bytes_at(&byte, 1);
  pthread_t thread;
  pthread_create(&thread, NULL, abort_later, group);
  /* Nobody sends this: only the abort can end the wait. */
  assert_int_equal(comm_recv(group, t, left(), 99, NULL), COMM_ERR_ABORTED);
  assert_non_null(strstr(comm_last_error(), "abort"));
  pthread_join(thread, NULL);
  assert_int_equal(comm_barrier(group, NULL), COMM_ERR_ABORTED);
  OK(comm_destroy(group));
  comm_tensor_destroy(t);
  OK(comm_barrier(world, NULL));
}

static void queries_agree_with_the_launcher(void **state) {
  (void)state;
  const char *r = getenv("COMM_RANK"), *n = getenv("COMM_WORLD_SIZE");
  assert_non_null(r);
  assert_non_null(n);
  assert_int_equal(rank, atoi(r));
  assert_int_equal(size, atoi(n));
  int local_rank, local_size;
  OK(comm_local_rank(&local_rank, world));
  OK(comm_local_size(&local_size, world));
  assert_int_equal(local_size, size); /* one node */
  assert_int_equal(local_rank, rank);
  const char *name = NULL;
  OK(comm_name(&name, world));
  assert_string_equal(name, "world");
}

int main(void) {
  if (join_world() != 0) return 1;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(queries_agree_with_the_launcher),
      cmocka_unit_test(ring_64mib_every_rank_sends_first),
      cmocka_unit_test(tags_keep_concurrent_messages_apart),
      cmocka_unit_test(same_tag_messages_arrive_in_order),
      cmocka_unit_test(batches_in_opposite_orders_complete),
      cmocka_unit_test(empty_messages_and_blocking_pairs),
      cmocka_unit_test(abort_from_another_thread_unblocks_a_wait),
      cmocka_unit_test(a_message_of_the_wrong_size_is_a_mismatch),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  comm_destroy(world);
  return failed;
}
