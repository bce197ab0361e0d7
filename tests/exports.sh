#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# What the shared libraries export (issue 32, "one runtime per process"):
#  - libtessera.so: the public tsr_ names (unversioned) and exactly the drop-ins' internal
#    interface of src/core/dropin.h, each under the version node TESSERA_INTERNAL_<version>;
#    no other symbol (every other internal function is hidden);
#  - libtessera_blas.so and libtessera_scalapack.so: their entry points and tsr_blas_* /
#    tsr_scalapack_*, nothing internal; both depend on libtessera.so.0 (DT_NEEDED) and bind
#    every internal function they call to the TESSERA_INTERNAL node (no private copy).
# Usage: exports.sh BUILD_DIR SOURCE_DIR VERSION
set -euo pipefail
build=$1 src=$2 version=$3
node="TESSERA_INTERNAL_$version"
fail=0
err() { echo "exports: $*" >&2; fail=1; }

# The interface's names, as the version script is generated from them.
mapfile -t iface < <(grep -oE '^  X\(tsr__[a-z0-9_]+\)' "$src/src/core/dropin.h" | sed -E 's/.*\((.*)\)/\1/')
[ ${#iface[@]} -gt 0 ] || err "no X(tsr__...) entry found in src/core/dropin.h"
lib=$build/libtessera.so
mpi=$(nm -D --defined-only "$lib" | grep -c ' tsr_dist_gemm$' || true)

declare -A seen=()
while read -r _ type name; do
  case "$name" in
    "$node") ;; # the version node itself
    __odr_asan* | __asan* | __ubsan*) ;; # sanitizer instrumentation (the asan build)
    tsr__*@@"$node") seen[${name%%@@*}]=1 ;;
    tsr__*) err "libtessera.so exports the internal $name outside $node" ;;
    tsr_[a-z]*@*) err "libtessera.so versions the public $name" ;;
    tsr_[a-z]*) ;;
    *) err "libtessera.so exports $name ($type), which is neither public nor the drop-ins' interface" ;;
  esac
done < <(nm -D --defined-only "$lib")
for name in "${iface[@]}"; do
  if [ -z "${seen[$name]:-}" ]; then
    case "$name" in
      tsr__dist_* | tsr__mpi_* | tsr__dm_* | tsr__bc_*) [ "$mpi" = 0 ] && continue ;;
    esac
    err "$name (src/core/dropin.h) is not exported as $name@@$node"
  fi
done
[ "${#seen[@]}" -ge 5 ] || err "only ${#seen[@]} interface functions exported"

check_dropin() { # library allowed-regex
  local so=$1 allowed=$2
  [ -f "$so" ] || return 0
  local dyn
  dyn=$(readelf -d "$so") # not piped into grep -q: pipefail and SIGPIPE
  grep -q 'NEEDED.*\[libtessera\.so\.0\]' <<<"$dyn" || err "$(basename "$so") does not depend on libtessera.so.0"
  while read -r _ _ name; do
    [[ "$name" =~ ^(__odr_asan|__asan|__ubsan) ]] && continue # sanitizer instrumentation
    [[ "$name" =~ $allowed ]] || err "$(basename "$so") exports $name"
  done < <(nm -D --defined-only "$so")
  while read -r _ name; do
    case "$name" in
      tsr__*@"$node") ;;
      tsr__*) err "$(basename "$so") needs $name outside $node" ;;
    esac
  done < <(nm -D --undefined-only "$so")
  # Its internal calls resolve in libtessera.so, not in a private copy.
  if grep -qE ' [Tt] tsr__(set_error_at|api_enter)$' <<<"$(nm "$so" 2>/dev/null)"; then
    err "$(basename "$so") contains its own copy of the core (tsr__set_error_at or tsr__api_enter)"
  fi
}
check_dropin "$build/libtessera_blas.so" '^(sgemm_|dgemm_|cgemm_|zgemm_|cgemm3m_|zgemm3m_|cblas_sgemm|cblas_dgemm|cblas_cgemm|cblas_zgemm|cblas_cgemm3m|cblas_zgemm3m|CBLAS_CallFromC|RowMajorStrg|tsr_blas_[a-z_]+)$'
check_dropin "$build/libtessera_scalapack.so" '^(pdgemm_|psgemm_|pzgemm_|pcgemm_|tsr_scalapack_[a-z_]+)$'

[ $fail = 0 ] && echo "exports: libtessera.so exports the public API and ${#seen[@]} functions under $node; the drop-ins depend on it"
exit $fail
