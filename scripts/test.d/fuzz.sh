# SPDX-License-Identifier: BSD-3-Clause
# Hook of scripts/test.sh (sourced in a subshell; uses $BUILD, $TSR_ROOT, $TSR_JOBS, tsr_log):
# a bounded libFuzzer run of the .npy header parser (tests/fuzz/fuzz_npy.c) in its own clang
# build. Skipped when clang is missing; fails when the build fails or the fuzzer finds a crash.
# TSR_FUZZ_TIME sets the run time in seconds (default 60).

fuzz_main() {
  if ! command -v clang >/dev/null 2>&1; then
    echo "fuzz: clang not found (Debian: clang libclang-rt-dev), skipped"
    return 0
  fi
  local dir="$BUILD/fuzz" seconds="${TSR_FUZZ_TIME:-60}"
  local cxx=c++
  command -v clang++ >/dev/null 2>&1 && cxx=clang++
  # Only the fuzz target is built; the test folder must be configured because it holds it.
  cmake -S "$TSR_ROOT" -B "$dir" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER="$cxx" \
    -DCMAKE_BUILD_TYPE=Debug -DTESSERA_ENABLE_FUZZ=ON -DTESSERA_BUILD_TESTS=ON \
    -DTESSERA_BUILD_EXAMPLES=OFF -DTESSERA_BUILD_BENCH=OFF || return 1
  cmake --build "$dir" --target fuzz_npy -j "$TSR_JOBS" || return 1

  # Seed corpus: a valid header of every flavour (dtype x byte order x order x version).
  local seeds="$dir/seeds" corpus="$dir/corpus"
  rm -rf "$seeds"
  mkdir -p "$seeds" "$corpus" || return 1
  local n=0 major kind order fortran shape
  for major in 1 2 3; do
    for kind in '<f4' '>f4' '<f8' '>f8' '<i4' '>i4' '<i8' '=i8' '<c8' '>c16'; do
      for fortran in False True; do
        case $((n % 4)) in
          0) shape='()' ;;
          1) shape='(5,)' ;;
          2) shape='(178, 13)' ;;
          *) shape='(2, 3, 1, 4, 5, 6, 7, 8)' ;;
        esac
        fuzz_seed "$seeds/seed_$n.npy" "$major" \
          "{'descr': '$kind', 'fortran_order': $fortran, 'shape': $shape, }" || return 1
        n=$((n + 1))
      done
    done
  done
  fuzz_seed "$seeds/seed_dq.npy" 1 '{"shape": (3L, 4L), "descr": "<f8", "fortran_order": True}'
  fuzz_seed "$seeds/seed_ws.npy" 2 $' {\n  \'fortran_order\' : False ,\n\t\'shape\':(0, 7,),\'descr\':\'>i4\'}'

  tsr_log "fuzz: fuzz_npy for ${seconds}s on $(ls "$seeds" | wc -l) seeds"
  local log="$dir/fuzz.log"
  # New inputs go to the first folder (corpus); crash reproducers to $dir/crash-*.
  if ! "$dir/tests/fuzz_npy" -max_total_time="$seconds" -max_len=1024 -timeout=10 \
      -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$dir/" \
      -dict="$TSR_ROOT/tests/fuzz/npy.dict" "$corpus" "$seeds" >"$log" 2>&1; then
    tail -n 60 "$log"
    echo "fuzz: fuzz_npy failed (reproducer under $dir/crash-* or $dir/leak-*)"
    return 1
  fi
  grep -E '^(stat::number_of_executed_units|stat::new_units_added|Done)' "$log" || tail -n 5 "$log"
  echo "fuzz: no crash"
}

# fuzz_seed FILE MAJOR DICT: writes a .npy header (NEP 1) with the given dict, padded to 64.
fuzz_seed() {
  local file=$1 major=$2 dict=$3 prefix=10
  [ "$major" -ne 1 ] && prefix=12
  local total=$(((prefix + ${#dict} + 1 + 63) / 64 * 64))
  local hlen=$((total - prefix)) k
  {
    printf '\x93NUMPY'
    printf "\\x$(printf %02x "$major")\\x00"
    for ((k = 0; k < prefix - 8; k++)); do
      printf "\\x$(printf %02x $(((hlen >> (8 * k)) & 255)))"
    done
    printf '%s' "$dict"
    printf '%*s\n' $((hlen - ${#dict} - 1)) ''
  } >"$file"
}

fuzz_main
