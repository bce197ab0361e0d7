#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""What docs/architecture.md and docs/conventions.md quote, checked against the tree.

  check_docs.py [ROOT]

- every `src/...`, `include/...`, `tests/...`, `bench/...`, `scripts/...`, `cmake/...` path
  in backticks exists (a `*` or a `<placeholder>` must match at least one path);
- the number of functions architecture.md says src/core/dropin.h lists equals its X(...)
  entries;
- every internal header that src/blas and src/scalapack include (#include "...", anything but
  the public tessera.h and tessera/*.h) is one that architecture.md lists as allowed for them
  (the backticked paths of the sentence "the drop-ins' sources include only these internal
  headers");
- no markdown table row is longer than MAX_ROW characters (long cell text goes into paragraphs
  below the table).

Prints one line per problem and exits 1 if there is any, else 0.
"""
import glob
import os
import re
import sys

DOCS = ("docs/architecture.md", "docs/conventions.md")
PATH_PREFIXES = ("src/", "include/", "tests/", "bench/", "scripts/", "cmake/")
MAX_ROW = 400
DROPIN = "src/core/dropin.h"
DROPIN_COUNT = re.compile(r"`src/core/dropin\.h`: a list of (\d+) internal functions")
ALLOWED_MARK = "the drop-ins' sources include only these internal headers"
DROPIN_SOURCES = ("src/blas", "src/scalapack")


def read(root, rel):
    with open(os.path.join(root, rel), encoding="utf-8") as f:
        return f.read()


def quoted_paths(text):
    """The backticked spans that start with a tree path, cut at the first blank."""
    for span in re.findall(r"`([^`\n]+)`", text):
        word = span.split()[0].rstrip(":,;.)")
        if word.startswith(PATH_PREFIXES):
            yield word


def path_exists(root, path):
    pattern = re.sub(r"<[^<>/]*>", "*", path)  # `src/<layer>/<layer>.cmake`
    if any(c in pattern for c in "*?["):
        return bool(glob.glob(os.path.join(root, pattern)))
    return os.path.exists(os.path.join(root, pattern))


def check_paths(root, doc, text):
    return [f"{doc}: `{p}` does not exist" for p in sorted(set(quoted_paths(text)))
            if not path_exists(root, p)]


def check_dropin_count(root, text):
    doc = DOCS[0]
    said = DROPIN_COUNT.findall(text)
    if not said:
        return [f"{doc}: no sentence '`{DROPIN}`: a list of N internal functions'"]
    entries = re.findall(r"^\s*X\((tsr__\w+)\)", read(root, DROPIN), re.M)
    return [f"{doc}: says {DROPIN} lists {n} functions; it has {len(entries)} X(...) entries"
            for n in said if int(n) != len(entries)]


def allowed_headers(text):
    """The backticked paths from the marker sentence to the end of its paragraph or item."""
    mark = re.search(r"\s+".join(map(re.escape, ALLOWED_MARK.split())), text)
    if not mark:
        return None
    rest = text[mark.start():]
    end = re.search(r"\n\s*\n|\n- ", rest)
    return {p for p in quoted_paths(rest[:end.start()] if end else rest)
            if p.startswith("src/") and p.endswith(".h")}


def check_dropin_includes(root, text):
    doc = DOCS[0]
    allowed = allowed_headers(text)
    if allowed is None:
        return [f"{doc}: no sentence '... {ALLOWED_MARK}: ...'"]
    problems = []
    for folder in DROPIN_SOURCES:
        for src in sorted(glob.glob(os.path.join(root, folder, "*.[ch]"))):
            for inc in re.findall(r'^\s*#\s*include\s+"([^"]+)"', read(root, src), re.M):
                if inc == "tessera.h" or inc.startswith("tessera/"):
                    continue
                if "src/" + inc not in allowed:
                    problems.append(f"{os.path.relpath(src, root)} includes \"{inc}\", which "
                                    f"{doc} does not list as allowed (src/{inc})")
    return problems


def check_table_rows(doc, text):
    return [f"{doc}:{n}: a table row of {len(line)} characters (at most {MAX_ROW})"
            for n, line in enumerate(text.splitlines(), 1)
            if line.lstrip().startswith("|") and len(line) > MAX_ROW]


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "../..")
    problems = []
    for doc in DOCS:
        text = read(root, doc)
        problems += check_paths(root, doc, text) + check_table_rows(doc, text)
        if doc == DOCS[0]:
            problems += check_dropin_count(root, text) + check_dropin_includes(root, text)
    for p in problems:
        print(p)
    print(f"check_docs: {len(problems)} problem(s) in {', '.join(DOCS)}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
