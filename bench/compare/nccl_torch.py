"""NCCL's all_reduce through PyTorch (torch.distributed, backend "nccl"),
one rank on one GPU, at the sizes comm-bench uses: the yardstick that
scripts/gpu-check.sh sets beside `comm-bench --memory cuda` at one rank on
a machine with one GPU (NCCL refuses two ranks on one device).

    python3 nccl_torch.py [BYTES...]   (default: 8 1024 65536 1048576 16777216 67108864)

Prints, per size, the median time of one blocking all_reduce of float32
(the call and a device synchronisation) over 20 runs after 5 warm-ups."""

import statistics
import sys
import time

import torch
import torch.distributed as dist


def main():
    sizes = [int(s) for s in sys.argv[1:]] or [8, 1 << 10, 64 << 10, 1 << 20, 16 << 20, 64 << 20]
    dist.init_process_group("nccl", store=dist.HashStore(), rank=0, world_size=1,
                            device_id=torch.device("cuda", 0))
    print(f"NCCL {'.'.join(map(str, torch.cuda.nccl.version()))} through torch {torch.__version__}, "
          f"{torch.cuda.get_device_name(0)}, 1 rank")
    print(f"{'bytes':>12} {'median_us':>12}")
    for size in sizes:
        x = torch.ones(max(size // 4, 1), dtype=torch.float32, device="cuda")
        times = []
        for run in range(25):
            torch.cuda.synchronize()
            start = time.perf_counter()
            dist.all_reduce(x)
            torch.cuda.synchronize()
            if run >= 5:
                times.append((time.perf_counter() - start) * 1e6)
        print(f"{size:>12} {statistics.median(times):>12.2f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
