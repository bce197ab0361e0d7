#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The static call graph of src/, for the architecture's two structural rules.

  scripts/callgraph.py cycles [--root src] [--dir src/mpi ...]
      The circles of files: file A calls file B when a function defined in A calls a
      function defined (with external linkage) in B (calls through a table of functions, the
      dispatch to backends and schedules, are inversions, not dependencies, and do not count).
      Prints every strongly connected group
      of two or more files; exit 1 when there is one (docs/conventions.md: calls run one
      way, no circle of files). --dir limits the check to files under those folders.

  scripts/callgraph.py walk FUNCTION [--root src] [--by dir|file]
      Follows FUNCTION's calls depth first, in the order they appear in each body, every
      function once (the way docs/architecture.md walks an operand through
      tsr_dist_gemm_ex), and counts "stays" (functions visited), "moves" (calls into another
      room) and "returns" (calls back into a room the call chain has left: mpi -> core ->
      mpi). A room is a folder of src/ (--by dir, the default) or a file.

The parser is deliberately small: a definition is a line starting at column 0 with an
identifier followed by "(" whose body opens with "{" and closes with "}" at column 0
(clang-format's layout, which CI enforces); a call is a known function's name followed by
"(" inside a body. Calls through function pointers (the backend tables) and macros that
expand to calls are not seen: the figures are a lower bound of the real graph, computed the
same way every time, so that before/after comparisons are fair.
"""
import argparse
import os
import re
import sys

DEF_RE = re.compile(r"^(?!static\s+inline\b)[A-Za-z_][\w\s\*\(\),]*?\b([A-Za-z_]\w*)\s*\(")
CALL_RE = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "do", "else", "case",
            "_Static_assert", "defined", "__attribute__", "typeof", "_Alignof", "alignof"}


def strip_comments_and_strings(text):
    """The text with comments, string and character literals blanked (lines kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + " " * (j - i - 1) + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


TABLE_RE = re.compile(r"^[A-Za-z_][^;(]*?\b([A-Za-z_]\w*)\s*(\[[^\]]*\])?\s*=\s*\{", re.M)
MEMBER_RE = re.compile(r"\.([A-Za-z_]\w*)\s*=\s*([A-Za-z_]\w*)")


def parse_tables(root):
    """{(file, variable): (functions, {member: function})} for file-scope initializers
    (the schedule rows, the backend ops tables): a body that names the variable may call
    what it holds (var.member: that member's function; the variable alone: all of them)."""
    tables = {}
    for dirpath, _, files in os.walk(root):
        for f in sorted(files):
            if not f.endswith((".c", ".cu")):
                continue
            path = os.path.join(dirpath, f)
            with open(path, encoding="utf-8", errors="replace") as fh:
                text = strip_comments_and_strings(fh.read())
            for m in TABLE_RE.finditer(text):
                end = text.find("};", m.end())
                if end < 0:
                    continue
                init = text[m.end():end]
                ids = re.findall(r"\b([A-Za-z_]\w*)\b", init)
                members = dict(MEMBER_RE.findall(init))
                tables[(os.path.relpath(path), m.group(1))] = (ids, members)
    return tables


TABLES = {}


def parse(root):
    """{name: [(file, static, body)]} for every function defined under root."""
    TABLES.update(parse_tables(root))
    defs = {}
    for dirpath, _, files in os.walk(root):
        for f in sorted(files):
            if not f.endswith((".c", ".cu", ".h", ".cuh")):
                continue
            path = os.path.join(dirpath, f)
            with open(path, encoding="utf-8", errors="replace") as fh:
                lines = strip_comments_and_strings(fh.read()).split("\n")
            i = 0
            while i < len(lines):
                line = lines[i]
                m = DEF_RE.match(line) if line and not line[0].isspace() else None
                if m and not line.startswith(("typedef", "#", "struct", "enum", "union")) \
                        and m.group(1) not in KEYWORDS:
                    # the header may span lines; the body starts at the first "{" before ";"
                    j, head = i, line
                    while "{" not in head and ";" not in head and j + 1 < len(lines):
                        j += 1
                        head += " " + lines[j]
                    if "{" in head and ";" not in head.split("{")[0]:
                        k = j
                        while k + 1 < len(lines) and not lines[k].startswith("}"):
                            k += 1
                        body = "\n".join(lines[j:k + 1])
                        body = body[body.find("{"):]
                        static = bool(re.match(r"^\s*(static|__device__\s+static)\b", line)) or \
                            "static" in line.split(m.group(1))[0]
                        defs.setdefault(m.group(1), []).append(
                            (os.path.relpath(path), static, body))
                        i = k + 1
                        continue
                i += 1
    return defs


def callees(defs, file, body, tables=True):
    """The known functions a body calls, in order, each resolved to its definition's file;
    with tables, also those reached through a table the body names."""
    seen = []
    for m in CALL_RE.finditer(body):
        name = m.group(1)
        if name in KEYWORDS or name not in defs:
            continue
        cands = defs[name]
        own = [d for d in cands if d[0] == file]
        ext = [d for d in cands if not d[1]]
        target = own[0] if own else (ext[0] if ext else None)
        if target is not None and (name, target[0]) not in seen:
            seen.append((name, target[0]))
    # functions reached through a table the body names (its own file's, or an external one)
    for m in () if not tables else re.finditer(r"\b([A-Za-z_]\w*)\b(?:\s*(?:\.|->)\s*([A-Za-z_]\w*))?", body):
        var, member = m.group(1), m.group(2)
        hits = [v for (tf, tv), v in TABLES.items() if tv == var and tf == file] or \
            [v for (tf, tv), v in TABLES.items() if tv == var]
        if not hits:
            continue
        ids, members = hits[0]
        names = [members[member]] if member and member in members else ids
        for name in names:
            if name in defs:
                cands = defs[name]
                own = [d for d in cands if d[0] == file]
                ext = [d for d in cands if not d[1]]
                target = own[0] if own else (ext[0] if ext else cands[0])
                if (name, target[0]) not in seen:
                    seen.append((name, target[0]))
    return seen


def cycles(defs, dirs):
    edges = {}
    for name, ds in defs.items():
        for file, _, body in ds:
            for callee, cfile in callees(defs, file, body, tables=False):
                if cfile != file and not cfile.endswith((".h", ".cuh")) \
                        and not file.endswith((".h", ".cuh")):
                    edges.setdefault(file, set()).add(cfile)
    if dirs:
        keep = lambda f: any(f.startswith(d.rstrip("/") + "/") for d in dirs)
        edges = {a: {b for b in bs if keep(b)} for a, bs in edges.items() if keep(a)}
    # Tarjan's strongly connected components
    index, low, stack, on, groups, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            g = []
            while True:
                w = stack.pop()
                on.discard(w)
                g.append(w)
                if w == v:
                    break
            if len(g) > 1:
                groups.append(sorted(g))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return groups, edges


def walk(defs, root_fn, by):
    """Depth first from root_fn; a call into a room that is on the call stack below the
    caller's own room (the chain left it and comes back: mpi -> core -> mpi) is a return."""
    if root_fn not in defs:
        sys.exit(f"callgraph.py: no definition of {root_fn} under the source root")
    room = (lambda f: os.path.dirname(f)) if by == "dir" else (lambda f: f)
    visited, stats, path = set(), {"stays": 0, "moves": 0, "returns": 0}, []

    def go(name, file, body, stack):
        if (name, file) in visited:
            return
        visited.add((name, file))
        stats["stays"] += 1
        r = room(file)
        if stack and r != stack[-1]:
            stats["moves"] += 1
            if r in stack:
                stats["returns"] += 1
                path.append(f"  return to {r}: {' -> '.join(stack[stack.index(r):])} -> {name}")
        stack = stack + [r] if not stack or r != stack[-1] else stack
        for callee, cfile in callees(defs, file, body):
            for d in defs[callee]:
                if d[0] == cfile:
                    go(callee, cfile, d[2], stack)
                    break

    start = [d for d in defs[root_fn] if not d[1]] or defs[root_fn]
    go(root_fn, start[0][0], start[0][2], [])
    return stats, path


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("cycles")
    c.add_argument("--root", default="src")
    c.add_argument("--dir", action="append", default=[])
    w = sub.add_parser("walk")
    w.add_argument("function")
    w.add_argument("--root", default="src")
    w.add_argument("--by", choices=["dir", "file"], default="dir")
    w.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    if not os.path.isdir(a.root):
        sys.exit(f"callgraph.py: {a.root} is not a folder")
    defs = parse(a.root)
    if a.cmd == "cycles":
        groups, _ = cycles(defs, a.dir)
        for g in groups:
            print("circle of files: " + " <-> ".join(g))
        print(f"{len(groups)} circle(s) of files")
        return 1 if groups else 0
    st, path = walk(defs, a.function, a.by)
    print(f"{a.function}: {st['stays']} stays, {st['moves']} moves, {st['returns']} returns "
          f"(rooms by {a.by})")
    if a.verbose:
        for line in path:
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
