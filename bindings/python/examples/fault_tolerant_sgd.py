"""Data-parallel SGD that loses a rank mid-training and goes on without it,
or with a replacement.

Every rank holds its own shard of data (drawn from one distribution, a
different sample per rank) and the same model (linear regression, mean
squared error). Each step the ranks average their gradients (all_reduce),
then agree (comm.agree) on whether every rank's step succeeded, so that
they all commit it or all redo it. The last rank kills itself at step
KILL_STEP. The survivors' all_reduce fails naming it; they revoke the
group, agree, shrink to a group of themselves, scale the learning rate by
the share of the data that is left (the global batch shrank), and redo the
step on the survivors.

With ``--replace N`` (run under ``commrun --replace N``), the survivors then
grow the group by the ranks they lost, up to N in all: commrun starts this
script again in a dead rank's place with COMM_JOIN=1, whose init() joins the
grown group. Rank 0 broadcasts the model and the step, the learning rate
goes back with the group's size, the newcomer takes the shard of the rank it
replaces (its rank), and training goes on at the original size.

The loss on a held-out set at the end must lie within the run-to-run spread
of undisturbed runs, which each rank computes itself by training on every
shard in one process for several draws of the data.

    commrun -n 4 --keep-going python3 fault_tolerant_sgd.py
    commrun -n 4 --replace 1 python3 fault_tolerant_sgd.py --replace 1
"""

import argparse
import os
import signal

import numpy as np

import libcomm as comm

SHARD, FEATURES, STEPS, LEARNING_RATE, KILL_STEP = 64, 5, 150, 0.05, 40
TRUE_W = np.arange(1.0, FEATURES + 1)


def shard(rank, draw=0):
    """Rank ``rank``'s data in draw ``draw``: y = X @ TRUE_W + 0.5 + noise."""
    rng = np.random.default_rng(1000 * draw + rank)
    x = rng.normal(size=(SHARD, FEATURES))
    return x, x @ TRUE_W + 0.5 + 0.3 * rng.normal(size=SHARD)


def gradient(params, x, y):
    """Gradient of the mean squared error of (weights, bias) = params on (x, y)."""
    error = x @ params[:-1] + params[-1] - y
    return np.append(2.0 * x.T @ error, 2.0 * error.sum()) / len(y)


def loss(params, x, y):
    return float(np.mean((x @ params[:-1] + params[-1] - y) ** 2))


def held_out():
    rng = np.random.default_rng(99)
    x = rng.normal(size=(512, FEATURES))
    return x, x @ TRUE_W + 0.5 + 0.3 * rng.normal(size=512)


def undisturbed_losses(size, draws=5):
    """Held-out losses of training on all ``size`` shards in one process, per draw."""
    x_test, y_test = held_out()
    losses = []
    for draw in range(draws):
        shards = [shard(r, draw) for r in range(size)]
        params = np.zeros(FEATURES + 1)
        for _ in range(STEPS):
            params -= LEARNING_RATE * np.mean([gradient(params, x, y) for x, y in shards], axis=0)
        losses.append(loss(params, x_test, y_test))
    return losses


def share_state(group, params, step, rate, replacements):
    """Rank 0's training state, on every rank of ``group``."""
    state = comm.broadcast(np.append(params, [step, rate, replacements]), src=0, group=group)
    return state[:-3], int(state[-3]), float(state[-2]), int(state[-1])


def train(size, replacements, newcomer):
    """Data-parallel training that survives the death of the last rank, and
    grows back by up to ``replacements`` ranks; a ``newcomer`` joins a
    training under way."""
    me = comm.get_rank()
    x, y = shard(me)
    group, generation, rate = comm.WORLD_COMM_GROUP, 0, LEARNING_RATE
    params = np.zeros(FEATURES + 1)
    step = 0
    if newcomer:
        params, step, rate, replacements = share_state(group, params, step, rate, replacements)
        print(f"rank {me}: joined at step {step} in a lost rank's place, learning rate {rate:.4f}", flush=True)
    while step < STEPS:
        if me == size - 1 and step == KILL_STEP and not newcomer:
            os.kill(os.getpid(), signal.SIGKILL)
        try:
            total, _ = comm.all_reduce(gradient(params, x, y), comm.ReduceOp.SUM, group)
            ok = 1
        except comm.CommError:
            comm.revoke(group)  # no survivor stays blocked behind the dead rank
            ok = 0
        try:
            ok, failed = comm.agree(ok, group)
        except comm.CommRevokedError:
            ok, failed = 0, [None]
        if ok:
            params -= rate * total / comm.get_group_size(group)
            step += 1
        if not ok or failed:
            old_size = comm.get_group_size(group)
            generation += 1
            group = replace(group, f"survivors-{generation}", comm.shrink)
            rate *= comm.get_group_size(group) / old_size
            print(f"rank {me}: step {step}: {old_size - comm.get_group_size(group)} rank(s) lost; going on with "
                  f"{comm.get_group_size(group)}, learning rate {rate:.4f}", flush=True)
            count = min(old_size - comm.get_group_size(group), replacements)
            if count > 0:
                shrunk_size = comm.get_group_size(group)
                group = replace(group, f"grown-{generation}", lambda old, new: comm.grow(old, count, new))
                rate *= comm.get_group_size(group) / shrunk_size
                params, step, rate, replacements = share_state(group, params, step, rate, replacements - count)
                print(f"rank {me}: step {step}: {count} newcomer(s) joined; going on with "
                      f"{comm.get_group_size(group)}, learning rate {rate:.4f}", flush=True)
    return params, group


def replace(group, name, make):
    """Group ``name``, made by ``make(group, name)``, in place of ``group``
    (destroyed unless it is the world, which stays until release())."""
    make(group, name)
    if group != comm.WORLD_COMM_GROUP:
        comm.destroy_group(group)
    return name


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replace", type=int, default=0, metavar="N",
                        help="grow back by up to N lost ranks, which commrun --replace N starts (default 0: "
                             "go on shrunk)")
    args = parser.parse_args()
    newcomer = os.environ.get("COMM_JOIN") == "1"  # commrun --replace started this one in a lost rank's place
    comm.init()
    size = comm.get_group_size()
    params, group = train(size, args.replace, newcomer)
    x_test, y_test = held_out()
    final = loss(params, x_test, y_test)
    spread = undisturbed_losses(size)
    low, high = min(spread), max(spread)
    width = max(high - low, 1e-3)
    expected_size = size if args.replace > 0 else size - 1
    ok = comm.get_group_size(group) == expected_size and low - width <= final <= high + width
    print(f"rank {comm.get_rank()}: held-out loss {final:.4f} on {comm.get_group_size(group)} ranks; undisturbed "
          f"runs {low:.4f} .. {high:.4f}{': ok' if ok else ': FAILED'}", flush=True)
    if group != comm.WORLD_COMM_GROUP:
        comm.destroy_group(group)
    comm.release()
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
