"""The README's data-parallel SGD example reaches single-process training's weights."""

import importlib.util
import pathlib

import numpy as np

EXAMPLE = pathlib.Path(__file__).resolve().parent.parent / "examples" / "data_parallel_sgd.py"


def load_example():
    spec = importlib.util.spec_from_file_location("data_parallel_sgd", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_data_parallel_sgd_matches_single_process(size):
    sgd = load_example()
    x, y = sgd.make_data()
    distributed = sgd.train_data_parallel(x, y)
    single = sgd.train(x, y)
    np.testing.assert_allclose(distributed, single, rtol=0, atol=1e-12)
    # and it learned the model: weights 1..FEATURES, bias 0.5
    np.testing.assert_allclose(distributed, np.append(np.arange(1.0, sgd.FEATURES + 1), 0.5), atol=0.02)
