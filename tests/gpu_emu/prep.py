#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Rewrites the <<<grid, block, 0, stream>>> launches of a .cu file into tsr_emu_launch calls
# (a launch may span lines). Used by tests/gpu_emu/run.sh.
import re, sys, os
src, dst = sys.argv[1], sys.argv[2]
s = open(src).read()
def rep(m):
    name, cfg, args = m.group(1), m.group(2), m.group(3)
    parts = [p.strip() for p in cfg.split(',')]
    return 'tsr_emu_launch(dim3(%s), dim3(%s), [&]() { %s(%s); });' % (parts[0], parts[1], name, args)
# A launch may span lines (also inside a macro, with backslash-newlines).
s = re.sub(r'\\\n', ' ', s)
s2, n = re.subn(r'([A-Za-z_][A-Za-z0-9_]*(?:<[^;]*?>)?)\s*<<<(.*?)>>>\((.*?)\);', rep, s, flags=re.S)
open(dst, 'w').write(s2)
print(os.path.basename(src), n, 'launches')
