#!/usr/bin/env python3
"""Chapter 7's benchmark: the build's tiled attention against its naive one, PyTorch and Eigen.

    ch07.py --bench BUILD/chapters/07-under-the-hood/ch07_bench [--whose reference|yours]
                  [--out DIR] [--sweep] [--repetitions 10] [--require]

ch07_bench times the code of the build's track (the reference's, or the student's in the student
edition: --whose says which, for the rows' labels).
1. Causal attention at n = 1024, d = 64, double, one thread: the track's tiled attention
   (exercise 7.6, compiled at -O3 -march=native), the track's naive attention (exercise 4.3,
   causal_attention, compiled the same way), the benchmark's own naive Eigen version, and
   PyTorch's softmax(q @ k.T / sqrt(d) + mask) @ v (tools/scalebook/bench/ch07_torch.py, when
   python3-torch is installed), all in this one run; prints the ratios (goal: tiled at least 10x
   faster than PyTorch).
2. Eigen's own rate for the products of attention's shapes in the same run, (n, d)·(d, n) and
   (n, n)·(n, d), and the tiled attention's rate (FLOPs it performs) as a fraction of their mean
   (goal: at least one half).
3. With --sweep: naive (the track's, and the benchmark's own in double and float) and tiled,
   causal and not, n = 256 ... 8192; writes DIR/ch07_bench.dat and, if gnuplot is installed,
   log-log figures of time, GFLOP/s and peak memory against n (DIR/ch07_bench_*.svg).

Every side is timed the same way: after a warm-up of 0.3 CPU seconds, REPETITIONS repetitions,
each the mean CPU time per call over calls lasting at least MIN_TIME CPU seconds; the best
repetition counts (Google Benchmark's repetitions for ch07_bench, the same loop in
ch07_torch.py for PyTorch). CPU time does not count waiting for a core on a shared machine,
and the best of several is the least disturbed by other work. With --require, exits 1 when a goal
is missed.
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

from runner import at_least_one, parse

TOOLS = Path(__file__).resolve().parent


WARMUP = 0.3  # CPU seconds of calls before the timed repetitions, on every side


def run_bench(bench: Path, pattern: str, repetitions: int, min_time: float) -> dict[str, dict]:
    """The best repetition per benchmark name: {name: {"ms": cpu ms per call, counters...}}."""
    command = [str(bench), f"--benchmark_filter={pattern}", f"--benchmark_repetitions={repetitions}",
               f"--benchmark_min_warmup_time={WARMUP}", f"--benchmark_min_time={min_time}",
               "--benchmark_format=json"]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:  # 3: an exercise of the track is unfinished or wrong (its own message says)
        print(result.stderr.strip() or f"{bench.name} exited with status {result.returncode}")
        sys.exit(result.returncode)
    report = json.loads(result.stdout)
    best: dict[str, dict] = {}
    for entry in report["benchmarks"]:
        if entry.get("run_type") != "iteration":  # a repetition, not an aggregate
            continue
        unit = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[entry["time_unit"]]
        name = entry["run_name"]
        ms = entry["cpu_time"] * unit
        if name not in best or ms < best[name]["ms"]:
            best[name] = {key: value for key, value in entry.items() if isinstance(value, (int, float))}
            best[name]["ms"] = ms
    return best


def run_torch(n: int, repetitions: int, min_time: float) -> dict | None:
    python = "/usr/bin/python3" if Path("/usr/bin/python3").exists() else sys.executable
    try:
        result = subprocess.run([python, str(TOOLS / "ch07_torch.py"), "--n", str(n), "--causal",
                                 "--repetitions", str(repetitions), "--min-time", str(min_time),
                                 "--warmup", str(WARMUP)], capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as error:
        print(f"  (PyTorch not measured: {error})")
        return None
    try:
        data = json.loads(result.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        print(f"  (PyTorch not measured: {result.stderr.strip()[:200]})")
        return None
    if "error" in data:
        print(f"  (PyTorch not measured: {data['error']})")
        return None
    return data


MIN_TIME = 0.2  # CPU seconds of calls per repetition in the headline, on every side


def headline(bench: Path, repetitions: int, whose: str) -> bool:
    n, d = 1024, 64
    pattern = (f"^(tiled|naive|naive_eigen)/double/n:{n}/causal:1$|^eigen_(qk|pv)/double/n:{n}$")
    best = run_bench(bench, pattern, repetitions, MIN_TIME)
    tiled = best[f"tiled/double/n:{n}/causal:1"]
    naive = best[f"naive/double/n:{n}/causal:1"]
    naive_eigen = best[f"naive_eigen/double/n:{n}/causal:1"]
    qk, pv = best[f"eigen_qk/double/n:{n}"], best[f"eigen_pv/double/n:{n}"]
    torch = run_torch(n, repetitions, MIN_TIME)
    useful = n * (n + 1) / 2 * 4 * d  # FLOPs causal attention needs: 4·d per allowed score
    print(f"Causal attention, n = {n}, d = {d}, double, one thread. Every row: the best of {repetitions} "
          f"repetitions,\neach the mean CPU time per call over at least {MIN_TIME} s of calls, after a "
          f"{WARMUP} s warm-up.")
    print(f"  {'code timed':58} {'ms':>8} {'GFLOP/s needed':>15}")
    rows = []
    if torch:
        torch_ms = torch["best_cpu_s"] * 1e3
        rows.append((f"PyTorch {torch['torch']}: q k^T, mask, softmax, @ v", torch_ms))
    rows.append((f"naive, {whose}: 4.3 causal_attention", naive["ms"]))
    rows.append(("naive, the benchmark's own: n x n matrix in place, Eigen", naive_eigen["ms"]))
    rows.append((f"tiled, {whose}: 7.6 tiled_attention, 128 x 128 tiles", tiled["ms"]))
    for label, ms in rows:
        print(f"  {label:58} {ms:8.2f} {useful / (ms * 1e-3) * 1e-9:15.1f}")
    ok = True
    if torch:
        ratio = torch_ms / tiled["ms"]
        ok &= ratio >= 10
        print(f"  tiled attention is {ratio:.1f}x faster than PyTorch's (goal: at least 10x)")
    else:
        print("  PyTorch not measured (python3-torch is not installed): no ratio")
    print(f"  tiled attention is {naive['ms'] / tiled['ms']:.1f}x faster than the naive 4.3 and "
          f"{naive_eigen['ms'] / tiled['ms']:.1f}x faster than the benchmark's naive version; it "
          f"computed {int(tiled['tiles_computed'])} tiles and skipped {int(tiled['tiles_skipped'])}")
    eigen_rate = (qk["GFLOPs"] + pv["GFLOPs"]) / 2
    fraction = tiled["GFLOPs"] / eigen_rate
    ok &= fraction >= 0.5
    print("The machine's limit, measured in the same run (Eigen's products, double, one thread):")
    print(f"  (n, d)·(d, n), the shape of Q K^T:     {qk['ms']:7.2f} ms  {qk['GFLOPs']:6.1f} GFLOP/s")
    print(f"  (n, n)·(n, d), the shape of W V:       {pv['ms']:7.2f} ms  {pv['GFLOPs']:6.1f} GFLOP/s")
    print(f"  tiled attention performs its tile products at {tiled['GFLOPs']:.1f} GFLOP/s: "
          f"{fraction:.2f} of Eigen's mean rate (goal: at least 0.5)")
    return ok


def sweep(bench: Path, out: Path, repetitions: int) -> None:
    best = run_bench(bench, "^(tiled|naive|naive_eigen|eigen_qk|eigen_pv)/", repetitions, 0.1)
    out.mkdir(parents=True, exist_ok=True)
    data = out / "ch07_bench.dat"
    lines = ["# kind type n causal cpu_ms GFLOPs useful_GFLOPs peak_MiB"]
    print(f"\n{'benchmark':40} {'ms':>10} {'GFLOP/s':>9} {'needed':>9} {'peak MiB':>9}")
    for name, m in best.items():
        parts = name.split("/")
        kind, scalar = parts[0], parts[1]
        n = int(parts[2].split(":")[1])
        causal = int(parts[3].split(":")[1]) if len(parts) > 3 else 0
        lines.append(f"{kind} {scalar} {n} {causal} {m['ms']:.6g} {m.get('GFLOPs', 0):.6g} "
                     f"{m.get('useful_GFLOPs', 0):.6g} {m.get('peak_MiB', 0):.6g}")
        print(f"{name:40} {m['ms']:10.3f} {m.get('GFLOPs', 0):9.1f} {m.get('useful_GFLOPs', 0):9.1f} "
              f"{m.get('peak_MiB', 0):9.2f}")
    data.write_text("\n".join(lines) + "\n")
    print(f"wrote {data}")
    gnuplot = shutil.which("gnuplot")
    if not gnuplot:
        return
    series = [(kind, scalar) for kind in ("naive", "naive_eigen", "tiled") for scalar in ("double", "float")
              if any(name.startswith(f"{kind}/{scalar}/") for name in best)]

    def plot(name: str, column: int, ylabel: str, title: str, causal: int) -> None:
        curves = ", ".join(
            f"'< awk \"\\$1==\\\"{kind}\\\" && \\$2==\\\"{scalar}\\\" && \\$4=={causal}\" {data}' "
            f"using 3:{column} with linespoints title '{kind}, {scalar}'" for kind, scalar in series)
        script = (f"set terminal svg size 720,420 dynamic enhanced font 'Helvetica,13' background rgb 'white'\n"
                  f"set output '{out / name}'\nset logscale xy 2\nset key left top\nset grid\n"
                  f"set xlabel 'sequence length n (d = 64)'\nset ylabel '{ylabel}'\nset title '{title}'\n"
                  f"plot {curves}\n")
        subprocess.run([gnuplot], input=script, text=True, check=True)
        print(f"wrote {out / name}")

    plot("ch07_bench_time.svg", 5, "CPU time per call (ms)", "Causal attention, one thread: time", 1)
    plot("ch07_bench_gflops.svg", 7, "GFLOP/s needed", "Causal attention, one thread: useful rate", 1)
    plot("ch07_bench_memory.svg", 8, "peak heap MiB during a call", "Causal attention: peak memory", 1)


SUMMARY = ("causal attention at n = 1024, d = 64: the tiled attention (7.6) against the naive one (4.3), "
           "the benchmark's own Eigen version and PyTorch's, each the best of several repetitions in CPU time")


def options(parser: argparse.ArgumentParser) -> None:
    """The options a user gives (./workbook bench 7 shows them in its --help without building)."""
    parser.add_argument("--repetitions", type=at_least_one, default=10, metavar="N",
                        help="the best of N repetitions counts, on every side (default %(default)s)")
    parser.add_argument("--sweep", action="store_true", help="also measure n = 256 ... 8192 and draw figures")
    parser.add_argument("--out", type=Path, default=Path("ch07-bench"), metavar="DIR",
                        help="folder for --sweep's data and figures (default %(default)s)")
    parser.add_argument("--require", action="store_true", help="exit 1 when a goal is missed")


def main() -> int:
    args = parse(7, SUMMARY, options)
    ok = headline(args.bench, args.repetitions, args.whose)
    if args.sweep:
        sweep(args.bench, args.out, max(3, args.repetitions // 3))
    return 0 if ok or not args.require else 1


if __name__ == "__main__":
    sys.exit(main())
