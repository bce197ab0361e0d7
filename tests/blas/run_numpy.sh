#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# NumPy under the BLAS drop-in (tests/blas/numpy_dropin.py): references from NumPy's own BLAS in
# float64, then the same products with the library preloaded, compared; the library's exit line
# (TSR_BLAS_VERBOSE) must show that it served cblas_sgemm and cblas_dgemm calls, and its complex
# line cblas_cgemm and cblas_zgemm calls (complex64 and complex128 @), none by the plain loop.
#   run_numpy.sh PYTHON SCRIPT PRELOAD
# Exit 77 (skipped) when PYTHON has no NumPy, or its NumPy does not call the CBLAS GEMM.
set -u
py=$1 script=$2 preload=$3
"$py" -c 'import numpy' 2>/dev/null || { echo "no NumPy for $py: skipped"; exit 77; }
d=$(mktemp -d) || exit 1
trap 'rm -rf "$d"' EXIT
"$py" "$script" ref "$d/ref.npz" || { echo "reference run failed"; exit 1; }
LD_PRELOAD="$preload" TSR_BLAS_VERBOSE=1 OMP_NUM_THREADS=2 "$py" "$script" check "$d/ref.npz" \
  > "$d/out" 2> "$d/err"
rc=$?
cat "$d/out"
cat "$d/err"
[ $rc -eq 0 ] || { echo "check run failed (exit $rc)"; exit 1; }
line=$(grep '^tessera_blas: calls:' "$d/err") || { echo "no report from the preloaded library"; exit 1; }
s=$(printf '%s\n' "$line" | sed -n 's/.*cblas_sgemm \([0-9]*\),.*/\1/p')
dd=$(printf '%s\n' "$line" | sed -n 's/.*cblas_dgemm \([0-9]*\);.*/\1/p')
if [ "${s:-0}" -eq 0 ] && [ "${dd:-0}" -eq 0 ]; then
  echo "NumPy made no CBLAS GEMM call through the drop-in (its BLAS is not libblas/cblas): skipped"
  exit 77
fi
[ "${s:-0}" -gt 0 ] && [ "${dd:-0}" -gt 0 ] || { echo "cblas_sgemm $s, cblas_dgemm $dd: one is 0"; exit 1; }
printf '%s\n' "$line" | grep ' fallback 0$' > /dev/null || { echo "some calls needed the fallback loop"; exit 1; }
# The complex products: cblas_cgemm and cblas_zgemm on the complex line (a libtessera without
# tsr_gemm_host_complex leaves them the plain loop: the values were checked, the rest is not).
if grep -q 'has no tsr_gemm_host_complex' "$d/err"; then
  echo "served by the drop-in: cblas_sgemm $s, cblas_dgemm $dd (complex: plain loop, no tsr_gemm_host_complex)"
  exit 0
fi
cline=$(grep '^tessera_blas: complex calls:' "$d/err") || { echo "no complex calls reached the drop-in"; exit 1; }
c=$(printf '%s\n' "$cline" | sed -n 's/.* cblas_cgemm \([0-9]*\),.*/\1/p')
z=$(printf '%s\n' "$cline" | sed -n 's/.* cblas_zgemm \([0-9]*\),.*/\1/p')
[ "${c:-0}" -gt 0 ] && [ "${z:-0}" -gt 0 ] || { echo "cblas_cgemm $c, cblas_zgemm $z: one is 0"; exit 1; }
printf '%s\n' "$cline" | grep ' fallback 0$' > /dev/null || { echo "some complex calls needed the fallback loop"; exit 1; }
echo "served by the drop-in: cblas_sgemm $s, cblas_dgemm $dd, cblas_cgemm $c, cblas_zgemm $z"
