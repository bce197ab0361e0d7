#!/usr/bin/env python3
"""Turns the scaling study's results (bench/scale/run.sh) into JSON, PNG plots and a page.

    report.py RESULTS.jsonl OUTDIR [--calibration CAL.jsonl] [--doc docs/scaling.md]

Efficiency is the simulated rate per rank over the node rate of the platform (every flop of
the local GEMMs is charged at that rate, so 1 means communication cost nothing). Words are
f64 elements a rank received, as counted by tsr_dist_gemm_ex (tsr_dist_stats), against the
memory-independent lower bounds (see bound()).
"""
import os
import sys

# This folder is not a package: keep its scripts from shadowing modules (matplotlib imports
# the standard library's `platform`).
sys.path = [p for p in sys.path if os.path.abspath(p or ".") != os.path.dirname(
    os.path.abspath(__file__))]

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import re  # noqa: E402
import statistics  # noqa: E402


def flops(speed):
    m = re.match(r"([0-9.eE+-]+)\s*([kMGTP]?)f", speed)
    scale = {"": 1, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}[m.group(2)]
    return float(m.group(1)) * scale


def bound(r):
    """Words a rank must receive. In the 3D regime (P >= d1 d2 / d3^2, d1 >= d2 >= d3 the
    sorted dimensions) the memory-independent bound with its constant, 3 (mnk/P)^(2/3) -
    (mn + mk + nk)/P (Ballard et al., SPAA 2012); in the two regimes of few processors for the
    shape, the bounds of Demmel et al. ("Communication-optimal parallel recursive rectangular
    matrix multiplication", IPDPS 2013) with constant 1: (d1 d2 d3^2 / P)^(1/2) for
    d1/d2 <= P < d1 d2 / d3^2, and d2 d3 (1 - 1/P) for P < d1/d2."""
    m, n, k, P = (float(r[x]) for x in ("m", "n", "k", "P"))
    d3, d2, d1 = sorted((m, n, k))
    if P >= d1 * d2 / (d3 * d3):
        return max(0.0, 3 * (m * n * k / P) ** (2 / 3) - (m * n + m * k + n * k) / P)
    if P >= d1 / d2:
        return (d1 * d2 * d3 * d3 / P) ** 0.5
    return d2 * d3 * (1 - 1 / P)


def load(path):
    rows = [json.loads(line) for line in open(path) if line.strip()]
    for r in rows:
        if "speed" in r:
            r["efficiency"] = r["gflops_per_rank"] * 1e9 / flops(r["speed"])
        r["words_bound"] = bound(r)
    return rows


def calibration(path, rows):
    cal = [json.loads(line) for line in open(path) if line.strip()]
    out = []
    for P in (2, 4):
        real = [r["seconds"] for r in cal if r.get("algorithm") == "summa" and r["P"] == P]
        sim = [r for r in rows if r.get("study") == "validation" and r["P"] == P]
        if not real or not sim:
            continue
        med = statistics.median(real)
        pred = sim[0]["seconds"]
        out.append({"P": P, "grid": sim[0]["grid"], "n": sim[0]["n"], "real_median_s": med,
                    "real_min_s": min(real), "real_max_s": max(real), "runs": len(real),
                    "simulated_s": pred, "error": (pred - med) / med,
                    "node_rate": sim[0]["speed"]})
    rates = {}
    for P in (1, 2, 4):
        v = [r["gflops_per_rank"] for r in cal if r.get("algorithm") == "self" and r["P"] == P]
        if v:
            rates[P] = (statistics.median(v), min(v), max(v))
    ping = {r["pingpong_bytes"]: r for r in cal if "pingpong_bytes" in r}
    return out, rates, ping


def plots(rows, outdir, prefix):
    try:
        import matplotlib
    except ImportError:
        print("report.py: no matplotlib, no plots")
        return []
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    files = []

    def series(study, node, topo, pick):
        def member(r):
            if r.get("study") == study:
                return True
            return (study == "weak" and r.get("study") == "strong" and
                    r["n"] == 2048 * math.isqrt(r["P"]) and math.isqrt(r["P"]) ** 2 == r["P"])
        pts = sorted(((r["P"], r) for r in rows if member(r) and r.get("node") == node and
                      r.get("topology") == topo and pick(r)), key=lambda t: t[0])
        return [p for p, _ in pts], [r for _, r in pts]

    summa = lambda r: r["ran"] == "summa" and r["algorithm"] != "2.5d"  # noqa: E731
    c_is = lambda c: (lambda r: r["ran"] == "2.5d" and r["replicas"] == c)  # noqa: E731
    for study, title in (("strong", "strong scaling, n = 65536"),
                         ("weak", "weak scaling, 2048 x 2048 per rank")):
        fig, ax = plt.subplots(figsize=(6.4, 4.2))
        for node, style in (("cpu", "-"), ("gpu", "--")):
            for name, pick in (("SUMMA", lambda r: r["replicas"] == 1),
                               ("2.5D c=4", c_is(4)), ("2.5D c=16", c_is(16))):
                x, rs = series(study, node, "fattree", pick)
                if x:
                    ax.plot(x, [r["efficiency"] for r in rs], style, marker="o",
                            label="%s, %s node (%s)" % (name, node, rs[0]["speed"]))
        if not ax.lines:
            plt.close(fig)
            continue
        ax.set_xscale("log", base=2)
        ax.set_ylim(0, 1.05)
        ax.axhline(0.8, color="grey", lw=0.5)
        ax.set_xlabel("P (simulated ranks, fat tree 200 Gb/s, 1 us)")
        ax.set_ylabel("efficiency (rate per rank / node rate)")
        ax.set_title(title)
        ax.legend(fontsize=7)
        f = os.path.join(outdir, "%s%s_efficiency.png" % (prefix, study))
        fig.tight_layout()
        fig.savefig(f, dpi=110)
        plt.close(fig)
        files.append(f)
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    x, rs = series("strong", "cpu", "fattree", lambda r: r["replicas"] == 1)
    if x:
        ax.plot(x, [r["words_mean"] for r in rs], marker="o", label="SUMMA (measured)")
        ax.plot(x, [r["words_bound"] for r in rs], "k:", label="lower bound 3(n^3/P)^(2/3) - 3n^2/P")
    x, rs = series("strong", "cpu", "fattree", c_is(4))
    if x:
        ax.plot(x, [r["words_mean"] for r in rs], marker="s", label="2.5D c=4 (measured, all)")
        ax.plot(x, [r["panel_words_mean"] for r in rs], marker="^",
                label="2.5D c=4, panel broadcasts only")
    if ax.lines:
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("P")
        ax.set_ylabel("f64 words received per rank")
        ax.set_title("words moved per rank, n = 65536")
        ax.legend(fontsize=7)
        f = os.path.join(outdir, "%swords.png" % prefix)
        fig.tight_layout()
        fig.savefig(f, dpi=110)
        files.append(f)
    plt.close(fig)
    return files


def table(rows, keys, heads):
    out = ["| " + " | ".join(heads) + " |", "|" + "---|" * len(heads)]
    for r in rows:
        out.append("| " + " | ".join(k(r) if callable(k) else str(r.get(k, "")) for k in keys)
                   + " |")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("outdir")
    ap.add_argument("--calibration")
    ap.add_argument("--doc")
    ap.add_argument("--check-smoke", action="store_true",
                    help="fail unless the smoke study ran whole and its numbers are sane")
    a = ap.parse_args()
    rows = load(a.results)
    cal, rates, ping = calibration(a.calibration, rows) if a.calibration else ([], {}, {})
    with open(os.path.join(a.outdir, "results.json"), "w") as f:
        json.dump({"benchmark": "scale", "results": rows, "calibration": cal,
                   "calibration_rates_gflops": rates}, f, indent=1)
    files = plots(rows, a.outdir, "")
    study = [r for r in rows if r.get("study") != "validation"]
    print(table(study, ["study", "node", "topology", "P", "grid", "m", "n", "k", "ran",
                        "replicas", lambda r: "%.4g" % r["seconds"],
                        lambda r: "%.3f" % r["efficiency"], lambda r: "%.4g" % r["words_mean"],
                        lambda r: "%.4g" % r["words_bound"]],
                ["study", "node", "net", "P", "grid", "m", "n", "k", "ran", "c", "sim s",
                 "eff", "words/rank", "bound"]))
    for c in cal:
        print("validation P=%d: real median %.3f s (%d runs, %.3f..%.3f), simulated %.3f s, "
              "error %+.1f %%" % (c["P"], c["real_median_s"], c["runs"], c["real_min_s"],
                                  c["real_max_s"], c["simulated_s"], 100 * c["error"]))
    if a.doc:
        write_doc(a.doc, rows, cal, rates, ping, files)
    if a.check_smoke:
        return check_smoke(rows)
    return 0


def check_smoke(rows):
    """The smoke study (run.sh --smoke): every run there, efficiencies in (0.5, 1], and at
    P = 16 the 2.5D panel broadcasts (c = 4 on 2 x 2 x 4) at most 1/sqrt(4) of SUMMA's words."""
    bad = []
    if len(rows) != 7:
        bad.append("%d runs instead of 7" % len(rows))
    for r in rows:
        if not 0.5 < r["efficiency"] <= 1.0 + 1e-9:
            bad.append("efficiency %.3f at P=%d %s" % (r["efficiency"], r["P"], r["ran"]))
    s = [r for r in rows if r["study"] == "strong" and r["P"] == 16 and r["replicas"] == 1 and
         r["topology"] == "fattree"]
    t = [r for r in rows if r["study"] == "strong" and r["P"] == 16 and r["replicas"] == 4]
    if not s or not t or not t[0]["panel_words_mean"] <= s[0]["words_mean"] / 2:
        bad.append("2.5D c=4 panel words not <= SUMMA's / 2 at P=16")
    auto = [r for r in rows if r["study"] == "tall-k"]
    if any(r["ran"] != "2.5d" for r in auto):
        bad.append("auto did not choose 2.5D for m, n << k")
    for b in bad:
        print("smoke check FAILED:", b)
    return 1 if bad else 0


def write_doc(path, rows, cal, rates, ping, files):
    import shutil
    imgdir = os.path.join(os.path.dirname(path), "scaling")
    os.makedirs(imgdir, exist_ok=True)
    imgs = []
    for f in files:
        shutil.copy(f, os.path.join(imgdir, os.path.basename(f)))
        imgs.append("scaling/" + os.path.basename(f))
    tmpl = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "scaling.md.in")).read()
    cpu = open("/proc/cpuinfo").read()
    model = re.search(r"model name\s*:\s*(.*)", cpu)

    def sel(study, node="cpu", topo="fattree"):
        out = [r for r in rows if r.get("study") == study and r.get("node") == node and
               r.get("topology") == topo]
        if study == "weak":  # the strong runs at 2048 x 2048 per rank belong here too
            out += [r for r in sel("strong", node, topo) if r["n"] == 2048 * math.isqrt(r["P"])
                    and math.isqrt(r["P"]) ** 2 == r["P"]]
        return sorted(out, key=lambda r: (r["P"], r["replicas"]))

    res_keys = ["P", "grid", "m", "n", "k", "ran", "replicas",
                lambda r: "%.4g" % r["seconds"], lambda r: "%.1f %%" % (100 * r["efficiency"]),
                lambda r: "%.4g" % r["words_mean"], lambda r: "%.4g" % r["panel_words_mean"],
                lambda r: "%.4g" % r["words_bound"]]
    res_heads = ["P", "grid", "m", "n", "k", "schedule", "c", "simulated s", "efficiency",
                 "words/rank", "panel words/rank", "lower bound"]
    sections = {
        "CPU": model.group(1) if model else "unknown",
        "CALIBRATION": table(cal, ["P", "grid", "n", "runs", lambda c: "%.3f" % c["real_median_s"],
                                   lambda c: "%.3f .. %.3f" % (c["real_min_s"], c["real_max_s"]),
                                   "node_rate", lambda c: "%.3f" % c["simulated_s"],
                                   lambda c: "%+.1f %%" % (100 * c["error"])],
                             ["P", "grid", "n", "runs", "real median s", "real range s",
                              "simulated node rate", "simulated s", "error"]) if cal else
        "(not run: `--no-calibrate`)",
        "RATES": ", ".join("P = %d: %.2f GFLOP/s per rank (%.2f .. %.2f)" % (P, *v)
                           for P, v in sorted(rates.items())) or "(not measured)",
        "PING": ", ".join("%d B: %.3g s one way, %.3g B/s" % (b, r["one_way_seconds"],
                                                             r["bandwidth_Bps"])
                          for b, r in sorted(ping.items())) or "(not measured)",
        "STRONG": table(sel("strong"), res_keys, res_heads),
        "WEAK": table(sel("weak"), res_keys, res_heads),
        "GPU": table(sel("strong", "gpu"), res_keys, res_heads),
        "TALL": table(sel("tall-k") + sel("tall-m"), res_keys, res_heads),
        "DRAGONFLY": table(sel("strong", "cpu", "dragonfly"), res_keys, res_heads),
        "PLOTS": "\n\n".join("![%s](%s)" % (os.path.basename(i), i) for i in imgs),
    }
    text = tmpl
    for k, v in sections.items():
        text = text.replace("@%s@" % k, v)
    with open(path, "w") as f:
        f.write(text)


if __name__ == "__main__":
    raise SystemExit(main())
