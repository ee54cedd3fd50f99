"""Data-parallel SGD on a small numpy model, with libcomm.

Every rank holds the same model (linear regression, mean squared error) and
an equal shard of the data. Each step, every rank computes the gradient on
its shard; all_reduce with ReduceOp.AVG turns the shard gradients into the
full-batch gradient on every rank, and every rank applies the same update.
The final weights equal those of training on all the data in one process.

    commrun -n 4 python3 data_parallel_sgd.py
"""

import numpy as np

import libcomm as comm

SAMPLES, FEATURES, STEPS, LEARNING_RATE = 96, 5, 200, 0.05


def make_data(seed=0):
    """The same data set on every rank: y = X @ true_w + 0.5 + noise."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(SAMPLES, FEATURES))
    true_w = np.arange(1.0, FEATURES + 1)
    y = x @ true_w + 0.5 + 0.01 * rng.normal(size=SAMPLES)
    return x, y


def gradient(params, x, y):
    """Gradient of the mean squared error of (weights, bias) = params on (x, y)."""
    error = x @ params[:-1] + params[-1] - y
    return np.append(2.0 * x.T @ error, 2.0 * error.sum()) / len(y)


def train(x, y, average_gradient=lambda g: g):
    params = np.zeros(FEATURES + 1)
    for _ in range(STEPS):
        params -= LEARNING_RATE * average_gradient(gradient(params, x, y))
    return params


def train_data_parallel(x, y):
    """Train on this rank's shard, averaging gradients over all ranks."""
    rank, size = comm.get_rank(), comm.get_group_size()
    shard = slice(rank * SAMPLES // size, (rank + 1) * SAMPLES // size)

    def average(g):
        mean, _ = comm.all_reduce(g, comm.ReduceOp.AVG)
        return mean

    return train(x[shard], y[shard], average)


def main():
    comm.init()
    x, y = make_data()
    distributed = train_data_parallel(x, y)
    single = train(x, y)  # what one process training on all the data gets
    assert np.allclose(distributed, single, rtol=0, atol=1e-12), (distributed, single)
    if comm.get_rank() == 0:
        print(f"{comm.get_group_size()} ranks: weights {np.round(distributed[:-1], 3)}, "
              f"bias {distributed[-1]:.3f}; single-process training agrees to 1e-12")
    comm.release()


if __name__ == "__main__":
    main()
