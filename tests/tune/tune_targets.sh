#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# tessera-tune's messages (issue 51): --help prints the usage once on stdout and exits 0; a bad
# option or value exits 2 naming the option, the value and the accepted range. Its destination
# and concurrency (issue 30): a character device, FIFO or symbolic
# link as --out is refused at once (exit 1, before any tuning, left as it was); --dtypes with
# an unknown dtype is a usage error (exit 2) that writes nothing; --show and a tuning run with
# TSR_WISDOM naming a FIFO finish; four tuners writing one file at once keep all four entries.
#   tune_targets.sh TESSERA_TUNE
set -u
tune=$1
d=$(mktemp -d) || exit 1
trap 'rm -rf "$d"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
refused() { # refused NAME KIND: --out NAME exits 1 within 10 s, naming KIND, before tuning
  timeout 10 "$tune" --seconds 30 --threads 1 --dtypes d --out "$d/$1" > "$d/out" 2> "$d/err"
  rc=$?
  [ $rc = 1 ] || { cat "$d/err"; fail "--out $1: exit $rc, want 1 (124: it tuned or blocked)"; }
  grep -q "$2" "$d/err" || { cat "$d/err"; fail "--out $1: no \"$2\" in the message"; }
  grep -q "GFLOP/s" "$d/err" && fail "--out $1: tuned before refusing"
  return 0
}
# A copy of /dev/null (needs CAP_MKNOD; never the real one, which an unfixed tuner would replace).
if mknod "$d/null" c 1 3 2> /dev/null; then
  refused null "character device"
  [ -c "$d/null" ] || fail "the character device was replaced"
else
  echo "note: mknod not permitted, character-device case left out"
fi
mkfifo "$d/fifo" || exit 1
refused fifo "a FIFO"
[ -p "$d/fifo" ] || fail "the FIFO was replaced"
echo keep > "$d/target"
ln -s "$d/target" "$d/link"
refused link "symbolic link"
[ -L "$d/link" ] && [ "$(cat "$d/target")" = keep ] || fail "the link or its target changed"

for bad in x f32,q "" s, i32 c32 f16; do
  timeout 10 "$tune" --seconds 1 --dtypes "$bad" --out "$d/w" > /dev/null 2> "$d/err"
  rc=$?
  [ $rc = 2 ] || fail "--dtypes '$bad': exit $rc, want 2"
  grep -q "bad value '$bad' for --dtypes" "$d/err" || { cat "$d/err"; fail "--dtypes '$bad': message"; }
  [ -e "$d/w" ] && fail "--dtypes '$bad' wrote a file"
done

# A complex dtype (name or BLAS letter) tunes its real dtype: c128 and z write f64 entries only,
# named by the dtype table.
timeout 60 "$tune" --seconds 1 --threads 1 --dtypes z,c128 --out "$d/z" > /dev/null 2> "$d/err" ||
  { cat "$d/err"; fail "--dtypes z,c128: exit $?"; }
grep -q '^entry f64 1 ' "$d/z" || { cat "$d/z"; fail "--dtypes z,c128: no f64 entry"; }
grep -q '^entry f32' "$d/z" && fail "--dtypes z,c128 tuned f32"

# --help: exit 0, the usage once, on stdout, nothing on stderr (issue 51).
"$tune" --help > "$d/out" 2> "$d/err" || fail "--help: exit $?, want 0"
[ "$(grep -c '^usage: tessera-tune' "$d/out")" = 1 ] || { cat "$d/out"; fail "--help: usage not once"; }
grep -q -- '--seconds S' "$d/out" || fail "--help: no options"
[ -s "$d/err" ] && { cat "$d/err"; fail "--help wrote to stderr"; }
"$tune" -h > /dev/null 2>&1 || fail "-h: exit $?, want 0"
# Bad values and options: exit 2 and one line that names the option, the value and the range;
# no usage text, nothing tuned, nothing written.
bad() { # bad "EXPECTED TEXT" ARGS...
  want=$1
  shift
  timeout 10 "$tune" "$@" --out "$d/w" > "$d/out" 2> "$d/err"
  rc=$?
  [ $rc = 2 ] || { cat "$d/err"; fail "$*: exit $rc, want 2"; }
  grep -qF -- "$want" "$d/err" || { cat "$d/err"; fail "$*: no \"$want\" in the message"; }
  grep -q "try 'tessera-tune --help'" "$d/err" || fail "$*: no pointer to --help"
  grep -q '^usage:' "$d/err" "$d/out" && fail "$*: printed the usage instead of the reason"
  [ -e "$d/w" ] && fail "$* wrote a file"
  return 0
}
bad "bad value '100' for --seconds: expected a number of seconds in (0, 60]" --seconds 100
bad "bad value '0' for --seconds" --seconds 0
bad "bad value 'nan' for --seconds" --seconds nan
bad "bad value '0' for --threads: expected a comma-separated list of up to 8 thread counts, each in [1, 1024]" --threads 0
bad "bad value '1,,2' for --threads" --threads 1,,2
bad "bad value '1,2,3,4,5,6,7,8,9' for --threads" --threads 1,2,3,4,5,6,7,8,9
bad "unknown option '--bogus'" --bogus
timeout 10 "$tune" --dtypes d --seconds > /dev/null 2> "$d/err"
[ $? = 2 ] && grep -q "option --seconds needs a value" "$d/err" || { cat "$d/err"; fail "--seconds without a value"; }

# TSR_WISDOM naming a FIFO: read without blocking, reported, never waited on.
TSR_WISDOM="$d/fifo" timeout 20 "$tune" --show > "$d/out" 2>&1 || fail "--show with a FIFO: exit $?"
grep -q "^wisdom: ignored: .*FIFO" "$d/out" || { cat "$d/out"; fail "--show: no reason"; }
TSR_WISDOM="$d/fifo" timeout 20 "$tune" --seconds 1 --threads 1 --dtypes d > /dev/null 2>&1
[ $? = 1 ] || fail "tuning into TSR_WISDOM=FIFO: want exit 1"

# Four tuners at once into one new file: each merges under the lock, none is lost.
pids=""
for t in 1 2 3 4; do
  timeout 120 "$tune" --seconds 2 --threads $t --dtypes d --out "$d/shared" > "$d/out$t" 2>&1 &
  pids="$pids $!"
done
for p in $pids; do wait "$p" || fail "a concurrent tuner failed: $(cat "$d"/out*)"; done
for t in 1 2 3 4; do
  grep -q "^entry f64 $t " "$d/shared" || { cat "$d/shared"; fail "entry for $t threads lost"; }
done
[ "$(grep -c '^entry ' "$d/shared")" = 4 ] || fail "want 4 entries"
TSR_WISDOM="$d/shared" "$tune" --show | grep -q '^wisdom: used' || fail "merged file not used"
echo "tune targets: ok"
