#!/usr/bin/env python3
"""Chapter 2's K-fold in PyTorch, timed, for chapter 2's benchmark.

The chapter-2 K-fold in PyTorch, for `chapters/02-small-models` bench: the same set-up as the
C++ trainer (scalebook/mlp.hpp), timed on one thread in float32.

    ch02_torch.py [DATA_DIR] [--repeat N]   prints "torch_seconds <t>" (the best of N runs, in
                                                  CPU seconds of the process, as ch02_bench times its
                                                  own), "torch_mean_mae <m>" and "torch_version <v>"

Set-up (DLwP 2nd ed., section 4.3): Boston housing without the B column (12 features), the
book's 404 training rows (scalebook::boston_training_rows: the first 404 of a seeded shuffle of
the 506), 4 contiguous validation folds of floor(404/4) = 101 rows; features standardised per fold with the
training part's mean and population standard deviation; Dense(64, relu) - Dense(64, relu) -
Dense(1); Glorot-uniform weights, zero biases; RMSprop lr 1e-3, rho 0.9, eps 1e-7; MSE loss;
100 epochs of shuffled mini-batches of 16. Timed: the training and the per-epoch validation MAE,
not the CSV reading. Needs python3-torch (run with Debian's /usr/bin/python3); optional.
"""
import argparse
import csv
import os
import sys
import time

import torch


def load_boston(data_dir):
    with open(os.path.join(data_dir, "boston_house_prices.csv"), newline="") as f:
        rows = list(csv.reader(f))
    header = rows[1]
    b = header.index("B")
    x = [[float(v) for i, v in enumerate(r[:-1]) if i != b] for r in rows[2:]]
    y = [float(r[-1]) for r in rows[2:]]
    return torch.tensor(x, dtype=torch.float32), torch.tensor(y, dtype=torch.float32).unsqueeze(1)


M64 = (1 << 64) - 1


def shuffled_indices(n, seed):
    """scalebook::shuffled_indices: Fisher-Yates driven by xoshiro256** seeded by splitmix64."""
    state, x = [], seed & M64
    for _ in range(4):
        x = (x + 0x9E3779B97F4A7C15) & M64
        z = x
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        state.append(z ^ (z >> 31))

    def rotl(v, k):
        return ((v << k) | (v >> (64 - k))) & M64

    def next_u64():
        result = (rotl((state[1] * 5) & M64, 7) * 9) & M64
        t = (state[1] << 17) & M64
        state[2] ^= state[0]
        state[3] ^= state[1]
        state[1] ^= state[2]
        state[0] ^= state[3]
        state[2] ^= t
        state[3] = rotl(state[3], 45)
        return result

    order = list(range(n))
    for i in range(n - 1, 0, -1):
        j = next_u64() % (i + 1)
        order[i], order[j] = order[j], order[i]
    return order


def build_model():
    model = torch.nn.Sequential(torch.nn.Linear(12, 64), torch.nn.ReLU(),
                                torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1))
    for m in model:
        if isinstance(m, torch.nn.Linear):
            torch.nn.init.xavier_uniform_(m.weight)
            torch.nn.init.zeros_(m.bias)
    return model


def kfold(x, y, k=4, epochs=100, batch=16):
    n = x.shape[0]
    size = n // k
    maes = []
    for fold in range(k):
        val = torch.arange(fold * size, (fold + 1) * size)
        train = torch.cat([torch.arange(0, fold * size), torch.arange((fold + 1) * size, n)])
        xt, yt, xv, yv = x[train], y[train], x[val], y[val]
        mean, std = xt.mean(0), xt.std(0, unbiased=False)
        xt, xv = (xt - mean) / std, (xv - mean) / std
        model = build_model()
        # PyTorch's RMSprop: alpha is Keras's rho; both divide by sqrt(v) + eps.
        opt = torch.optim.RMSprop(model.parameters(), lr=1e-3, alpha=0.9, eps=1e-7)
        loss_fn = torch.nn.MSELoss()
        for _ in range(epochs):
            perm = torch.randperm(xt.shape[0])
            for start in range(0, xt.shape[0], batch):
                idx = perm[start:start + batch]
                opt.zero_grad()
                loss = loss_fn(model(xt[idx]), yt[idx])
                loss.backward()
                opt.step()
            with torch.no_grad():
                val_mae = (model(xv) - yv).abs().mean().item()
        maes.append(val_mae)
    return maes


def main():
    parser = argparse.ArgumentParser(description="DLwP's K-fold in PyTorch, one thread, timed")
    parser.add_argument("data_dir", nargs="?", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "data"))
    parser.add_argument("--repeat", type=int, default=3,
                        help="run the K-fold this many times and report the best (as ch02_bench does)")
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error(f"--repeat must be at least 1, not {args.repeat}")
    torch.set_num_threads(1)
    x, y = load_boston(args.data_dir)
    # The book's training set: the first 404 rows of a seeded shuffle (DLwP's 404 / 102 split).
    train = torch.tensor(shuffled_indices(506, 113)[:404])
    x, y = x[train], y[train]
    best = None
    for _ in range(args.repeat):
        torch.manual_seed(0)
        start = time.process_time()  # CPU time, as ch02_bench's std::clock()
        maes = kfold(x, y)
        seconds = time.process_time() - start
        if best is None or seconds < best[0]:
            best = (seconds, maes)
    seconds, maes = best
    print("torch_fold_mae " + " ".join(f"{m:.3f}" for m in maes))
    print(f"torch_mean_mae {sum(maes) / len(maes):.3f}")
    print(f"torch_seconds {seconds:.3f}")
    print(f"torch_version {torch.__version__}")


if __name__ == "__main__":
    main()
