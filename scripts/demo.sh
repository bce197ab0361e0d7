#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The main job, end to end: installs what is missing, builds the CPU+MPI variant (Release,
# in build/cpu like scripts/test.sh), runs the API tour, then the distributed matrix
# multiplication job `tessera-gemm` under mpirun with 2 ranks:
#   1. the Gram matrix W W^T of the UCI wine data (178 x 13, float64), written to a .npy file
#      and verified (Freivalds' check + a serial float64 product);
#   2. the image product F F^T of a grayscale photograph (427 x 640, float32), verified;
#   3. a random 2048 x 2048 x 2048 float64 problem, verified with Freivalds' check.
# Every step stops the script when it fails (tessera-gemm exits 1 on a runtime error, 2 on a
# usage error and 3 when the verification fails).
#   usage: scripts/demo.sh [--no-deps]   (TSR_BUILD_DIR overrides the build folder root)
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
[ "${1:-}" = "--no-deps" ] || tsr_install_packages

build=${TSR_BUILD_DIR:-$TSR_ROOT/build}/cpu
out=$build/demo # the job's outputs (.npy products, JSON results) stay here
gemm=$build/tessera-gemm
mpirun_=(mpirun -np 2 --oversubscribe)

tsr_log "configure and build (CPU + OpenMP + MPI, Release) in $build"
tsr_build_variant cpu "$build" -DCMAKE_BUILD_TYPE=Release
mkdir -p "$out"

tsr_log "the API tour: examples/tutorial (arrays, devices, elementwise ops, matmul, .npy)"
(cd "$out" && "$build/examples/tutorial")

tsr_log "tessera-gemm on real data: the wine Gram matrix C = W * W^T (W: 178 x 13, f64), 2 ranks"
"${mpirun_[@]}" "$gemm" -a "$TSR_ROOT/data/wine.npy" -b "$TSR_ROOT/data/wine.npy" --transb \
  --block 64 -o "$out/wine_gram.npy" --json "$out/wine_gram.json"
echo "wrote $out/wine_gram.npy (178 x 178); results also in $out/wine_gram.json"

tsr_log "tessera-gemm on an image: C = F * F^T (F: 427 x 640 grayscale photo, f32), 2 ranks"
"${mpirun_[@]}" "$gemm" -a "$TSR_ROOT/data/flower_gray_f32.npy" \
  -b "$TSR_ROOT/data/flower_gray_f32.npy" --transb --block 128 -o "$out/flower_gram.npy"

tsr_log "tessera-gemm on a random 2048 x 2048 x 2048 f64 problem (Philox inputs), 2 ranks, 3 timed runs"
"${mpirun_[@]}" "$gemm" -m 2048 -n 2048 -k 2048 --dtype f64 --block 256 --warmup 1 --repeat 3 \
  --json "$out/random_2048.json"

tsr_log "demo finished: every product was verified; outputs in $out"
