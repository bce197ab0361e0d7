#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Helpers of scripts/gpu_session.sh (one call on a lent GPU, or its CPU dry run).

Subcommands (each appends its rows to results.tsv and its Markdown rows to a fragment of
summary.md, so that a killed call keeps what arrived):

  job JSON --tsv F --md F --step S --case C --gemm G --rc RC --secs S [--log LOG]
      one tessera-gemm run: its --json report (pipeline counts, verdict) as one row
  anchor-torch --sizes N1,N2 --tsv F --md F
      cuBLAS through PyTorch, TF32 off, f32 and f64, median of CUDA-event timings
  anchor-bench JSON --tsv F --md F
      the cuBLAS rows of bench_gpu's --json
  ratios --tsv F --md F
      Tessera's 1-rank figures over the anchor (from results.tsv)
  npy-make DIR --cases F --mode cuda|cpu --seed S [--data DIR...]
      the real inputs (2-D f32/f64 .npy files of the data folders, once each) and generated
      ones (C and Fortran order, big-endian, transposes, alpha/beta with C), one case a line
  npy-check CASE_LINE --tsv F --md F --rc RC --secs S
      the job's output of one case against a float64 product: NumPy when present, else a
      pure-Python product for small cases, else the job's own float64 verification (said so)

Works without NumPy (pure-Python .npy reader and writer); PyTorch only for anchor-torch.
"""
import argparse
import json
import math
import os
import random
import struct
import sys

try:
    import numpy as np
except Exception:  # noqa: BLE001 - any import failure means "no NumPy here"
    np = None

# The 1-rank job's rows: the real runs, and the complex ones (issue 50) kept apart so that the
# real runs' count stays what the CI hook (scripts/test.d/gpu_session.sh) expects.
JOB_STEPS = ("job", "job_complex")

COLUMNS = ["step", "case", "ranks", "dtype", "m", "n", "k", "gemm", "path", "gflops",
           "compute_s", "gpu_s", "input_s", "staging", "steps", "h2d_copies", "d2h_copies",
           "host_syncs", "host_syncs_in_loop", "copy_waits", "check", "status", "seconds",
           "note"]


def append(path, text):
    with open(path, "a", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())


def tsv_row(tsv_path, **kw):
    if not os.path.exists(tsv_path) or os.path.getsize(tsv_path) == 0:
        append(tsv_path, "\t".join(COLUMNS) + "\n")
    vals = []
    for c in COLUMNS:
        v = kw.get(c, "-")
        v = "-" if v is None else str(v)
        vals.append(v.replace("\t", " ").replace("\n", " "))
    append(tsv_path, "\t".join(vals) + "\n")


def status_text(rc):
    rc = int(rc)
    if rc == 0:
        return "passed"
    if rc in (124, 137):
        return "timed out"
    if rc == 125:
        return "not run (step budget spent)"
    return "FAILED (exit %d)" % rc


def last_error(log):
    try:
        with open(log, encoding="utf-8", errors="replace") as f:
            lines = [ln.strip() for ln in f if ln.strip()]
    except OSError:
        return ""
    for ln in reversed(lines):
        if "error" in ln.lower() or "failed" in ln.lower():
            return ln[:200]
    return lines[-1][:200] if lines else ""


def fmt(x, spec):
    if isinstance(x, bool):
        return "yes" if x else "no"
    try:
        return spec % x
    except (TypeError, ValueError):
        return "-"


# ------------------------------------------------------------------------ job runs ----
def cmd_job(a):
    j = None
    try:
        with open(a.json, encoding="utf-8") as f:
            j = json.load(f)
    except (OSError, ValueError):
        j = None
    status = status_text(a.rc)
    if j is None:
        note = last_error(a.log) if a.log else ""
        tsv_row(a.tsv, step=a.step, case=a.case, gemm=a.gemm, status=status, seconds=a.secs,
                note="no JSON report" + (": " + note if note else ""))
        dashes = " - |" * (6 if a.step in JOB_STEPS else 9)
        append(a.md, "| %s | %s |%s %s (%s s): no JSON report%s |\n"
               % (a.case, a.gemm, dashes, status, a.secs,
                  (": " + note.replace("|", "/")) if note else ""))
        return 0
    p = j.get("pipeline") or {}
    s = j.get("seconds") or {}
    v = j.get("verify") or {}
    # The input's seconds: "read" (files), and "generate" (random inputs) where reported.
    t_in = None
    for key in ("read", "generate"):
        if isinstance(s.get(key), (int, float)):
            t_in = (t_in or 0.0) + s[key]
    devs = set()
    for d in j.get("devices") or []:  # names, or objects with a "device" (schema 2)
        devs.add(str(d.get("device", d.get("name", "?"))) if isinstance(d, dict) else str(d))
    note = "grid %s, device %s" % ("x".join(str(g) for g in j.get("grid") or []),
                                   ",".join(sorted(devs)))
    bc = j.get("bcast")
    if isinstance(bc, dict) and bc.get("used") is not None:
        note += "; bcast %s (%s)" % (bc.get("requested"), ",".join(map(str, bc.get("used") or [])))
    if j.get("error"):
        note += "; error: %s" % j.get("error")
    row = dict(step=a.step, case=a.case, ranks=j.get("ranks"), dtype=j.get("dtype"),
               m=j.get("m"), n=j.get("n"), k=j.get("k"), gemm=a.gemm, path=p.get("gemm_path"),
               gflops=fmt(j.get("gflops"), "%.1f"), compute_s=fmt(s.get("compute"), "%.4g"),
               gpu_s=fmt(s.get("gpu"), "%.4g"), input_s=fmt(t_in, "%.3g"),
               staging=fmt(p.get("staging"), "%s"), steps=p.get("steps"), h2d_copies=p.get("h2d_copies"),
               d2h_copies=p.get("d2h_copies"), host_syncs=p.get("host_syncs"),
               host_syncs_in_loop=p.get("host_syncs_in_loop"), copy_waits=p.get("copy_waits"),
               check=v.get("verdict"), status=status, seconds=a.secs, note=note)
    tsv_row(a.tsv, **row)
    if a.step in JOB_STEPS:
        append(a.md, "| %s | %s | %s | %s | %s | %s | %s | %s | %s (%s s) |\n" % (
            a.case, a.gemm, row["path"], row["gflops"], row["compute_s"], row["gpu_s"],
            row["input_s"], row["check"], status, a.secs))
    else:
        append(a.md, "| %s | %s | %s | %s | %s | %s | %s | %s/%s | %s/%s | %s | %s | %s (%s s) |\n" % (
            a.case, a.gemm, row["path"], row["gflops"], row["compute_s"], row["staging"],
            row["steps"], row["h2d_copies"], row["d2h_copies"], row["host_syncs"],
            row["host_syncs_in_loop"], row["copy_waits"], row["check"], status, a.secs))
    return 0


# ------------------------------------------------------------------------ anchors -----
def cmd_anchor_torch(a):
    import torch  # only here: the anchor step

    # TF32 off, through the API this version has (2.9 and later: fp32_precision; the legacy
    # flags are not mixed with it). The f64 comparison below checks it either way.
    mm = torch.backends.cuda.matmul
    if hasattr(mm, "fp32_precision"):
        mm.fp32_precision = "ieee"
        state = "matmul fp32_precision=%s" % mm.fp32_precision
    else:
        mm.allow_tf32 = False
        torch.set_float32_matmul_precision("highest")
        state = "allow_tf32=%s, float32 matmul precision %s" % (
            mm.allow_tf32, torch.get_float32_matmul_precision())
    if not torch.cuda.is_available():
        print("torch %s sees no CUDA device" % torch.__version__)
        return 3
    dev = torch.device("cuda")
    print("torch %s, CUDA %s, cuBLAS via torch, %s; %s"
          % (torch.__version__, torch.version.cuda, torch.cuda.get_device_name(0), state))
    g = torch.Generator(device=dev)
    g.manual_seed(int.from_bytes(os.urandom(4), "little"))
    reps = a.reps
    bad = 0
    for n in [int(x) for x in a.sizes.split(",")]:
        for name, dt in (("f32", torch.float32), ("f64", torch.float64),
                         ("c64", torch.complex64), ("c128", torch.complex128)):
            # complex: cuBLAS Cgemm/Zgemm (issue 50's anchor), 8 n^3 real flops
            x = torch.rand(n, n, dtype=dt, device=dev, generator=g) * 2 - 1
            y = torch.rand(n, n, dtype=dt, device=dev, generator=g) * 2 - 1
            z = x @ y
            z = x @ y
            torch.cuda.synchronize()
            times = []
            for _ in range(reps):
                e0 = torch.cuda.Event(enable_timing=True)
                e1 = torch.cuda.Event(enable_timing=True)
                e0.record()
                torch.matmul(x, y, out=z)
                e1.record()
                e1.synchronize()
                times.append(e0.elapsed_time(e1) / 1e3)
            times.sort()
            med = times[len(times) // 2]
            gf = (8.0 if dt.is_complex else 2.0) * n ** 3 / med / 1e9
            check = "-"
            if name == "f32" and n == int(a.sizes.split(",")[0]):
                # TF32 (10-bit mantissa) gives ~3e-4 here; f32 products at k = 8192 land
                # between 1e-6 and 1e-5 (u sqrt(k) = 5e-6): 1e-4 tells them apart.
                ref = x.double() @ y.double()
                rel = float(torch.linalg.norm(z.double() - ref) / torch.linalg.norm(ref))
                check = "rel err %.2e vs f64%s" % (rel, "" if rel < 1e-4 else " (TF32?)")
                bad += rel >= 1e-4
                del ref
            spread = "%.4f-%.4f s" % (times[0], times[-1])
            print("torch %s %d: median %.4f s (%s, %d reps), %.1f GFLOP/s %s"
                  % (name, n, med, spread, reps, gf, check))
            tsv_row(a.tsv, step="anchor", case="torch_%s_%d" % (name, n), ranks=1, dtype=name,
                    m=n, n=n, k=n, gemm="cuBLAS (torch, no TF32)", path="vendor",
                    gflops="%.1f" % gf, gpu_s="%.5f" % med, check=check, status="passed",
                    note="median of %d, spread %s" % (reps, spread))
            append(a.md, "| %s | %d | cuBLAS via PyTorch %s, TF32 off | %.1f | %.5f (%s) | %s |\n"
                   % (name, n, torch.__version__, gf, med, spread, check))
            del x, y, z
            torch.cuda.empty_cache()
    return 10 if bad else 0  # 10: measured, but the f32 product looks like TF32


def cmd_anchor_bench(a):
    with open(a.json, encoding="utf-8") as f:
        j = json.load(f)
    found = 0
    for r in j.get("results", []):
        name = r.get("name", "")
        for prefix, dt in (("sgemm", "f32"), ("dgemm", "f64")):
            if name.startswith(prefix) and (name.endswith("cuBLAS") or name.endswith("hipBLAS")):
                n = r.get("size")
                tsv_row(a.tsv, step="anchor", case="bench_gpu_%s_%s" % (dt, n), ranks=1,
                        dtype=dt, m=n, n=n, k=n, gemm="cuBLAS (bench_gpu)", path="vendor",
                        gflops=fmt(r.get("rate"), "%.1f"), gpu_s=fmt(r.get("median_s"), "%.5f"),
                        status="passed", note="bench_gpu median of %s" % j.get("reps"))
                append(a.md, "| %s | %s | cuBLAS via bench_gpu (%s) | %s | %s | - |\n"
                       % (dt, n, j.get("device"), fmt(r.get("rate"), "%.1f"),
                          fmt(r.get("median_s"), "%.5f")))
                found += 1
    return 0 if found else 1


def read_tsv(path):
    rows = []
    try:
        with open(path, encoding="utf-8") as f:
            head = f.readline().rstrip("\n").split("\t")
            for ln in f:
                vals = ln.rstrip("\n").split("\t")
                if vals == head:
                    continue
                rows.append(dict(zip(head, vals)))
    except OSError:
        pass
    return rows


def cmd_ratios(a):
    rows = read_tsv(a.tsv)
    anchor = {}
    for r in rows:
        if r.get("step") == "anchor" and r.get("gflops") not in (None, "-"):
            anchor[(r["dtype"], r["n"])] = float(r["gflops"])
    if not anchor:
        append(a.md, "\nNo anchor figure: no ratio.\n")
        return 0
    append(a.md, "\nTessera's 1-rank job (its whole `tsr_dist_gemm_ex` time) over the anchor:\n\n"
           "| dtype | n | TSR_GEMM | path | job GFLOP/s | anchor GFLOP/s | ratio |\n"
           "| --- | --- | --- | --- | --- | --- | --- |\n")
    for r in rows:
        if r.get("step") not in JOB_STEPS or r.get("gflops") in (None, "-"):
            continue
        an = anchor.get((r["dtype"], r["n"]))
        if an is None:
            continue
        append(a.md, "| %s | %s | %s | %s | %s | %.1f | %.3f |\n" % (
            r["dtype"], r["n"], r["gemm"], r["path"], r["gflops"], an, float(r["gflops"]) / an))
    return 0


# ------------------------------------------------------------------------ .npy --------
DT = {"<f8": ("d", 8, "f64"), "<f4": ("f", 4, "f32"), ">f8": ("d", 8, "f64"),
      ">f4": ("f", 4, "f32"), "|f8": ("d", 8, "f64")}


def npy_read(path):
    """(shape, descr, fortran, flat list in C order) without NumPy (f32/f64 only)."""
    with open(path, "rb") as f:
        magic = f.read(8)
        if magic[:6] != b"\x93NUMPY":
            raise ValueError("%s: not a .npy file" % path)
        major = magic[6]
        hlen = struct.unpack("<H" if major == 1 else "<I", f.read(2 if major == 1 else 4))[0]
        header = eval(f.read(hlen).decode("latin1"), {"__builtins__": {}}, {})  # noqa: S307
        descr, fortran, shape = header["descr"], header["fortran_order"], tuple(header["shape"])
        if descr not in DT:
            raise ValueError("%s: dtype %s" % (path, descr))
        code, size, _ = DT[descr]
        count = 1
        for s in shape:
            count *= s
        raw = f.read(count * size)
    vals = list(struct.unpack(("<" if descr[0] != ">" else ">") + code * count, raw))
    if fortran and len(shape) == 2:
        r, c = shape
        vals = [vals[j * r + i] for i in range(r) for j in range(c)]
    return shape, descr, fortran, vals


def npy_write(path, rows, cols, vals, descr="<f8", fortran=False):
    """A 2-D .npy (format 1.0) from a C-order flat list, without NumPy."""
    code, size, _ = DT[descr]
    if fortran:
        vals = [vals[i * cols + j] for j in range(cols) for i in range(rows)]
    header = "{'descr': '%s', 'fortran_order': %s, 'shape': (%d, %d), }" % (
        descr, "True" if fortran else "False", rows, cols)
    pad = 64 - (10 + len(header) + 1) % 64
    header = header + " " * pad + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1"))
        f.write(struct.pack(("<" if descr[0] != ">" else ">") + code * len(vals), *vals))


def make_matrix(path, rows, cols, dtype, rng, order="C", big_endian=False):
    descr = (">" if big_endian else "<") + ("f8" if dtype == "f64" else "f4")
    if np is not None:
        x = rng.uniform(-1.0, 1.0, size=(rows, cols)).astype(np.dtype(descr))
        np.save(path, np.asfortranarray(x) if order == "F" else np.ascontiguousarray(x))
        return
    vals = [rng.uniform(-1.0, 1.0) for _ in range(rows * cols)]
    if dtype == "f32":
        vals = [struct.unpack("f", struct.pack("f", v))[0] for v in vals]
    npy_write(path, rows, cols, vals, descr, order == "F")


def data_files(dirs):
    """2-D f32/f64 .npy files of the folders, each content once; (path, shape, dtype)."""
    import hashlib

    seen, out, skipped = set(), [], []
    for d in dirs:
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            p = os.path.join(d, name)
            if not name.endswith(".npy") or not os.path.isfile(p):
                continue
            with open(p, "rb") as f:
                h = hashlib.sha1(f.read()).hexdigest()
            if h in seen:
                continue
            seen.add(h)
            try:
                with open(p, "rb") as f:
                    magic = f.read(8)
                    major = magic[6]
                    hlen = struct.unpack("<H" if major == 1 else "<I",
                                         f.read(2 if major == 1 else 4))[0]
                    hd = eval(f.read(hlen).decode("latin1"), {"__builtins__": {}}, {})  # noqa: S307
            except Exception as e:  # noqa: BLE001
                skipped.append("%s (%s)" % (p, e))
                continue
            if len(hd["shape"]) != 2 or hd["descr"] not in DT:
                skipped.append("%s (shape %s, dtype %s: not a 2-D f32/f64 matrix)"
                               % (name, hd["shape"], hd["descr"]))
                continue
            out.append((p, tuple(hd["shape"]), DT[hd["descr"]][2]))
    return out, skipped


def cmd_npy_make(a):
    seed = a.seed
    rng = np.random.default_rng(seed) if np is not None else random.Random(seed)
    cases = []

    def case(name, A, B, flags="", ranks=1, gemm="auto", C="-", alpha=1.0, beta=0.0):
        cases.append("\t".join([name, A, B, C, str(ranks), gemm, flags or "-",
                                repr(alpha), repr(beta)]))

    files, skipped = data_files(a.data)
    for s in skipped:
        print("skipped input: %s" % s)
    for p, (r, c), dt in files:
        base = os.path.splitext(os.path.basename(p))[0]
        # X X^T and X^T X: the Gram and scatter matrices (data/README.md), both transposes.
        case("%s_XXt" % base, p, p, "--transb", 1)
        case("%s_XtX" % base, p, p, "--transa", 2)
    big = a.mode == "cuda" and np is not None
    small = np is None  # pure-Python inputs and reference: keep them small
    d = a.dir
    m, n, k = (37, 29, 23) if small else (517, 611, 389)
    mk = lambda nm, r, c, dt, **kw: (make_matrix(os.path.join(d, nm), r, c, dt, rng, **kw),  # noqa: E731
                                     os.path.join(d, nm))[1]
    A = mk("g_a_f64.npy", m, k, "f64")
    B = mk("g_b_f64.npy", k, n, "f64")
    case("gen_f64_NN", A, B, "", 1)
    At = mk("g_at_f32.npy", k, m, "f32")
    Bt = mk("g_bt_f32_fortran.npy", n, k, "f32", order="F")
    case("gen_f32_TT_fortran", At, Bt, "--transa --transb --block 64", 2)
    Af = mk("g_a_f64_fortran.npy", m, k, "f64", order="F")
    Bbe = mk("g_b_f64_bigendian.npy", k, n, "f64", big_endian=True)
    C0 = mk("g_c_f64.npy", m, n, "f64")
    case("gen_f64_NN_alpha_beta", Af, Bbe, "--block 32", 4, C=C0, alpha=1.5, beta=-0.5)
    At64 = mk("g_at_f64.npy", k, m, "f64")
    case("gen_f64_TN_native", At64, B, "--transa --block 48", 2, gemm="native")
    if big:
        M, N, K = 2048, 1792, 1536
    elif small:
        M, N, K = 41, 31, 27
    else:
        M, N, K = 300, 280, 260
    Ab = mk("g_big_a_f32.npy", M, K, "f32")
    Bb = mk("g_big_bt_f32.npy", N, K, "f32")
    case("gen_f32_NT_%dx%dx%d" % (M, N, K), Ab, Bb, "--transb", 1)
    case("gen_f32_NT_%dx%dx%d_native" % (M, N, K), Ab, Bb, "--transb", 1, gemm="native")
    case("gen_f32_NT_%dx%dx%d_vendor" % (M, N, K), Ab, Bb, "--transb", 1, gemm="vendor")
    with open(a.cases, "w", encoding="utf-8") as f:
        for c in cases:
            f.write(c + "\n")
    print("%d cases (seed %d, %s)" % (len(cases), seed,
                                      "NumPy %s" % np.__version__ if np is not None
                                      else "no NumPy: pure-Python inputs"))
    return 0


def load_f64(path):
    """(2-D list-free array or nested list, dtype name): NumPy array when NumPy exists."""
    if np is not None:
        x = np.load(path)
        return x.astype(np.float64), ("f32" if x.dtype.itemsize == 4 else "f64")
    shape, descr, _, vals = npy_read(path)
    return (shape, vals), DT[descr][2]


def cmd_npy_check(a):
    name, A, B, C, ranks, gemm, flags, alpha, beta = a.case.split("\t")
    alpha, beta = float(alpha), float(beta)
    flags = flags.split() if flags != "-" else []
    ta, tb = "--transa" in flags, "--transb" in flags
    status = status_text(a.rc)
    out = a.output
    j = {}
    try:
        with open(a.json, encoding="utf-8") as f:
            j = json.load(f)
    except (OSError, ValueError):
        pass
    verdict = j.get("verify", {}).get("verdict", "-")
    path = j.get("pipeline", {}).get("gemm_path", "-")
    shape_txt, check, ok = "-", "-", False
    if int(a.rc) == 0 and os.path.exists(out):
        try:
            ok, shape_txt, check = compare(A, B, C, out, ta, tb, alpha, beta, j)
        except Exception as e:  # noqa: BLE001
            ok, check = False, "check failed: %s" % e
    elif int(a.rc) == 0:
        check = "no output file"
    result = "passed" if ok and int(a.rc) == 0 else (status if int(a.rc) else "FAILED (check)")
    op = "%s%s%s" % ("A^T" if ta else "A", " B^T" if tb else " B",
                     "" if beta == 0 else ", alpha %g beta %g" % (alpha, beta))
    tsv_row(a.tsv, step="npy", case=name, ranks=ranks, dtype=j.get("dtype", "-"),
            m=j.get("m"), n=j.get("n"), k=j.get("k"), gemm=gemm, path=path,
            gflops=fmt(j.get("gflops"), "%.2f"), check=check, status=result,
            seconds=a.secs, note="%s; job verify: %s" % (op, verdict))
    append(a.md, "| %s | %s | %s | %s | %s | %s | %s | %s | %s (%s s) |\n" % (
        name, shape_txt, j.get("dtype", "-"), op, ranks, "%s/%s" % (gemm, path), verdict,
        check, result, a.secs))
    return 0 if result == "passed" else 1


def compare(A, B, C, out, ta, tb, alpha, beta, j):
    """(ok, shape text, check text). Two bounds, M = |alpha| |op A| |op B| + |beta| |C0|, u the
    dtype's unit roundoff: |C - R| <= 2 k u M + u |R| elementwise (the worst case, Higham), and
    ||C - R||_F <= 3 u sqrt(k) ||M||_F (rounding errors of random sign grow like sqrt(k); a
    serial sum of nonnegative terms reaches about u sqrt(k/3) ||M||_F: this one catches a product
    computed in lower precision, which the worst case can miss: inputs rounded to TF32 gave
    4.5-8 times the bound on data/flower_gray_f32.npy (X X^T, X^T X) and random 517x611x389;
    f32 products, a plain serial sum included, 0.003-0.13 times, up to k = 8192).
    NaN never passes."""
    if np is not None:
        a, dt = load_f64(A)
        b, _ = load_f64(B)
        a = a.T if ta else a
        b = b.T if tb else b
        ref = alpha * (a @ b)
        mag = abs(alpha) * (np.abs(a) @ np.abs(b))
        if beta != 0:
            c0, _ = load_f64(C)
            ref = ref + beta * c0
            mag = mag + abs(beta) * np.abs(c0)
        raw = np.load(out)
        got = raw.astype(np.float64)
        k = a.shape[1]
        u = 2.0 ** -24 if dt == "f32" else 2.0 ** -53
        shape = "%dx%dx%d" % (a.shape[0], b.shape[1], k)
        if got.shape != ref.shape:
            return False, shape, "output shape %s, expected %s" % (got.shape, ref.shape)
        if raw.dtype.itemsize != (4 if dt == "f32" else 8):
            return False, shape, "output dtype %s, inputs %s" % (raw.dtype, dt)
        if not np.all(np.isfinite(got)):
            return False, shape, "%d non-finite elements" % int(np.sum(~np.isfinite(got)))
        bound = 2.0 * k * u * mag + u * np.abs(ref) + np.finfo(np.float64).tiny
        ratio = float(np.max(np.abs(got - ref) / bound))
        rel = float(np.linalg.norm(got - ref) / max(np.linalg.norm(ref), 1e-300))
        fro = float(np.linalg.norm(got - ref) / max(3 * u * math.sqrt(k) * np.linalg.norm(mag),
                                                    1e-300))
        ok = ratio <= 1.0 and fro <= 1.0
        return ok, shape, ("NumPy %s: max err/bound %.3g, F err/bound %.3g, rel F err %.2e"
                           % (np.__version__, ratio, fro, rel))
    # No NumPy: a pure-Python float64 product when small, else the job's own check.
    (sa, va), dt = load_f64(A)
    (sb, vb), _ = load_f64(B)
    m, k = (sa[1], sa[0]) if ta else sa
    n = sb[0] if tb else sb[1]
    shape = "%dx%dx%d" % (m, n, k)
    if m * n * k > 2_000_000:
        v = j.get("verify") or {}
        ok = v.get("verdict") == "passed"
        if "serial_max_error" in v:
            how = "serial float64 product, max err %s, tolerance %s" % (
                v.get("serial_max_error"), v.get("serial_tolerance"))
        else:
            how = "Freivalds only (m n k over 2^27), residual %s, tolerance %s" % (
                v.get("freivalds_residual"), v.get("freivalds_tolerance"))
        return ok, shape, ("no NumPy, too large for pure Python: the job's own float64 "
                           "check: %s" % how)
    ga = (lambda i, p: va[p * sa[1] + i]) if ta else (lambda i, p: va[i * sa[1] + p])
    gb = (lambda p, q: vb[q * sb[1] + p]) if tb else (lambda p, q: vb[p * sb[1] + q])
    (so, vo), odt = load_f64(out)
    if tuple(so) != (m, n):
        return False, shape, "output shape %s, expected (%d, %d)" % (so, m, n)
    c0 = load_f64(C)[0][1] if beta != 0 else None
    u = 2.0 ** -24 if dt == "f32" else 2.0 ** -53
    worst, num, den, mag2 = 0.0, 0.0, 0.0, 0.0
    for i in range(m):
        for q in range(n):
            s = mg = 0.0
            for p in range(k):
                x, y = ga(i, p), gb(p, q)
                s += x * y
                mg += abs(x * y)
            r = alpha * s + (beta * c0[i * n + q] if c0 else 0.0)
            mg = abs(alpha) * mg + (abs(beta * c0[i * n + q]) if c0 else 0.0)
            g = vo[i * n + q]
            if not math.isfinite(g):
                return False, shape, "non-finite element at (%d, %d)" % (i, q)
            worst = max(worst, abs(g - r) / (2.0 * k * u * mg + u * abs(r) + 1e-300))
            num += (g - r) ** 2
            den += r * r
            mag2 += mg * mg
    rel = math.sqrt(num / den) if den > 0 else math.sqrt(num)
    fro = math.sqrt(num) / max(3 * u * math.sqrt(k) * math.sqrt(mag2), 1e-300)
    return worst <= 1.0 and fro <= 1.0, shape, (
        "no NumPy: pure-Python float64 product: max err/bound %.3g, F err/bound %.3g, "
        "rel F err %.2e" % (worst, fro, rel))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("job")
    p.add_argument("json")
    for o in ("--tsv", "--md", "--step", "--case", "--gemm", "--rc", "--secs"):
        p.add_argument(o, required=True)
    p.add_argument("--log")
    p = sub.add_parser("anchor-torch")
    p.add_argument("--sizes", required=True)
    p.add_argument("--reps", type=int, default=7)
    p.add_argument("--tsv", required=True)
    p.add_argument("--md", required=True)
    p = sub.add_parser("anchor-bench")
    p.add_argument("json")
    p.add_argument("--tsv", required=True)
    p.add_argument("--md", required=True)
    p = sub.add_parser("ratios")
    p.add_argument("--tsv", required=True)
    p.add_argument("--md", required=True)
    p = sub.add_parser("npy-make")
    p.add_argument("dir")
    p.add_argument("--cases", required=True)
    p.add_argument("--mode", choices=("cuda", "cpu"), required=True)
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--data", action="append", default=[])
    p = sub.add_parser("npy-check")
    p.add_argument("case")
    for o in ("--tsv", "--md", "--rc", "--secs", "--output", "--json"):
        p.add_argument(o, required=True)
    a = ap.parse_args()
    return {"job": cmd_job, "anchor-torch": cmd_anchor_torch, "anchor-bench": cmd_anchor_bench,
            "ratios": cmd_ratios, "npy-make": cmd_npy_make,
            "npy-check": cmd_npy_check}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
