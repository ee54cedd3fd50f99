"""Run by the pip-install test under commrun with a venv's python, outside
the source tree: libcomm must come from that venv (with the libcomm.so it
carries), and a 2-rank all_reduce must match a reference computed here."""

import sys
from pathlib import Path

import numpy as np

import libcomm as comm

package = Path(comm.__file__).resolve().parent
if not package.is_relative_to(Path(sys.prefix).resolve()):
    sys.exit(f"libcomm was imported from {package}, not from the environment {sys.prefix}")
maps = Path("/proc/self/maps").read_text().splitlines()
loaded = {line.split()[-1] for line in maps if "libcomm.so" in line}
if loaded != {str(package / "libcomm.so.0")}:
    sys.exit(f"the libcomm.so loaded is {loaded}, not the one in {package}")

comm.init()
rank, size = comm.get_rank(), comm.get_group_size()
contributions = [np.arange(1000, dtype=np.float64) * (r + 1) + r for r in range(size)]
total, _ = comm.all_reduce(contributions[rank])
np.testing.assert_array_equal(total, np.sum(contributions, axis=0))
maxima = np.empty(1000, np.int32)
comm.all_reduce(np.arange(1000, dtype=np.int32) % (rank + 7), comm.ReduceOp.MAX, out=maxima)
np.testing.assert_array_equal(maxima, np.max([np.arange(1000, dtype=np.int32) % (r + 7) for r in range(size)], axis=0))
comm.release()
print(f"rank {rank} of {size}: libcomm {comm.__version__} from {package}: all_reduce as the reference")
