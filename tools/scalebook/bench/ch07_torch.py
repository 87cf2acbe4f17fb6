#!/usr/bin/env python3
"""PyTorch's CPU attention, timed like chapter 7's benchmark: softmax(q @ k.T / sqrt(d)) @ v.

    ch07_torch.py [--n 1024] [--d 64] [--dtype float64] [--causal] [--repetitions 10]
                        [--min-time 0.2] [--warmup 0.3]

One thread (torch.set_num_threads(1)); inputs and the causal mask are made before timing. Timed
as Google Benchmark times ch07_bench (tools/scalebook/bench/ch07.py keeps its best repetition): calls for
WARMUP CPU seconds first, then REPETITIONS repetitions, each the mean CPU time per call over calls
that last at least MIN_TIME CPU seconds. Prints one JSON object: the best repetition
(best_cpu_s), their median and every one, in CPU seconds of this process (time.process_time).
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
    parser.add_argument("--repetitions", type=int, default=10)
    parser.add_argument("--min-time", type=float, default=0.2, help="CPU seconds of calls per repetition")
    parser.add_argument("--warmup", type=float, default=0.3, help="CPU seconds of calls before timing")
    args = parser.parse_args()
    if args.repetitions < 1 or args.min_time <= 0 or args.warmup < 0:
        parser.error("--repetitions must be at least 1, --min-time positive and --warmup not negative")
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

    def per_call(seconds: float) -> float:
        """Mean CPU seconds per call over calls lasting at least SECONDS."""
        calls, start = 0, time.process_time()
        while True:
            attention()
            calls += 1
            elapsed = time.process_time() - start
            if elapsed >= seconds:
                return elapsed / calls

    with torch.no_grad():
        per_call(args.warmup)
        cpu = [per_call(args.min_time) for _ in range(args.repetitions)]
    print(json.dumps({"torch": torch.__version__, "threads": torch.get_num_threads(), "n": args.n,
                      "d": args.d, "dtype": args.dtype, "causal": args.causal,
                      "best_cpu_s": min(cpu), "median_cpu_s": statistics.median(cpu), "cpu_s": cpu}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
