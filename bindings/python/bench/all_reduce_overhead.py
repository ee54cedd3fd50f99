"""Per-call overhead of libcomm.all_reduce over the C call, side by side.

Runs rounds of C calls (all_reduce_loop.c, through ctypes) and rounds of
Python calls alternately, on the same communicator in the same process, and
prints the best round of each: 8-byte all_reduce time per call, and 64 MiB
bandwidth (C with its output reused and with a fresh output per call, as
Python's results are new arrays).

    commrun -n 2 python3 all_reduce_overhead.py path/to/libcomm_bench_loop.so
"""

import ctypes
import sys
import time

import numpy as np

import libcomm as comm
from libcomm.management import group_of

SMALL, LARGE = 2, 64 << 20 >> 2  # float32 elements: 8 B and 64 MiB


def python_round(x, calls):
    comm.barrier()
    start = time.perf_counter()
    for _ in range(calls):
        comm.all_reduce(x)
    return (time.perf_counter() - start) / calls


def main():
    loop = ctypes.CDLL(sys.argv[1]).comm_bench_all_reduce
    loop.restype = ctypes.c_double
    loop.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_int, ctypes.c_int]
    comm.init()
    world = ctypes.c_void_p(int(group_of(None, "bench").comm))

    def c_round(count, calls, fresh):
        seconds = loop(world, count, calls, fresh)
        if seconds < 0:
            raise RuntimeError("the C loop failed")
        return seconds

    small, large = np.ones(SMALL, np.float32), np.ones(LARGE, np.float32)
    best = {}
    for _ in range(7):
        for name, run in (("c", lambda: c_round(SMALL, 5000, 0)), ("py", lambda: python_round(small, 5000))):
            best[name] = min(best.get(name, 1.0), run())
    for _ in range(3):
        for name, run in (("c_reused", lambda: c_round(LARGE, 3, 0)), ("c_fresh", lambda: c_round(LARGE, 3, 1)),
                          ("py_large", lambda: python_round(large, 3))):
            best[name] = min(best.get(name, 1e9), run())
    if comm.get_rank() == 0:
        size = comm.get_group_size()
        gbps = {k: (LARGE * 4) / best[k] / 1e9 for k in ("c_reused", "c_fresh", "py_large")}
        print(f"{size} ranks, best round of each:")
        print(f"  8 B all_reduce:   C {best['c'] * 1e6:.2f} us   Python {best['py'] * 1e6:.2f} us   "
              f"overhead {(best['py'] - best['c']) * 1e6:+.2f} us/call")
        print(f"  64 MiB all_reduce: C {gbps['c_reused']:.2f} GB/s (output reused), "
              f"C {gbps['c_fresh']:.2f} GB/s (fresh output), Python {gbps['py_large']:.2f} GB/s "
              f"({100 * (gbps['py_large'] / gbps['c_fresh'] - 1):+.1f}% vs C fresh, "
              f"{100 * (gbps['py_large'] / gbps['c_reused'] - 1):+.1f}% vs C reused)")
    comm.barrier()  # nobody leaves while a peer may still read its last message
    comm.release()


if __name__ == "__main__":
    main()
