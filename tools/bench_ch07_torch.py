#!/usr/bin/env python3
"""PyTorch's CPU attention, timed like chapter 7's benchmark: softmax(q @ k.T / sqrt(d)) @ v.

    bench_ch07_torch.py [--n 1024] [--d 64] [--dtype float64] [--causal] [--repetitions 20]

One thread (torch.set_num_threads(1)); inputs and the causal mask are made before timing; three
warm-up calls, then REPETITIONS timed calls. Prints one JSON object: the median and every
sample, in CPU seconds of this process (time.process_time) and in wall seconds.
Needs Debian's python3-torch (run it with /usr/bin/python3); never a build dependency.
"""
from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1024)
    parser.add_argument("--d", type=int, default=64)
    parser.add_argument("--dtype", choices=["float64", "float32"], default="float64")
    parser.add_argument("--causal", action="store_true")
    parser.add_argument("--repetitions", type=int, default=20)
    args = parser.parse_args()
    try:
        import torch
    except ImportError:
        print(json.dumps({"error": "python3-torch is not installed"}))
        return 2
    torch.set_num_threads(1)
    dtype = getattr(torch, args.dtype)
    generator = torch.Generator().manual_seed(7)
    q, k, v = (torch.randn(args.n, args.d, generator=generator, dtype=dtype) for _ in range(3))
    allowed = torch.ones(args.n, args.n, dtype=torch.bool).tril()
    scale = 1.0 / math.sqrt(args.d)

    def attention() -> torch.Tensor:
        scores = q @ k.T * scale
        if args.causal:
            scores = scores.masked_fill(~allowed, float("-inf"))
        return torch.softmax(scores, dim=-1) @ v

    with torch.no_grad():
        for _ in range(3):
            attention()
        cpu, wall = [], []
        for _ in range(args.repetitions):
            c0, w0 = time.process_time(), time.perf_counter()
            attention()
            cpu.append(time.process_time() - c0)
            wall.append(time.perf_counter() - w0)
    print(json.dumps({"torch": torch.__version__, "threads": torch.get_num_threads(), "n": args.n,
                      "d": args.d, "dtype": args.dtype, "causal": args.causal,
                      "median_cpu_s": statistics.median(cpu), "median_wall_s": statistics.median(wall),
                      "cpu_s": cpu, "wall_s": wall}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
