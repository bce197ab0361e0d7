#!/usr/bin/env bash
# Contradictory or malformed build options stop the configure with Tessera's own message
# (CMakeLists.txt, cmake/TesseraOptionChecks.cmake), on any machine: no CUDA or ROCm needed.
#   packaging/tests/option_checks.sh [SOURCE_DIR] [WORK_DIR]
set -euo pipefail
src=$(cd "${1:-$(dirname "${BASH_SOURCE[0]}")/../..}" && pwd)
work=${2:-$(mktemp -d)}
mkdir -p "$work"
fails=0
# expect_fail MESSAGE_REGEX cmake-args...: the configure fails and prints the message.
expect_fail() {
  local want=$1 dir out
  shift
  dir=$(mktemp -d "$work/cfg.XXXXXX")
  if out=$(cmake -S "$src" -B "$dir" -DTESSERA_BUILD_TESTS=OFF -DTESSERA_BUILD_EXAMPLES=OFF \
             -DTESSERA_BUILD_BENCH=OFF "$@" 2>&1); then
    echo "option_checks: FAIL: configure with $* succeeded"
    fails=$((fails + 1))
  elif grep -qE -- "$want" <<<"$out"; then
    echo "option_checks: ok: $* -> $(grep -oE -- "$want" <<<"$out" | head -n 1)"
  else
    echo "option_checks: FAIL: configure with $* did not say '$want':"
    tail -n 15 <<<"$out"
    fails=$((fails + 1))
  fi
  rm -rf "$dir"
}
expect_fail "TESSERA_ENABLE_CUDA and TESSERA_ENABLE_HIP are exclusive" \
  -DTESSERA_ENABLE_CUDA=ON -DTESSERA_ENABLE_HIP=ON
expect_fail "'sm_80' in CMAKE_CUDA_ARCHITECTURES is not a CUDA architecture" \
  -DTESSERA_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=sm_80
expect_fail "'8.0' in CMAKE_CUDA_ARCHITECTURES is not a CUDA architecture" \
  -DTESSERA_ENABLE_CUDA=ON "-DCMAKE_CUDA_ARCHITECTURES=90;8.0"
expect_fail "'90a' in TESSERA_HIP_ARCHITECTURES is not an AMD GPU architecture" \
  -DTESSERA_ENABLE_HIP=ON -DTESSERA_HIP_ARCHITECTURES=90a
expect_fail "CMAKE_CUDA_ARCHITECTURES is set for a HIP build" \
  -DTESSERA_ENABLE_HIP=ON -DCMAKE_CUDA_ARCHITECTURES=80
# Accepted values pass the checks (the configure may still fail later, without nvcc or hipcc).
for args in "-DTESSERA_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=80;90a;90-real;all-major" \
            "-DTESSERA_ENABLE_HIP=ON -DTESSERA_HIP_ARCHITECTURES=gfx90a;gfx942;gfx90a:xnack-"; do
  dir=$(mktemp -d "$work/cfg.XXXXXX")
  # shellcheck disable=SC2086
  out=$(cmake -S "$src" -B "$dir" -DTESSERA_BUILD_TESTS=OFF $args 2>&1) || true
  if grep -q "is not a\(n AMD GPU\| CUDA\) architecture" <<<"$out"; then
    echo "option_checks: FAIL: $args was refused"
    fails=$((fails + 1))
  else
    echo "option_checks: ok: $args accepted"
  fi
  rm -rf "$dir"
done
if [ $fails -ne 0 ]; then
  echo "option_checks: $fails failed"
  exit 1
fi
echo "option_checks: passed"
