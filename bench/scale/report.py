#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Turns the scaling study's results (bench/scale/run.sh) into JSON, PNG plots and a page.

    report.py RESULTS.jsonl OUTDIR [--calibration CAL.jsonl] [--doc docs/scaling.md]
              [--bcast-sim SIM.jsonl] [--bcast-real REAL.jsonl] [--timeline TL.jsonl]
              [--parts cpu,bcast,gpu]

The page's sections of parts that did not run (--parts) are kept from the existing page
(between its <!-- NAME --> markers).

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


def jsonl(path):
    if not path or not os.path.exists(path):
        return []
    return [json.loads(line) for line in open(path) if line.strip()]


def schedule(r):
    """The name of a run's schedule in the GPU tables."""
    if r.get("algorithm") == "summa-skeleton":
        return "skeleton/%s" % r.get("bcast", "?")
    name = "summa"
    if r["ran"] == "2.5d":
        name = "2.5d c=%d" % r["replicas"]
        if r.get("node") != "gpu":
            return name
    if r.get("node") == "gpu" and r.get("bcast"):
        name += "/" + r["bcast"]
    if r.get("fabric"):
        name += " (%s)" % r["fabric"]
    if r.get("kfull") == "1":
        name += ", k = n"
    if r.get("panels2") == "1":
        name += ", 2x panels"
    return name


def gpu_steady(rows):
    """SUMMA's steady state on the GPU nodes (n_local = 16384, auto, rdma): per P, the run with
    PANELS panels and the one with twice as many (tag panels2=1); their difference over the added
    panels is one step in steady state, and the run extended to k = n is
    T(k) + (n - k) / 1024 steps. Where SUMMA also ran at k = n (tag kfull=1), the error of that
    extension against the direct simulation."""
    def pick(r, **tags):
        return (r.get("study") == "gpu-weak" and str(r.get("nl")) == "16384" and
                r.get("fabric") == "rdma" and r.get("bcast") == "auto" and r["ran"] == "summa" and
                all(r.get(k) == v for k, v in tags.items()))
    base = {r["P"]: r for r in rows if pick(r, panels2=None, kfull=None)}
    dbl = {r["P"]: r for r in rows if pick(r, panels2="1")}
    full = {r["P"]: r for r in rows if pick(r, kfull="1")}
    out = []
    for P in sorted(set(base) & set(dbl)):
        a, b = base[P], dbl[P]
        rate = flops(a["speed"])
        added = (b["k"] - a["k"]) / a["block"]
        step = (b["seconds"] - a["seconds"]) / added
        per_step = 2.0 * a["m"] * a["n"] * a["block"] / P / rate  # at the node rate
        t_full = a["seconds"] + (a["n"] - a["k"]) / a["block"] * step
        e_full = 2.0 * a["m"] * a["n"] * a["n"] / P / rate / t_full
        d = full.get(P)
        out.append({"P": P, "grid": a["grid"], "n": a["n"], "t1": a["seconds"],
                    "e1": a["efficiency"],
                    "k1": a["k"], "t2": b["seconds"], "k2": b["k"], "step": step,
                    "e_step": per_step / step, "t_full": t_full, "e_full": e_full,
                    "direct": d["seconds"] if d else None,
                    "e_direct": d["efficiency"] if d else None,
                    "err": (t_full - d["seconds"]) / d["seconds"] if d else None})
    return out


def steady_note(st):
    """One sentence on SUMMA's steady state at the largest P (docs/scaling.md)."""
    if not st:
        return "(not simulated in this run)"
    x = st[-1]
    nl = x["n"] / math.isqrt(x["P"])
    gbs = 2 * nl * 1024 * 8 / x["step"] / 1e9
    return ("%.1f %% of the node rate per step at P = %d: the ring delivers %.1f GB/s of the "
            "link's 24.25, and %.1f %% at k = n" % (100 * x["e_step"], x["P"], gbs,
                                                      100 * x["e_full"]))


def sim_cost(rows):
    """The simulator's wall time per GPU run (summa/auto, rdma), for docs/scaling.md."""
    out = []
    for r in sorted((r for r in rows if r.get("study", "").startswith("gpu-") and
                     r.get("fabric") == "rdma" and "sim_wall_seconds" in r),
                    key=lambda r: (r["study"], int(r.get("nl") or 0), r["ran"],
                                   r.get("kfull") or "", r.get("panels2") or "", r["P"])):
        what = ("weak, n_local = %s" % r["nl"]) if r["study"] == "gpu-weak" else \
            "strong, n = %d" % r["n"]
        out.append("%s, %s, P = %d, %d panels: %.0f s" % (
            what, schedule(r), r["P"], r["k"] // r["block"], r["sim_wall_seconds"]))
    return "; ".join(out) if out else "(no GPU run in this report)"


def gpu_steady_table(st):
    def opt(fmt, key):
        return lambda r: fmt % r[key] if r[key] is not None else ""
    keys = ["P", "grid", "n", lambda r: "%.4g (k = %d)" % (r["t1"], r["k1"]),
            lambda r: "%.4g (k = %d)" % (r["t2"], r["k2"]), lambda r: "%.4g" % (1e3 * r["step"]),
            lambda r: "%.1f %%" % (100 * r["e_step"]), lambda r: "%.4g" % r["t_full"],
            lambda r: "%.1f %%" % (100 * r["e_full"]), opt("%.4g", "direct"),
            lambda r: "%.1f %%" % (100 * r["e_direct"]) if r["e_direct"] is not None else "",
            lambda r: "%+.2f %%" % (100 * r["err"]) if r["err"] is not None else ""]
    heads = ["P", "grid", "n = k", "simulated s, 16 panels", "simulated s, 32 panels",
             "steady step ms", "steady efficiency", "k = n: extended s", "k = n: efficiency",
             "k = n: simulated s", "k = n: simulated efficiency", "extension's error"]
    return table(st, keys, heads)


def labels(s):
    out = {}
    for kv in s.split(","):
        k, _, v = kv.partition("=")
        out[k] = v
    return out


def bcast_groups(rows):
    """{(P, bytes): {algo: row}} of the broadcast benchmark's lines."""
    g = {}
    for r in rows:
        g.setdefault((r["P"], r["bytes"]), {})[r["algo"]] = r
    return dict(sorted(g.items()))


def bcast_tables(real, sim):
    def ms(r):
        if r is None:
            return ""
        if r.get("rounds", 1) > 1:
            return "%.3g [%.3g–%.3g]" % (1e3 * r["median_s"], 1e3 * r["min_s"], 1e3 * r["max_s"])
        return "%.3g" % (1e3 * r["median_s"])

    def ratio(a, b):
        return "%.2f" % (a["median_s"] / b["median_s"]) if a and b else ""

    out = {}
    for name, rows in (("BCASTREAL", real), ("BCASTSIM", sim)):
        if not rows:
            out[name] = None
            continue
        lines = []
        for (P, b), g in bcast_groups(rows).items():
            auto = g.get("auto")
            lines.append({"P": P, "MiB": "%.3g" % (b / 2**20), "mpi": ms(g.get("mpi")),
                          "ring": ms(g.get("ring")), "tree": ms(g.get("tree")),
                          "auto": (ms(auto) + " (%s)" % auto["ran"]) if auto else "",
                          "mpi/ring": ratio(g.get("mpi"), g.get("ring")),
                          "mpi/tree": ratio(g.get("mpi"), g.get("tree")),
                          "mpi/auto": ratio(g.get("mpi"), auto)})
        keys = ["P", "MiB", "mpi", "ring", "tree", "auto", "mpi/ring", "mpi/tree", "mpi/auto"]
        heads = ["P", "MiB", "MPI_Ibcast ms", "ring ms", "tree ms", "auto ms (ran)",
                 "MPI / ring", "MPI / tree", "MPI / auto"]
        if name == "BCASTREAL":
            heads[2:6] = [h.replace(" ms", " ms median [min–max]") for h in heads[2:6]]
        out[name] = table(lines, keys, heads) + (
            "\n\nRatios > 1: the pipelined form is faster. %s" % (
                "Median, minimum and maximum over %d rounds; a round's time is the slowest rank's mean over its repetitions (~20 ms of broadcasting). The 2 cores are shared with other jobs (load average %.1f when this report was written), and 4 ranks are oversubscribed 2 to a core." % (rows[0]["rounds"], os.getloadavg()[0])
                if name == "BCASTREAL" else "Segments: the default S of each size (column "
                "`segment` of the JSON)."))
    return out


def gpu_rows(rows, study):
    return sorted((r for r in rows if r.get("study") == study), key=lambda r: (
        int(r.get("nl", 0) or 0), r["P"], schedule(r)))


def gpu_table(rows):
    keys = [lambda r: r.get("nl", ""), "P", "grid", "m", "n", "k", schedule,
            lambda r: "%.4g" % r["seconds"], lambda r: "%.1f %%" % (100 * r["efficiency"]),
            lambda r: "%.4g" % r["words_mean"], lambda r: "%.4g" % r["words_bound"],
            lambda r: "%.2f" % (r["words_mean"] / r["words_bound"]) if r["words_bound"] else ""]
    heads = ["n_local", "P", "grid", "m", "n", "k", "schedule", "simulated s", "efficiency",
             "words/rank", "lower bound", "words / bound"]
    return table(rows, keys, heads)


def timeline_table(tl):
    out = []
    for t in tl:
        w, c = sum(t["wait"]), sum(t["compute"])
        out.append({"run": t["name"], "P": t["P"], "rank": t["rank"],
                    "panels": t["panels"], "wait": "%.4g" % w, "compute": "%.4g" % c,
                    "share": "%.0f %%" % (100 * w / (w + c) if w + c > 0 else 0),
                    "first": "%.4g" % t["wait"][0],
                    "steady": "%.4g" % (statistics.median(t["wait"][1:]) if len(t["wait"]) > 1
                                        else 0)})
    return table(out, ["run", "P", "rank", "panels", "wait", "compute", "share", "first",
                       "steady"],
                 ["run", "P", "rank", "panels", "waiting s", "multiplying s", "waiting share",
                  "first panel's wait s", "median wait per later panel s"])


def name_timelines(tl, rows):
    """Names each time line after its run (tags sched= and bcast= of its label)."""
    for t in tl:
        lab = labels(t["label"])
        t["name"] = ("skeleton/" + lab.get("bcast", "?")) if lab.get("sched") == "skeleton" \
            else "summa/%s (%s)" % (lab.get("bcast", "?"), lab.get("fabric", "smpi"))
    return tl


def targets(bsim, breal, rows):
    out = []
    g = bcast_groups(bsim)
    m = g.get((256, 8388608), {})
    if m.get("mpi") and (m.get("ring") or m.get("auto")):
        for a in ("ring", "tree", "auto"):
            if m.get(a):
                x = m["mpi"]["median_s"] / m[a]["median_s"]
                out.append({"target": "pipelined broadcast >= 1.5x the flat MPI_Ibcast model, "
                            "P = 256, 8 MiB", "result": "%s%s: %.1fx (%.3g vs %.3g ms)" % (
                                a, " (%s)" % m[a]["ran"] if a == "auto" else "", x,
                                1e3 * m[a]["median_s"], 1e3 * m["mpi"]["median_s"]),
                            "met": "yes" if x >= 1.5 else "no"})
    for (P, b), gg in bcast_groups(breal).items():
        mp, au = gg.get("mpi"), gg.get("auto")
        for a in ("auto", "ring"):
            x = gg.get(a)
            if not mp or not x:
                continue
            within = x["median_s"] <= mp["max_s"] or x["median_s"] <= mp["median_s"]
            out.append({"target": "no slower than MPI_Ibcast within noise, %d ranks, %.3g MiB"
                        % (P, b / 2**20), "result": "%s%s median %.3g ms vs %.3g ms [%.3g–%.3g]" % (
                            a, " (%s)" % x["ran"] if a == "auto" else "", 1e3 * x["median_s"],
                            1e3 * mp["median_s"], 1e3 * mp["min_s"], 1e3 * mp["max_s"]),
                        "met": "yes" if within else "no"})
        del au
    weak = [r for r in rows if r.get("study") == "gpu-weak" and str(r.get("nl")) == "16384"]
    target = "weak scaling >= 80 % at n_local = 16384 f64, best schedule (issue: P = 1024)"
    if weak:
        Pmax = max(r["P"] for r in weak)
        # k = n simulated directly at Pmax, else SUMMA's steady state extended to k = n
        full = [r for r in weak if r["P"] == Pmax and r.get("kfull") == "1"]
        if full:
            best = max(full, key=lambda r: r["efficiency"])
            out.append({"target": target, "result": "P = %d: %s %.1f %%" % (
                Pmax, schedule(best), 100 * best["efficiency"]),
                "met": ("yes" if best["efficiency"] >= 0.8 else "no") +
                ("" if Pmax >= 1024 else " (P = 1024 not simulated)")})
        st = {x["P"]: x for x in gpu_steady(rows)}
        if Pmax in st and not full:
            x = st[Pmax]
            errs = ["P = %d %+.2f %%" % (y["P"], 100 * y["err"]) for y in st.values()
                    if y["err"] is not None]
            out.append({"target": target, "result": "P = %d: summa/auto (rdma) at k = n, "
                        "extended from the simulated 16 and 32 panels: %.1f %% (steady step "
                        "%.1f %%; 16 panels %.1f %%); the extension against k = n simulated "
                        "directly: %s" % (Pmax, 100 * x["e_full"], 100 * x["e_step"],
                                          100 * x["e1"], ", ".join(errs) or "not run"),
                        "met": ("yes" if x["e_full"] >= 0.8 else "no") +
                        (" (k extended)" if Pmax >= 1024 else " (P = 1024 not simulated)")})
        if not full and Pmax not in st:
            best = max((r for r in weak if r["P"] == Pmax), key=lambda r: r["efficiency"])
            out.append({"target": target, "result": "P = %d (largest simulated): %s %.1f %%" % (
                Pmax, schedule(best), 100 * best["efficiency"]),
                "met": ("yes" if best["efficiency"] >= 0.8 else "no") +
                ("" if Pmax >= 1024 else " (P = 1024 not simulated)")})
    return table(out, ["target", "result", "met"], ["target", "result", "met"]) if out else None


def gpu_plots(rows, tl, bsim, outdir):
    try:
        import matplotlib
    except ImportError:
        return []
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    files = []
    weak = gpu_rows(rows, "gpu-weak")
    if weak:
        nls = sorted({int(r["nl"]) for r in weak})
        fig, axes = plt.subplots(1, len(nls), figsize=(6.4 * len(nls), 4.2), squeeze=False)
        for ax, nl in zip(axes[0], nls):
            for sch in sorted({schedule(r) for r in weak}):
                pts = sorted((r["P"], r["efficiency"]) for r in weak
                             if int(r["nl"]) == nl and schedule(r) == sch)
                if pts:
                    ax.plot([p for p, _ in pts], [e for _, e in pts], marker="o", label=sch)
            st = gpu_steady(rows) if nl == 16384 else []
            if st:
                ax.plot([x["P"] for x in st], [x["e_full"] for x in st], "k--", marker="s",
                        label="summa/auto (rdma), k = n extended from 16/32 panels")
            ax.set_xscale("log", base=2)
            ax.set_ylim(0, 1.05)
            ax.axhline(0.8, color="grey", lw=0.5)
            ax.set_xlabel("P (H100 model per rank, fat tree 200 Gb/s)")
            ax.set_ylabel("efficiency (rate / 57 TFLOP/s)")
            ax.set_title("GPU weak scaling, %d x %d f64 per rank" % (nl, nl))
            ax.legend(fontsize=7)
        f = os.path.join(outdir, "gpu_weak_efficiency.png")
        fig.tight_layout()
        fig.savefig(f, dpi=110)
        plt.close(fig)
        files.append(f)
        fig, ax = plt.subplots(figsize=(6.4, 4.2))
        nl = nls[0]
        for sch in sorted({schedule(r) for r in weak}):
            pts = sorted((r["P"], r["words_mean"]) for r in weak
                         if int(r["nl"]) == nl and schedule(r) == sch)
            ax.plot([p for p, _ in pts], [w for _, w in pts], marker="o", label=sch)
        pts = sorted({(r["P"], r["words_bound"]) for r in weak if int(r["nl"]) == nl and
                      r["ran"] == "summa" and r.get("kfull") != "1"})
        ax.plot([p for p, _ in pts], [w for _, w in pts], "k:", label="lower bound")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("P")
        ax.set_ylabel("f64 words received per rank")
        ax.set_title("GPU weak scaling, n_local = %d: words per rank" % nl)
        ax.legend(fontsize=7)
        f = os.path.join(outdir, "gpu_words.png")
        fig.tight_layout()
        fig.savefig(f, dpi=110)
        plt.close(fig)
        files.append(f)
    if tl:
        fig, axes = plt.subplots(len(tl), 1, figsize=(7.5, 2.0 * len(tl)), squeeze=False,
                                 sharex=True)
        for ax, t in zip(axes[:, 0], tl):
            x = list(range(1, t["panels"] + 1))
            ax.bar(x, t["compute"], color="tab:blue", label="multiply")
            ax.bar(x, t["wait"], bottom=t["compute"], color="tab:red", label="wait for panel")
            ax.set_ylabel("s")
            ax.set_title("%s, P = %d, rank %d" % (t.get("name", t["label"]), t["P"], t["rank"]),
                         fontsize=9)
        axes[0, 0].legend(fontsize=7)
        axes[-1, 0].set_xlabel("panel")
        f = os.path.join(outdir, "gpu_timeline.png")
        fig.tight_layout()
        fig.savefig(f, dpi=110)
        plt.close(fig)
        files.append(f)
    if bsim:
        fig, ax = plt.subplots(figsize=(6.4, 4.2))
        for a in ("mpi", "ring", "tree", "auto"):
            pts = sorted((r["P"], r["median_s"]) for r in bsim
                         if r["algo"] == a and r["bytes"] == 8388608)
            if pts:
                ax.plot([p for p, _ in pts], [1e3 * t for _, t in pts], marker="o",
                        ls=":" if a == "auto" else "-",
                        label={"mpi": "MPI_Ibcast (SMPI: flat)"}.get(a, a))
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("ranks")
        ax.set_ylabel("ms")
        ax.set_title("8 MiB broadcast, simulated fat tree (200 Gb/s)")
        ax.legend(fontsize=7)
        f = os.path.join(outdir, "bcast_sim.png")
        fig.tight_layout()
        fig.savefig(f, dpi=110)
        plt.close(fig)
        files.append(f)
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
    ap.add_argument("--bcast-sim")
    ap.add_argument("--bcast-real")
    ap.add_argument("--timeline")
    ap.add_argument("--parts", default="cpu,bcast,gpu")
    ap.add_argument("--check-smoke", action="store_true",
                    help="fail unless the smoke study ran whole and its numbers are sane")
    a = ap.parse_args()
    rows = load(a.results)
    cal, rates, ping = calibration(a.calibration, rows) if a.calibration else ([], {}, {})
    bsim, breal = jsonl(a.bcast_sim), jsonl(a.bcast_real)
    tl = name_timelines(jsonl(a.timeline), rows)
    with open(os.path.join(a.outdir, "results.json"), "w") as f:
        json.dump({"benchmark": "scale", "results": rows, "calibration": cal,
                   "calibration_rates_gflops": rates, "bcast_simulated": bsim,
                   "bcast_real": breal, "timelines": tl}, f, indent=1)
    files = plots(rows, a.outdir, "") + gpu_plots(rows, tl, bsim, a.outdir)
    for name, text in bcast_tables(breal, bsim).items():
        if text:
            print(text)
    t = targets(bsim, breal, rows)
    if t:
        print(t)
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
        write_doc(a.doc, rows, cal, rates, ping, files, bsim, breal, tl, a.parts.split(","))
    if a.check_smoke:
        return check_smoke(rows, bsim)
    return 0


def check_smoke(rows, bsim):
    """The smoke study (run.sh --smoke): every run there, CPU efficiencies in (0.5, 1], at
    P = 16 the 2.5D panel broadcasts (c = 4 on 2 x 2 x 4) at most 1/sqrt(4) of SUMMA's words;
    the simulated 8 MiB broadcast to 16 ranks: tree and auto >= 1.5x faster than the flat
    MPI_Ibcast (the ring of 16 is not, on SimGrid's fat tree); SUMMA on the modeled GPU: the
    pipelined broadcast (auto) at least as efficient as MPI_Ibcast, moving the same words, and
    the host's event-driven waits (the alarm, TSR_SMPI_GPU_POLL=0) within 2 % of the polled
    host's time (TSR_SMPI_GPU_POLL=25e-6; tag hostwait=poll): an alarm that came late or early
    would part them."""
    bad = []
    if len(rows) != 10:
        bad.append("%d runs instead of 10" % len(rows))
    polled = [r for r in rows if r.get("hostwait") == "poll"]
    rows = [r for r in rows if r.get("hostwait") != "poll"]
    ev = [r for r in rows if r.get("node") == "gpu" and r.get("bcast") == "auto"]
    if len(polled) != 1 or len(ev) != 1 or \
            abs(ev[0]["seconds"] - polled[0]["seconds"]) > 0.02 * polled[0]["seconds"]:
        bad.append("GPU SUMMA: event-driven waits not within 2 %% of the polled host (%s vs %s)"
                   % ([r["seconds"] for r in ev], [r["seconds"] for r in polled]))
    g = bcast_groups(bsim).get((16, 8388608), {})
    for a in ("tree", "auto"):
        if not g.get("mpi") or not g.get(a) or g["mpi"]["median_s"] < 1.5 * g[a]["median_s"]:
            bad.append("simulated 8 MiB broadcast to 16 ranks: %s not 1.5x the flat MPI_Ibcast" % a)
    sk = {r.get("bcast"): r for r in rows if r.get("node") == "gpu"}
    if set(sk) != {"mpi", "auto"} or sk["auto"]["efficiency"] < sk["mpi"]["efficiency"] or \
            sk["auto"]["words_mean"] != sk["mpi"]["words_mean"]:
        bad.append("GPU SUMMA: auto broadcast not >= MPI_Ibcast's efficiency with equal words")
    rows = [r for r in rows if r.get("node") == "cpu"]
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


def write_doc(path, rows, cal, rates, ping, files, bsim, breal, tl, parts):
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
    bt = bcast_tables(breal, bsim)
    weak, strong = gpu_rows(rows, "gpu-weak"), gpu_rows(rows, "gpu-strong")
    steady = gpu_steady(rows)
    panels = sorted({r["k"] // r["block"] for r in weak + strong if r.get("kfull") != "1"})
    sections = {
        "BCASTREAL": bt["BCASTREAL"], "BCASTSIM": bt["BCASTSIM"],
        "GPUWEAK": gpu_table(weak) if weak else None,
        "GPUSTEADY": gpu_steady_table(steady) if steady else None,
        "GPUSTRONG": gpu_table(strong) if strong else None,
        "TIMELINE": timeline_table(tl) + "\n\n![gpu_timeline.png](scaling/gpu_timeline.png)"
        if tl else None,
        "TARGETS": targets(bsim, breal, rows),
        "PANELS": "/".join(str(p) for p in panels) if panels else "16",
        "STEADYNOTE": steady_note(steady),
        "SIMCOST": sim_cost(rows),
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
        "GPU40": table(sel("strong", "gpu"), res_keys, res_heads),
        "TALL": table(sel("tall-k") + sel("tall-m"), res_keys, res_heads),
        "DRAGONFLY": table(sel("strong", "cpu", "dragonfly"), res_keys, res_heads),
        "PLOTS": "\n\n".join("![%s](scaling/%s)" % (i, i) for i in sorted(
            f for f in os.listdir(imgdir) if f.endswith(".png"))),
    }
    # Sections of parts that did not run keep the page's last numbers.
    cpu_sections = ("CPUCAL", "STRONG", "WEAK", "GPU40", "TALL", "DRAGONFLY")
    skipped = set()
    if "cpu" not in parts:
        skipped.update(cpu_sections)
    for k in ("BCASTREAL", "BCASTSIM", "GPUWEAK", "GPUSTEADY", "GPUSTRONG", "TIMELINE",
              "TARGETS"):
        if sections[k] is None:
            skipped.add(k)
            sections[k] = "(not run)"
    old = open(path).read() if os.path.exists(path) else ""
    # Targets whose data this run did not make (the broadcasts' JSON of a run without the bcast
    # part, the GPU study's rows of a run without the gpu part) keep the page's rows, in the
    # page's order (broadcasts first, weak scaling last).
    m = re.search(r"<!-- TARGETS -->\n(.*?)<!-- /TARGETS -->", old, re.S)
    if m and "TARGETS" not in skipped:
        old_rows = m.group(1).splitlines()
        keep = [line for line in old_rows
                if (line.startswith("| pipelined broadcast") and not bsim) or
                (line.startswith("| no slower than") and not breal)]
        weak = any(r.get("study") == "gpu-weak" for r in rows)
        tail = [line for line in old_rows if line.startswith("| weak scaling") and not weak]
        lines = sections["TARGETS"].splitlines()
        sections["TARGETS"] = "\n".join(lines[:2] + keep + lines[2:] + tail)
    text = tmpl
    for k, v in sections.items():
        text = text.replace("@%s@" % k, v)
    for k in skipped:
        pat = re.compile(r"<!-- %s -->\n.*?<!-- /%s -->" % (k, k), re.S)
        keep = pat.search(old)
        if keep:
            text = pat.sub(lambda _m: keep.group(0), text)
    with open(path, "w") as f:
        f.write(text)


if __name__ == "__main__":
    raise SystemExit(main())
