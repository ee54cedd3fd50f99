"""Data-parallel SGD that loses a rank mid-training and goes on without it.

Every rank holds its own shard of data (drawn from one distribution, a
different sample per rank) and the same model (linear regression, mean
squared error). Each step the ranks average their gradients (all_reduce),
then agree (comm.agree) on whether every rank's step succeeded, so that
they all commit it or all redo it. The last rank kills itself at step
KILL_STEP. The survivors' all_reduce fails naming it; they revoke the
group, agree, shrink to a group of themselves, scale the learning rate by
the share of the data that is left (the global batch shrank), and redo the
step on the survivors. The loss on a held-out set at the end must lie
within the run-to-run spread of undisturbed runs, which each survivor
computes itself by training on every shard in one process for several
draws of the data.

    commrun -n 4 --keep-going python3 fault_tolerant_sgd.py
"""

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


def train(size):
    """Data-parallel training that survives the death of the last rank."""
    me = comm.get_rank()
    x, y = shard(me)
    group, generation, rate = comm.WORLD_COMM_GROUP, 0, LEARNING_RATE
    params = np.zeros(FEATURES + 1)
    step = 0
    while step < STEPS:
        if me == size - 1 and step == KILL_STEP:
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
            survivors = f"survivors-{generation}"
            comm.shrink(group, survivors)
            if group != comm.WORLD_COMM_GROUP:
                comm.destroy_group(group)
            group = survivors
            rate *= comm.get_group_size(group) / old_size
            print(f"rank {me}: step {step}: {old_size - comm.get_group_size(group)} rank(s) lost; going on with "
                  f"{comm.get_group_size(group)}, learning rate {rate:.4f}", flush=True)
    return params, group


def main():
    comm.init()
    size = comm.get_group_size()
    params, group = train(size)
    x_test, y_test = held_out()
    final = loss(params, x_test, y_test)
    spread = undisturbed_losses(size)
    low, high = min(spread), max(spread)
    width = max(high - low, 1e-3)
    ok = comm.get_group_size(group) == size - 1 and low - width <= final <= high + width
    print(f"rank {comm.get_rank()}: held-out loss {final:.4f}; undisturbed runs {low:.4f} .. {high:.4f}"
          f"{': ok' if ok else ': FAILED'}", flush=True)
    if group != comm.WORLD_COMM_GROUP:
        comm.destroy_group(group)
    comm.release()
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
