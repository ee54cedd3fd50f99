/* comm_grow and comm_init with COMM_JOIN=1, each checked against what the
 * test knows. Newcomers are this program again: rank 0 starts them with
 * COMM_JOIN=1 (and reaps them, so that a dead one is seen gone), except in
 * `replace`, where commrun --replace does. Each rank that ends in a correct
 * state prints "ok".
 *   basic N       the world grows by N newcomers: the grown communicator
 *                 has the world's ranks first, in order, then the
 *                 newcomers; a broadcast of the state from rank 0, an
 *                 all_reduce and a split of it are correct, and the world
 *                 still works after
 *   async         the same with comm_grow_async and one newcomer, while
 *                 the world runs an all_reduce meanwhile
 *   bad           count 0, different counts, a revoked communicator and
 *                 no newcomer but one with a wrong job secret (a short
 *                 deadline) fail on every rank with the right status, and
 *                 the newcomer is refused, saying why; a newcomer that
 *                 arrives for the grow that gave up fails at once; the next
 *                 grow works
 *   newcomer_dies the newcomer dies after it arrived: the grow fails on
 *                 every rank, naming it, well within the deadline, and the
 *                 world still works
 *   dies_in_grow  (under commrun --keep-going) the last rank dies while the
 *                 grow waits for its newcomer: the grow fails on every
 *                 survivor and the newcomer is told; the survivors shrink
 *                 and grow by another newcomer, which works
 *   replace       under commrun --keep-going --replace 1: the last rank
 *                 dies, the survivors shrink and grow by one, and commrun's
 *                 replacement joins; the grown communicator is correct
 * usage: grow MODE [N] */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "comm.h"
#include "join.h"

enum { kStateLength = 4099 };
/* The roles of the processes rank 0 starts as newcomers. */
static const char kNewcomer[] = "--newcomer", kNewcomerThatDies[] = "--newcomer-that-dies",
                  kNewcomerWithWrongSecret[] = "--newcomer-with-a-wrong-secret";
static const char *program_;
static int world_rank_ = -1;

static int check(int condition, const char *what) {
  if (!condition) fprintf(stderr, "world rank %d: FAILED: %s (last error: %s)\n", world_rank_, what, comm_last_error());
  return condition;
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static comm_status_t all_reduce_one(comm_t *comm, int64_t *value) {
  int64_t one = 1;
  comm_tensor_t *t = NULL;
  comm_tensor_create(&t, value, COMM_INT64, 1, &one);
  comm_status_t status = comm_all_reduce(comm, t, t, COMM_OP_SUM, NULL);
  comm_tensor_destroy(t);
  return status;
}

/* Sum over the ranks r of `comm` of r * 7 + 1, by all_reduce and by the test. */
static int sums_right(comm_t *comm) {
  int rank = 0, size = 0;
  comm_rank(&rank, comm);
  comm_size(&size, comm);
  int64_t value = rank * 7 + 1, expected = 0;
  for (int r = 0; r < size; ++r) expected += r * 7 + 1;
  return check(all_reduce_one(comm, &value) == COMM_OK, "all_reduce") && check(value == expected, "all_reduce's sum");
}

/* What the ranks of the job had before the newcomers came: rank 0 of the
 * grown communicator broadcasts it, every rank checks it. */
static int state_arrives(comm_t *grown) {
  int rank = 0;
  comm_rank(&rank, grown);
  int64_t *state = malloc(sizeof(int64_t) * kStateLength), length = kStateLength;
  for (int64_t i = 0; i < kStateLength; ++i) state[i] = rank == 0 ? i * 31 + 5 : -1;
  comm_tensor_t *t = NULL;
  comm_tensor_create(&t, state, COMM_INT64, 1, &length);
  int ok = check(comm_broadcast(grown, t, t, 0, NULL) == COMM_OK, "broadcast of the state");
  comm_tensor_destroy(t);
  for (int64_t i = 0; ok && i < kStateLength; ++i) ok = check(state[i] == i * 31 + 5, "the broadcast state");
  free(state);
  return ok;
}

/* A split of `grown` by parity of rank: each half's all_reduce is right. */
static int split_works(comm_t *grown) {
  int rank = 0;
  comm_rank(&rank, grown);
  comm_t *half = NULL;
  int ok = check(comm_split(&half, grown, rank % 2, rank, NULL) == COMM_OK, "comm_split of the grown communicator");
  if (ok) ok = sums_right(half);
  comm_destroy(half);
  return ok;
}

/* Every check on a grown communicator of `expected_size` ranks, the first
 * `old_size` of them the ranks that grew it. */
static int grown_works(comm_t *grown, int old_size, int expected_size, int old_rank) {
  int rank = 0, size = 0;
  comm_rank(&rank, grown);
  comm_size(&size, grown);
  int ok = check(size == expected_size, "the grown communicator's size");
  ok = ok && (old_rank >= 0 ? check(rank == old_rank, "an old rank keeps its rank")
                            : check(rank >= old_size && rank < size, "a newcomer's rank follows the old ranks"));
  return ok && state_arrives(grown) && sums_right(grown) && split_works(grown);
}

/* Newcomers started by rank 0, reaped by a thread of their own. */
struct newcomer {
  pid_t pid;
  int status;
  pthread_t reaper;
};

static void *reap(void *arg) {
  struct newcomer *n = arg;
  waitpid(n->pid, &n->status, 0);
  return NULL;
}

static void start_newcomer(struct newcomer *n, const char *role, int slot) {
  char slot_text[16];
  snprintf(slot_text, sizeof slot_text, "%d", slot);
  n->pid = fork();
  if (n->pid == 0) {
    setenv("COMM_JOIN", "1", 1);
    setenv("COMM_LAUNCH_SLOT", slot_text, 1);
    execl(program_, program_, role, (char *)NULL);
    _exit(127);
  }
  pthread_create(&n->reaper, NULL, reap, n);
}

static int newcomer_exited(struct newcomer *n, int code) {
  pthread_join(n->reaper, NULL);
  return check(WIFEXITED(n->status) && WEXITSTATUS(n->status) == code, "a newcomer's exit status");
}

/* A newcomer's life: join, take part in the grown communicator's checks. */
static int newcomer(const char *role) {
  comm_t *grown = NULL;
  if (strcmp(role, kNewcomerThatDies) == 0) {
    comm_handle_t *handle = NULL;
    comm_init_async(&grown, NULL, &handle);
    usleep(300 * 1000); /* it has arrived by now; the grow comes later */
    raise(SIGKILL);
  }
  if (strcmp(role, kNewcomerWithWrongSecret) == 0) {
    setenv("COMM_JOB_SECRET", "not the job's secret, but long enough", 1);
    const comm_status_t refused = comm_init(&grown, NULL);
    printf("newcomer with a wrong secret: %s\n", comm_last_error());
    return refused != COMM_OK && strstr(comm_last_error(), "secret") != NULL ? 0 : 3;
  }
  const comm_status_t status = comm_init(&grown, NULL);
  if (status != COMM_OK) {
    printf("newcomer: comm_init failed: %s\n", comm_last_error());
    return status == COMM_ERR_REMOTE ? 5 : 1;
  }
  int size = 0;
  comm_size(&size, grown);
  const int old_size = atoi(getenv("GROW_TEST_OLD_SIZE") ? getenv("GROW_TEST_OLD_SIZE") : "0");
  const int ok = grown_works(grown, old_size, size, -1);
  int rank = 0;
  comm_rank(&rank, grown);
  printf("newcomer, rank %d of %d: %s\n", rank, size, ok ? "ok" : "wrong");
  comm_destroy(grown);
  return ok ? 0 : 3;
}

static int grows_by(comm_t *world, int count, int rank, int size) {
  comm_t *grown = NULL;
  int ok = check(comm_grow(&grown, world, count, NULL) == COMM_OK, "comm_grow");
  const char *name = NULL;
  ok = ok && check(comm_name(&name, grown) == COMM_OK && strcmp(name, "world-grown") == 0, "the grown name");
  ok = ok && grown_works(grown, size, size + count, rank);
  comm_destroy(grown);
  return ok && sums_right(world);
}

static int basic(comm_t *world, int rank, int size, int count) {
  struct newcomer newcomers[16];
  if (count < 1 || count > 16) return check(0, "1 to 16 newcomers");
  for (int i = 0; rank == 0 && i < count; ++i) start_newcomer(&newcomers[i], kNewcomer, 1000 + i);
  int ok = grows_by(world, count, rank, size);
  for (int i = 0; rank == 0 && i < count; ++i) ok = newcomer_exited(&newcomers[i], 0) && ok;
  return ok;
}

static int async(comm_t *world, int rank, int size) {
  struct newcomer n;
  comm_t *grown = NULL;
  comm_handle_t *handle = NULL;
  int ok = check(comm_grow_async(&grown, world, 1, "bigger", &handle) == COMM_OK, "comm_grow_async");
  ok = ok && sums_right(world); /* the world works while it grows */
  if (rank == 0) start_newcomer(&n, kNewcomer, 1000);
  ok = ok && check(comm_handle_wait(handle, COMM_TIMEOUT_DEFAULT) == COMM_OK, "the grow's handle");
  comm_handle_destroy(handle);
  const char *name = NULL;
  ok = ok && check(comm_name(&name, grown) == COMM_OK && strcmp(name, "bigger") == 0, "the grown name");
  ok = ok && grown_works(grown, size, size + 1, rank);
  comm_destroy(grown);
  if (rank == 0) ok = newcomer_exited(&n, 0) && ok;
  return ok;
}

static int bad(comm_t *world, int rank, int size) {
  comm_t *grown = NULL;
  int ok = check(comm_grow(&grown, world, 0, NULL) == COMM_ERR_INVALID_ARGUMENT && grown == NULL, "count 0");
  ok = check(comm_grow(&grown, world, rank == 0 ? 2 : 1, NULL) == COMM_ERR_INVALID_ARGUMENT && grown == NULL,
             "different counts") &&
       ok;
  comm_t *copy = NULL;
  comm_split(&copy, world, 0, rank, "copy");
  if (rank == 0) comm_revoke(copy);
  ok = check(comm_grow(&grown, copy, 1, NULL) == COMM_ERR_REVOKED && grown == NULL, "a revoked communicator") && ok;
  comm_destroy(copy);

  comm_set_timeout(world, 1500);
  struct newcomer stranger;
  if (rank == 0) start_newcomer(&stranger, kNewcomerWithWrongSecret, 999);
  const double start = now_s();
  ok = check(comm_grow(&grown, world, 1, NULL) == COMM_ERR_TIMEOUT && grown == NULL, "no newcomer") && ok;
  ok = check(now_s() - start < 10, "no newcomer: within the deadline") && ok;
  if (rank == 0) ok = newcomer_exited(&stranger, 0) && ok;
  comm_set_timeout(world, 60000);
  if (rank == 0) {
    /* It takes the seat of the grow that gave up: it is told so at once. */
    struct newcomer late;
    start_newcomer(&late, kNewcomer, 1000);
    ok = newcomer_exited(&late, 5) && ok;
  }
  comm_barrier(world, NULL);
  struct newcomer n;
  if (rank == 0) start_newcomer(&n, kNewcomer, 1001);
  ok = grows_by(world, 1, rank, size) && ok;
  if (rank == 0) ok = newcomer_exited(&n, 0) && ok;
  return ok;
}

static int newcomer_dies(comm_t *world, int rank) {
  struct newcomer n;
  if (rank == 0) start_newcomer(&n, kNewcomerThatDies, 1000);
  usleep(1000 * 1000); /* it arrives and dies before the grow */
  comm_set_timeout(world, 20000);
  comm_t *grown = NULL;
  const double start = now_s();
  const comm_status_t status = comm_grow(&grown, world, 1, NULL);
  const char *error = comm_last_error();
  int ok = check(status == COMM_ERR_REMOTE && grown == NULL, "the grow fails naming the dead newcomer");
  ok = check(strstr(error, "has exited") != NULL || strstr(error, "killed") != NULL, "the error says it died") && ok;
  ok = check(now_s() - start < 10, "well within the deadline") && ok;
  comm_set_timeout(world, 60000);
  if (rank == 0) {
    pthread_join(n.reaper, NULL);
    ok = check(WIFSIGNALED(n.status) && WTERMSIG(n.status) == SIGKILL, "the newcomer was killed") && ok;
  }
  return sums_right(world) && ok;
}

static void *die_soon(void *unused) {
  (void)unused;
  usleep(200 * 1000);
  raise(SIGKILL);
  return NULL;
}

static struct newcomer first_;
static void *start_later(void *unused) {
  (void)unused;
  usleep(600 * 1000);
  start_newcomer(&first_, kNewcomer, 1000);
  return NULL;
}

static int dies_in_grow(comm_t *world, int rank, int size) {
  struct newcomer second;
  pthread_t killer, starter;
  if (rank == size - 1) pthread_create(&killer, NULL, die_soon, NULL);
  /* The members agree and rank 0 waits for the newcomer; the victim dies
   * meanwhile, and the newcomer comes after, into a world with a dead seat. */
  if (rank == 0) pthread_create(&starter, NULL, start_later, NULL);
  comm_t *grown = NULL;
  const comm_status_t status = comm_grow(&grown, world, 1, NULL);
  int ok = check(status == COMM_ERR_REMOTE && grown == NULL, "the grow fails as a member died in it");
  if (rank == 0) {
    pthread_join(starter, NULL);
    ok = newcomer_exited(&first_, 5) && ok; /* its comm_init says the grow failed */
  }
  comm_t *survivors = NULL;
  ok = check(comm_shrink(&survivors, world, NULL) == COMM_OK, "comm_shrink") && ok;
  if (rank == 0) start_newcomer(&second, kNewcomer, 1001);
  ok = check(comm_grow(&grown, survivors, 1, "world-grown") == COMM_OK, "the second grow") && ok;
  ok = ok && grown_works(grown, size - 1, size, rank);
  if (rank == 0) ok = newcomer_exited(&second, 0) && ok;
  comm_destroy(grown);
  comm_destroy(survivors);
  return ok;
}

static int replace(comm_t *world, int rank, int size) {
  int64_t value = 1;
  int ok = check(all_reduce_one(world, &value) == COMM_OK && value == size, "the first all_reduce");
  if (rank == size - 1) raise(SIGKILL);
  value = 1;
  /* A survivor that saw the death first may have revoked the world already. */
  const comm_status_t status = all_reduce_one(world, &value);
  ok = check(status == COMM_ERR_REMOTE || status == COMM_ERR_REVOKED, "the all_reduce after the death fails") && ok;
  comm_revoke(world);
  comm_t *survivors = NULL, *grown = NULL;
  ok = check(comm_shrink(&survivors, world, NULL) == COMM_OK, "comm_shrink") && ok;
  ok = check(comm_grow(&grown, survivors, 1, "world-grown") == COMM_OK, "comm_grow of the survivors") && ok;
  ok = ok && grown_works(grown, size - 1, size, rank);
  comm_destroy(grown);
  comm_destroy(survivors);
  return ok;
}

int main(int argc, char **argv) {
  program_ = argv[0];
  const char *mode = argc > 1 ? argv[1] : "";
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (strncmp(mode, "--", 2) == 0 || (getenv("COMM_JOIN") && strcmp(getenv("COMM_JOIN"), "1") == 0)) {
    return newcomer(mode); /* commrun's replacement has the mode of the rank it replaces */
  }
  int rank = 0, size = 0;
  comm_t *world = join_world(&rank, &size);
  world_rank_ = rank;
  char old_size[16];
  const int shrunk = strcmp(mode, "replace") == 0 || strcmp(mode, "dies_in_grow") == 0;
  snprintf(old_size, sizeof old_size, "%d", shrunk ? size - 1 : size);
  setenv("GROW_TEST_OLD_SIZE", old_size, 1);
  int ok = 0;
  if (strcmp(mode, "basic") == 0) ok = basic(world, rank, size, argc > 2 ? atoi(argv[2]) : 1);
  else if (strcmp(mode, "async") == 0) ok = async(world, rank, size);
  else if (strcmp(mode, "bad") == 0) ok = bad(world, rank, size);
  else if (strcmp(mode, "newcomer_dies") == 0) ok = newcomer_dies(world, rank);
  else if (strcmp(mode, "replace") == 0) ok = replace(world, rank, size);
  else if (strcmp(mode, "dies_in_grow") == 0) ok = dies_in_grow(world, rank, size);
  else fprintf(stderr, "unknown mode '%s'\n", mode);
  printf("world rank %d: %s\n", rank, ok ? "ok" : "wrong");
  comm_destroy(world);
  return ok ? 0 : 3;
}
