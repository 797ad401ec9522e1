#!/usr/bin/env python3
"""How much longer Nsight Compute reads a kernel than CUPTI does, measured on a kernel that does nothing, so
that py-crosscheck.sh can tell Nsight Compute's own cost per kernel from a difference in the attention
kernels' times.

  python3 scripts/ncu_floor.py cupti [N]   CUPTI's activity durations (through torch.profiler) of N empty
                                           kernels launched back to back: prints the median in ns
  python3 scripts/ncu_floor.py launch [N]  only the N launches, to run under ncu

The kernel is torch.cuda._sleep(0) (ATen's spin_kernel): one thread that reads the clock and exits.
"""
import statistics
import sys


def is_empty(name):
    return "spin" in name  # ATen's Sleep.cu names it spin_kernel


def launches(torch, n):
    for _ in range(n):
        torch.cuda._sleep(0)
    torch.cuda.synchronize()


def main(argv):
    if len(argv) < 2 or argv[1] not in ("cupti", "launch"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    n = int(argv[2]) if len(argv) > 2 else 200
    import torch
    if not torch.cuda.is_available():
        print("no CUDA GPU visible to torch", file=sys.stderr)
        return 3
    launches(torch, 20)  # module load and first-launch costs outside what is read
    if argv[1] == "launch":
        launches(torch, n)
        return 0
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        launches(torch, n)
    durs = [e.device_time_total * 1e3 for e in prof.events() if e.device_type.name == "CUDA" and is_empty(e.name)]
    if len(durs) < n // 2:
        print(f"torch.profiler saw {len(durs)} of {n} kernels", file=sys.stderr)
        return 4
    print(f"{statistics.median(durs):.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
