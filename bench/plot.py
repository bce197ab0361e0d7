#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Draws PNG plots from the benchmarks' JSON files (scripts/bench.sh runs it).

    bench/plot.py RESULTS_DIR

Every benchmark writes {"benchmark": NAME, "results": [row, ...]}. Rows with a size (n, or
m/n/k) and GFLOP/s columns become lines of GFLOP/s against size, one line per implementation
(Tessera and its anchor); other rows become grouped bars. One PNG per JSON file, next to it.
"""
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# Columns that describe a row rather than measure it.
KEYS = ("dtype", "threads", "P", "p", "grid", "ranks", "layout", "transa", "transb", "shape",
        "name", "op", "path", "device", "nb", "block")
SIZE = ("n", "m", "k")
# Columns that are not a rate of some implementation.
NOT_RATE = ("ratio", "median_s", "seconds", "bytes", "reps", "bytes_per_rank",
            "summa_bound_bytes", "flops")


def label(row):
    parts = []
    for k in KEYS:
        if k in row and not isinstance(row[k], float):
            parts.append(f"{k}={row[k]}")
    return ", ".join(parts)


def rate_columns(rows):
    cols = []
    for row in rows:
        for k, v in row.items():
            if (isinstance(v, (int, float)) and not isinstance(v, bool) and k not in KEYS
                    and k not in SIZE and k not in NOT_RATE and not k.endswith("_s")
                    and not k.startswith("ratio") and k not in cols):
                cols.append(k)
    return cols


def plot_lines(name, rows, cols, out):
    """GFLOP/s against size: one figure, one line per (row group, implementation)."""
    groups = {}
    for row in rows:
        square = all(k in row for k in SIZE) and row["m"] == row["n"] == row["k"]
        if not square and not ("n" in row and "m" not in row):
            continue
        groups.setdefault(label(row), []).append(row)
    if not groups:
        return False
    fig, ax = plt.subplots(figsize=(8, 5))
    for glabel, grows in sorted(groups.items()):
        grows.sort(key=lambda r: r["n"])
        for col in cols:
            pts = [(r["n"], r[col]) for r in grows if isinstance(r.get(col), (int, float))]
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o",
                        label=f"{col} ({glabel})" if glabel else col)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("n (square problems)")
    ax.set_ylabel("GFLOP/s" if "gemm" in name or "blas" in name else "rate")
    ax.set_title(name)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return True


def plot_bars(name, rows, cols, out):
    labels = [label(r) or str(i) for i, r in enumerate(rows)]
    sizes = ["x".join(str(r[k]) for k in ("m", "n", "k") if k in r) for r in rows]
    labels = [f"{l} {s}".strip() for l, s in zip(labels, sizes)]
    fig, ax = plt.subplots(figsize=(max(8, 0.6 * len(rows)), 5))
    width = 0.8 / max(1, len(cols))
    for j, col in enumerate(cols):
        xs = [i + j * width for i in range(len(rows))]
        ys = [r.get(col) if isinstance(r.get(col), (int, float)) else 0 for r in rows]
        ax.bar(xs, ys, width, label=col)
    ax.set_xticks([i + width * (len(cols) - 1) / 2 for i in range(len(rows))])
    ax.set_xticklabels(labels, rotation=60, ha="right", fontsize=7)
    ax.set_title(name)
    ax.legend(fontsize=8)
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def plot_ratios(name, rows, out):
    """Tessera / best anchor per case (defaults and, when measured, with wisdom), 1.0 marked:
    the view of bench_gemm that answers "are we at least as fast as every anchor?"."""
    rows = [r for r in rows if isinstance(r.get("ratio"), (int, float))]
    if not rows:
        return False
    labels = [f"{r.get('dtype', '')} {r.get('threads', '')}t "
              + "x".join(str(r[k]) for k in ("m", "n", "k") if k in r) for r in rows]
    cols = [c for c in ("ratio", "ratio_wisdom") if any(isinstance(r.get(c), (int, float))
                                                         for r in rows)]
    fig, ax = plt.subplots(figsize=(max(8, 0.5 * len(rows)), 5))
    width = 0.8 / len(cols)
    for j, col in enumerate(cols):
        xs = [i + j * width for i in range(len(rows))]
        ys = [r.get(col) if isinstance(r.get(col), (int, float)) else 0 for r in rows]
        ax.bar(xs, ys, width, label="defaults" if col == "ratio" else "with wisdom")
    ax.axhline(1.0, color="black", linewidth=0.8)
    vals = [r.get(c) for r in rows for c in cols if isinstance(r.get(c), (int, float)) and r.get(c) > 0]
    if vals and max(vals) / min(vals) > 8:  # a loaded machine's outliers: keep 1.0 readable
        ax.set_yscale("log", base=2)
    ax.set_xticks([i + width * (len(cols) - 1) / 2 for i in range(len(rows))])
    ax.set_xticklabels(labels, rotation=60, ha="right", fontsize=7)
    ax.set_ylabel("Tessera / best anchor")
    ax.set_title(f"{name}: ratio to the best anchor")
    ax.legend(fontsize=8)
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return True


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    folder = sys.argv[1]
    made = 0
    for fname in sorted(os.listdir(folder)):
        if not fname.endswith(".json"):
            continue
        path = os.path.join(folder, fname)
        try:
            with open(path) as f:
                data = json.load(f)
        except (OSError, ValueError) as e:
            print(f"plot: skipping {fname}: {e}")
            continue
        rows = [r for r in data.get("results", []) if isinstance(r, dict)]
        if not rows:
            continue
        name = data.get("benchmark", fname[:-5])
        cols = rate_columns(rows)
        if not cols:
            continue
        out = path[:-5] + ".png"
        if not plot_lines(name, rows, cols, out):
            plot_bars(name, rows, cols, out)
        print(f"plot: wrote {out}")
        made += 1
        if name == "gemm_cpu" and plot_ratios(name, rows, path[:-5] + "_ratio.png"):
            print(f"plot: wrote {path[:-5]}_ratio.png")
    return 0 if made else 1


if __name__ == "__main__":
    sys.exit(main())
