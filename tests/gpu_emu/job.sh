#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# tessera-gemm on emulated GPUs (run.sh's "job"): products of NumPy-made inputs (f64 C order,
# f32 Fortran order, a transposed real input from shared data when present) at -np 1, 2 and 4,
# staged and device-to-device, compared with NumPy's float64 product; and the --json pipeline
# counts of a 1-rank run (no host<->device byte in the multiply, one GEMM call); the same for
# c128/c64 (--transa c, complex alpha) against NumPy's complex128 product.
#   job.sh TESSERA_GEMM WORKDIR
set -euo pipefail
job=$1
dir=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mkdir -p "$dir"
py=""
for c in python3 /usr/bin/python3; do
  if command -v "$c" >/dev/null 2>&1 && "$c" -c 'import numpy' 2>/dev/null; then py=$c; break; fi
done
if [ -z "$py" ]; then
  echo "job: no python3 with numpy: skipped"
  exit 0
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
"$py" - "$dir" <<'PY'
import sys, numpy as np
d = sys.argv[1]
rng = np.random.default_rng(5)
np.save(f"{d}/a64.npy", rng.uniform(-1, 1, (131, 97)))
np.save(f"{d}/b64.npy", rng.uniform(-1, 1, (97, 75)))
np.save(f"{d}/a32.npy", np.asfortranarray(rng.uniform(-1, 1, (90, 120)).astype(np.float32)))
np.save(f"{d}/b32.npy", np.asfortranarray(rng.uniform(-1, 1, (120, 66)).astype(np.float32)))
PY
cases=("a64 b64" "a32 b32")
real=$here/../../../shared/data/wine.npy
[ -f "$real" ] && cp "$real" "$dir/wine.npy" && cases+=("wine wine --transa")
status=0
for c in "${cases[@]}"; do
  read -r a b extra <<<"$c"
  for np_ in 1 2 4; do
    for path in 1 0; do
      out=$dir/c_${a}_${np_}_${path}.npy
      rm -f "$out"
      if ! mpirun -np "$np_" --oversubscribe -x TSR_EMU_WARP -x OMP_NUM_THREADS \
        -x TSR_DIST_GPU_STAGING="$path" "$job" --device cuda -a "$dir/$a.npy" -b "$dir/$b.npy" \
        ${extra:-} --block 16 -o "$out" >"$dir/log" 2>&1; then
        echo "job: FAILED $a x $b ${extra:-} -np $np_ staging=$path"; cat "$dir/log"; status=1; continue
      fi
      if ! "$py" - "$dir/$a.npy" "$dir/$b.npy" "$out" "${extra:-}" <<'PY'
import sys, numpy as np
a, b, c = (np.load(p) for p in sys.argv[1:4])
if sys.argv[4] == "--transa": a = a.T
ref = a.astype(np.float64) @ b.astype(np.float64)
eps = np.finfo(c.dtype).eps
err = np.abs(c - ref).max() / max(np.abs(a).max() * np.abs(b).max() * a.shape[1], 1e-300)
assert c.dtype == a.dtype and c.shape == ref.shape, (c.dtype, c.shape)
assert err <= 4 * eps * np.sqrt(a.shape[1]), err
PY
      then
        echo "job: WRONG product $a x $b ${extra:-} -np $np_ staging=$path"; status=1
      else
        echo "job: $a x $b ${extra:-} -np $np_ staging=$path: NumPy's product"
      fi
    done
  done
done
# The pipeline counts in the JSON report of a 1-rank run on the (emulated) GPU.
mpirun -np 1 -x TSR_EMU_WARP -x OMP_NUM_THREADS "$job" --device cuda -m 96 -n 80 -k 112 \
  --block 16 --repeat 2 --json "$dir/r.json" >"$dir/log" 2>&1 || { cat "$dir/log"; status=1; }
"$py" - "$dir/r.json" <<'PY' || status=1
import json, sys
r = json.load(open(sys.argv[1]))
p = r["pipeline"]
assert r["warmup"] == 1, r["warmup"]
assert p["device"] == "gpu" and p["steps"] == 1 and p["gemm_calls"] == 1, p
assert p["h2d_bytes"] == 0 and p["d2h_bytes"] == 0 and p["host_syncs_in_loop"] == 0, p
print("job: --json pipeline of a 1-rank GPU run:", p)
PY
# Complex (issue 50): c128 C-order inputs with --transa c and a complex alpha, c64 Fortran-order
# inputs, at -np 1 and 2 against NumPy's complex128 product; then the --json pipeline of a
# 1-rank c128 run: one GEMM, no host<->device byte, no host wait in the loop. Until the
# distributed layer runs complex GEMMs of device arrays it refuses them (TSR_ERR_UNSUPPORTED,
# "not available yet"): reported as skipped, never as passed.
"$py" - "$dir" <<'PY'
import sys, numpy as np
d = sys.argv[1]
rng = np.random.default_rng(7)
def c(shape, dt): return (rng.uniform(-1, 1, shape) + 1j * rng.uniform(-1, 1, shape)).astype(dt)
np.save(f"{d}/ac128.npy", c((97, 131), np.complex128))  # used as A^H: 131 x 97
np.save(f"{d}/bc128.npy", c((97, 75), np.complex128))
np.save(f"{d}/ac64.npy", np.asfortranarray(c((90, 120), np.complex64)))
np.save(f"{d}/bc64.npy", np.asfortranarray(c((120, 66), np.complex64)))
PY
complex_skip=0
for c in "ac128 bc128 --transa c --alpha 1.5,-0.5" "ac64 bc64"; do
  read -r a b extra <<<"$c"
  for np_ in 1 2; do
    out=$dir/c_${a}_${np_}.npy
    rm -f "$out"
    if ! mpirun -np "$np_" --oversubscribe -x TSR_EMU_WARP -x OMP_NUM_THREADS "$job" --device cuda \
      -a "$dir/$a.npy" -b "$dir/$b.npy" ${extra:-} --block 16 -o "$out" >"$dir/log" 2>&1; then
      if grep -q 'not available yet' "$dir/log"; then
        complex_skip=1
        echo "job: $a x $b ${extra:-} -np $np_: skipped ($(grep -m1 'not available yet' "$dir/log"))"
        continue
      fi
      echo "job: FAILED $a x $b ${extra:-} -np $np_"; cat "$dir/log"; status=1; continue
    fi
    if ! "$py" - "$dir/$a.npy" "$dir/$b.npy" "$out" "${extra:-}" <<'PY'
import sys, numpy as np
a, b, c = (np.load(p) for p in sys.argv[1:4])
alpha = 1.0
if "--transa c" in sys.argv[4]: a, alpha = a.conj().T, 1.5 - 0.5j
ref = alpha * (a.astype(np.complex128) @ b.astype(np.complex128))
eps = np.finfo(c.dtype).eps
err = np.abs(c - ref).max() / max(abs(alpha) * np.abs(a).max() * np.abs(b).max() * a.shape[1], 1e-300)
assert c.dtype == a.dtype and c.shape == ref.shape, (c.dtype, c.shape)
assert err <= 8 * eps * np.sqrt(a.shape[1]), err
PY
    then
      echo "job: WRONG product $a x $b ${extra:-} -np $np_"; status=1
    else
      echo "job: $a x $b ${extra:-} -np $np_: NumPy's product"
    fi
  done
done
if [ $complex_skip = 0 ]; then
  mpirun -np 1 -x TSR_EMU_WARP -x OMP_NUM_THREADS "$job" --device cuda --dtype c128 -m 96 -n 80 \
    -k 112 --alpha 0.5,2 --block 16 --repeat 2 --json "$dir/rc.json" >"$dir/log" 2>&1 ||
    { cat "$dir/log"; status=1; }
  "$py" - "$dir/rc.json" <<'PY' || status=1
import json, sys
r = json.load(open(sys.argv[1]))
p = r["pipeline"]
assert r["dtype"] == "c128", r["dtype"]
assert p["device"] == "gpu" and p["steps"] == 1 and p["gemm_calls"] == 1, p
assert p["h2d_bytes"] == 0 and p["d2h_bytes"] == 0 and p["host_syncs_in_loop"] == 0, p
print("job: --json pipeline of a 1-rank c128 GPU run:", p)
PY
fi
exit $status
