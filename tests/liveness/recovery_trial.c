/* One randomized recovery trial: the ranks run a loop of collectives (every
 * kind, sizes from one element to pipelined), checking every result against
 * a reference computed here; ranks chosen by the seed die (SIGKILL from a
 * thread, at a random moment of a random iteration). After each collective
 * the ranks agree (comm_agree) on whether it succeeded everywhere: a rank
 * whose call failed revokes first, and when the agreement fails, finds
 * a failure or finds a failed call, they shrink and redo the iteration on
 * the survivors. Run under commrun --keep-going.
 *
 * The seed fixes the plan, the same on every rank: how many die (1, 2 or
 * all but one), which, at which iteration and how long into it.
 *
 * With "regrow", run under commrun --replace: after each shrink the
 * members grow the communicator back to the job's size (comm_grow) with
 * the replacements commrun starts, which are this program again with
 * COMM_JOIN=1; an agreement tells them the iteration to go on from.
 *
 * Exit status: 0 with "rank R: ok" once every iteration committed and the
 * final communicator is the survivors in order; 3 for a wrong result (the
 * line says which); 4 when a recovery call failed; 6 for a replacement
 * whose grow failed because a member died meanwhile (commrun starts another).
 * The lowest surviving rank prints "plan: ... survivors S" first.
 * usage: recovery_trial SEED [ITERATIONS [regrow]] */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "comm.h"
#include "join.h"

enum { kMaxRanks = 64, kKinds = 9 };
static const int64_t kCounts[] = {1, 37, 4096, 65536}; /* elements per rank and block */

static uint64_t mix(uint64_t x) { /* splitmix64: the plan from the seed */
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

static int64_t value(int world_rank, int iteration, int64_t j) {
  return (int64_t)(world_rank + 1) * 1000003 + (int64_t)iteration * 101 + j;
}

struct plan {
  int victims;
  int victim[kMaxRanks]; /* per world rank: 1 when it dies */
  int kill_iteration[kMaxRanks];
  long kill_delay_us[kMaxRanks];
};

static struct plan make_plan(uint64_t seed, int size, int iterations) {
  struct plan p;
  memset(&p, 0, sizeof p);
  uint64_t r = mix(seed);
  const int choices[3] = {1, 2, size - 1};
  p.victims = choices[r % 3];
  if (p.victims > size - 1) p.victims = size - 1;
  if (p.victims < 1) p.victims = 1;
  for (int chosen = 0; chosen < p.victims;) {
    r = mix(r);
    const int w = (int)(r % (uint64_t)size);
    if (p.victim[w]) continue;
    p.victim[w] = 1;
    p.kill_iteration[w] = (int)(mix(r + 1) % (uint64_t)(iterations / 2));
    p.kill_delay_us[w] = (long)(mix(r + 2) % 3000);
    ++chosen;
  }
  return p;
}

static long delay_us;
static void *die_later(void *unused) {
  (void)unused;
  struct timespec t = {delay_us / 1000000, (delay_us % 1000000) * 1000};
  nanosleep(&t, NULL);
  kill(getpid(), SIGKILL);
  return NULL;
}

static int world_of(comm_t *comm, int rank) {
  int w = -1;
  comm_rank_to_world(&w, comm, rank);
  return w;
}

static comm_tensor_t *tensor(int64_t *data, int64_t count) {
  comm_tensor_t *t = NULL;
  comm_tensor_create(&t, data, COMM_INT64, 1, &count);
  return t;
}

/* Runs collective `kind` of iteration `iteration` on `comm` with `count`
 * elements; on success checks the result (sets *wrong and says what). */
static comm_status_t run(comm_t *comm, int kind, int iteration, int64_t count, int64_t *in, int64_t *out, int *wrong) {
  int rank = 0, size = 0;
  comm_rank(&rank, comm);
  comm_size(&size, comm);
  const int me = world_of(comm, rank);
  const int root = iteration % size;
  const int64_t blocks = (int64_t)size * count;
  for (int64_t j = 0; j < blocks; ++j) in[j] = value(me, iteration, j);
  memset(out, 0, sizeof(int64_t) * blocks);
  comm_tensor_t *small_in = tensor(in, count), *small_out = tensor(out, count);
  comm_tensor_t *big_in = tensor(in, blocks), *big_out = tensor(out, blocks);
  comm_status_t status = COMM_OK;
  const char *name = "";
  switch (kind) {
    case 0:
      name = "all_reduce";
      status = comm_all_reduce(comm, small_in, small_out, COMM_OP_SUM, NULL);
      break;
    case 1:
      name = "all_gather";
      status = comm_all_gather(comm, small_in, big_out, NULL);
      break;
    case 2:
      name = "broadcast";
      status = comm_broadcast(comm, small_in, small_out, root, NULL);
      break;
    case 3:
      name = "reduce_scatter";
      status = comm_reduce_scatter(comm, big_in, small_out, COMM_OP_SUM, NULL);
      break;
    case 4:
      name = "all_to_all_single";
      status = comm_all_to_all_single(comm, big_in, big_out, NULL, NULL, NULL);
      break;
    case 5:
      name = "reduce";
      status = comm_reduce(comm, small_in, small_out, COMM_OP_MAX, root, NULL);
      break;
    case 6:
      name = "gather";
      status = comm_gather(comm, small_in, rank == root ? big_out : NULL, root, NULL);
      break;
    case 7:
      name = "scatter";
      status = comm_scatter(comm, rank == root ? big_in : NULL, small_out, root, NULL);
      break;
    default:
      name = "barrier";
      status = comm_barrier(comm, NULL);
      break;
  }
  comm_tensor_destroy(small_in);
  comm_tensor_destroy(small_out);
  comm_tensor_destroy(big_in);
  comm_tensor_destroy(big_out);
  if (status != COMM_OK) return status;
  for (int64_t j = 0; j < blocks && !*wrong; ++j) {
    const int64_t block = j / count, k = j % count;
    int64_t expected = 0;
    int checked = 1;
    switch (kind) {
      case 0:
      case 3:
        if (j >= count) {
          checked = 0;
          break;
        }
        for (int r = 0; r < size; ++r)
          expected += value(world_of(comm, r), iteration, kind == 0 ? j : rank * count + j);
        break;
      case 1: expected = value(world_of(comm, (int)block), iteration, k); break;
      case 2:
        checked = j < count;
        expected = value(world_of(comm, root), iteration, j);
        break;
      case 4: expected = value(world_of(comm, (int)block), iteration, rank * count + k); break;
      case 5: {
        checked = rank == root && j < count;
        int highest = 0;
        for (int r = 0; r < size; ++r) highest = world_of(comm, r) > highest ? world_of(comm, r) : highest;
        expected = value(highest, iteration, j);
        break;
      }
      case 6:
        checked = rank == root;
        expected = value(world_of(comm, (int)block), iteration, k);
        break;
      case 7:
        checked = j < count;
        expected = value(world_of(comm, root), iteration, rank * count + j);
        break;
      default: checked = 0; break;
    }
    if (checked && out[j] != expected) {
      printf("rank %d (world %d): WRONG: iteration %d %s of %lld on %d ranks: element %lld is %lld, expected %lld\n",
             rank, me, iteration, name, (long long)count, size, (long long)j, (long long)out[j], (long long)expected);
      *wrong = 1;
    }
  }
  return COMM_OK;
}

/* Shrinks *comm (destroying it unless it is the world); exits 4 on failure. */
static void shrink(comm_t **comm, comm_t *world, int me) {
  comm_t *smaller = NULL;
  if (comm_shrink(&smaller, *comm, NULL) != COMM_OK) {
    printf("world rank %d: comm_shrink failed: %s\n", me, comm_last_error());
    exit(4);
  }
  if (*comm != world) comm_destroy(*comm);
  *comm = smaller;
}

/* Whether the members of `comm` agree with no failure: the iteration the
 * old members are at (a newcomer passes -1, all ones, which the AND leaves
 * out) becomes everyone's. Exits 4 on failure. */
static int share_iteration(comm_t *comm, int *iteration, int me) {
  uint32_t flags = (uint32_t)*iteration;
  int failed = 0;
  const comm_status_t status = comm_agree(&flags, &failed, NULL, 0, comm);
  if (status != COMM_OK && status != COMM_ERR_REVOKED) {
    printf("world rank %d: comm_agree on the iteration failed: %s\n", me, comm_last_error());
    exit(4);
  }
  if (status == COMM_OK) *iteration = (int)flags;
  return status == COMM_OK && failed == 0;
}

/* Grows *comm back to `size` ranks with replacements, shrinking again when
 * a member dies meanwhile; exits 4 on failure. */
static void grow_back(comm_t **comm, comm_t *world, int size, int *iteration, int me, int *shrinks) {
  for (;;) {
    int current = 0;
    comm_size(&current, *comm);
    if (current == size && share_iteration(*comm, iteration, me)) return;
    if (current < size) {
      comm_t *grown = NULL;
      const comm_status_t status = comm_grow(&grown, *comm, size - current, NULL);
      if (status != COMM_OK && status != COMM_ERR_REMOTE) {
        printf("world rank %d: comm_grow failed: %s\n", me, comm_last_error());
        exit(4);
      }
      if (status == COMM_OK) {
        if (*comm != world) comm_destroy(*comm);
        *comm = grown;
        if (share_iteration(*comm, iteration, me)) return;
      }
    }
    shrink(comm, world, me);
    ++*shrinks;
  }
}

int main(int argc, char **argv) {
  const uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 10) : 1;
  const int iterations = argc > 2 ? atoi(argv[2]) : 24;
  const int regrow = argc > 3 && strcmp(argv[3], "regrow") == 0;
  const char *join = getenv("COMM_JOIN");
  const int newcomer = join != NULL && strcmp(join, "1") == 0;
  int me = -1, size = 0, iteration = -1, shrinks = 0, redone = 0;
  comm_t *world = NULL, *comm = NULL;
  if (newcomer) {
    if (comm_init(&comm, NULL) != COMM_OK) {
      printf("replacement: the grow it was to join failed: %s\n", comm_last_error());
      return 6;
    }
    comm_size(&size, comm);
  } else {
    world = join_world(&me, &size);
    comm = world;
  }
  if (size > kMaxRanks || size < 2 || iterations < 2) {
    fprintf(stderr, "2 to %d ranks and at least 2 iterations\n", kMaxRanks);
    return 1;
  }
  const struct plan plan = make_plan(seed, size, iterations);
  int lowest_survivor = 0;
  while (plan.victim[lowest_survivor]) ++lowest_survivor;
  if (me == lowest_survivor) {
    printf("plan: seed %llu, %d ranks, victims", (unsigned long long)seed, size);
    for (int w = 0; w < size; ++w) {
      if (plan.victim[w]) printf(" %d (iteration %d, +%ld us)", w, plan.kill_iteration[w], plan.kill_delay_us[w]);
    }
    printf(", survivors %d\n", size - plan.victims);
    fflush(stdout);
  }
  /* Nobody dies before every rank has finished comm_init, which is not
   * fault-tolerant: a member that dies while others are still joining fails
   * their comm_init. A rank that leaves this agreement knows every rank has
   * entered it; those still inside tolerate the deaths that follow. */
  if (newcomer) {
    grow_back(&comm, world, size, &iteration, me, &shrinks);
  } else {
    uint32_t joined = 1;
    if (comm_agree(&joined, NULL, NULL, 0, world) != COMM_OK) {
      printf("world rank %d: the first comm_agree failed: %s\n", me, comm_last_error());
      return 4;
    }
    iteration = 0;
  }
  const int64_t most = kCounts[sizeof kCounts / sizeof kCounts[0] - 1] * size;
  int64_t *in = malloc(sizeof(int64_t) * most), *out = malloc(sizeof(int64_t) * most);
  while (iteration < iterations) {
    if (me >= 0 && plan.victim[me] && iteration == plan.kill_iteration[me] && delay_us == 0) {
      delay_us = plan.kill_delay_us[me] + 1;
      pthread_t killer;
      pthread_create(&killer, NULL, die_later, NULL);
    }
    const uint64_t draw = mix(seed ^ ((uint64_t)iteration << 32));
    const int kind = (int)(draw % kKinds);
    const int64_t count = kCounts[(draw >> 8) % (sizeof kCounts / sizeof kCounts[0])];
    int wrong = 0;
    const comm_status_t status = run(comm, kind, iteration, count, in, out, &wrong);
    if (wrong) return 3;
    if (status != COMM_OK) comm_revoke(comm);
    uint32_t flags = status == COMM_OK;
    int failed = 0;
    const comm_status_t agreed = comm_agree(&flags, &failed, NULL, 0, comm);
    if (agreed != COMM_OK && agreed != COMM_ERR_REVOKED) {
      printf("world rank %d: comm_agree failed: %s\n", me, comm_last_error());
      return 4;
    }
    const int committed = agreed == COMM_OK && flags == 1;
    if (committed) ++iteration;
    else ++redone;
    if (!committed || failed > 0) {
      shrink(&comm, world, me);
      ++shrinks;
      if (regrow) grow_back(&comm, world, size, &iteration, me, &shrinks);
    }
  }
  if (me >= 0 && plan.victim[me]) pause(); /* its killer comes within milliseconds */
  /* Every victim is dead or about to be: agree until none is left. */
  for (;;) {
    uint32_t flags = 1;
    int failed = 0;
    if (comm_agree(&flags, &failed, NULL, 0, comm) != COMM_OK) {
      printf("world rank %d: final comm_agree failed: %s\n", me, comm_last_error());
      return 4;
    }
    if (failed == 0) break;
    shrink(&comm, world, me);
    ++shrinks;
    if (regrow) grow_back(&comm, world, size, &iteration, me, &shrinks);
  }
  /* The survivors in order, then (regrowing) the replacements: each rank
   * checks its own place. */
  int ok = 1, final_size = 0, final_rank = -1, survivors_before = 0;
  comm_size(&final_size, comm);
  comm_rank(&final_rank, comm);
  for (int w = 0; w < me; ++w) survivors_before += !plan.victim[w];
  const int survivors = size - plan.victims;
  if (regrow) {
    ok = final_size == size && (me >= 0 ? final_rank == survivors_before : final_rank >= survivors);
  } else {
    ok = final_size == survivors && final_rank == survivors_before;
  }
  if (!ok) printf("world rank %d: WRONG: rank %d of %d is not this rank's place\n", me, final_rank, final_size);
  printf("%s %d: %d shrinks, %d iterations redone%s\n", me >= 0 ? "world rank" : "replacement, final rank",
         me >= 0 ? me : final_rank, shrinks, redone, ok ? ": ok" : "");
  free(in);
  free(out);
  if (comm != world) comm_destroy(comm);
  if (world != NULL) comm_destroy(world);
  return ok ? 0 : 3;
}
