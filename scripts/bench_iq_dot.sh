#!/usr/bin/env bash
# The lattice, ternary, IQ4_XS, Q2_K, Q3_K and IQ4_NL dot kernels alone, journey beside llama.cpp's ggml_vec_dot_*: one
# core, 512 super-blocks in cache (64 rows of 2048), ns per super-block of 256 (minimum of 30 repetitions), taking
# turns ROUNDS times. Less at the mercy of a shared host than whole-model runs.
#   scripts/bench_iq_dot.sh LLAMA_CPP_DIR [BUILD=build] [ROUNDS=3] [N=2048] [portable]
# portable: journey's portable loops as well (what a CPU without a kernel of its own runs).
# N: inputs a row (8192: ffn_down's rows, 16 of them; x's quants then fill more of L1).
# LLAMA_CPP_DIR: a llama.cpp checkout built with CMake (ggml/include, build/bin/libggml-cpu.so).
set -euo pipefail
ref=${1:?usage: bench_iq_dot.sh LLAMA_CPP_DIR [BUILD] [ROUNDS] [N]}
build=${2:-build}
rounds=${3:-3}
n=${4:-2048}
portable=${5:-}
here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
c++ -O2 -march=native -std=c++20 -I"$here/../include" "$here/bench_iq_dot/journey_dot.cpp" \
    "$build/libjourney_kernels.a" "$build/libjourney_formats.a" -lpthread -o "$out/journey_dot"
c++ -O2 -std=c++17 -I"$ref/ggml/include" "$here/bench_iq_dot/ggml_dot.cpp" -L"$ref/build/bin" -lggml-cpu -lggml-base \
    -Wl,-rpath,"$ref/build/bin" -o "$out/ggml_dot"
for r in $(seq "$rounds"); do
  echo "# round $r, $(date -u +%H:%M:%S), load average $(cut -d' ' -f1 /proc/loadavg)"
  "$out/ggml_dot" "$n"
  "$out/journey_dot" "$n"
  if [ -n "$portable" ]; then "$out/journey_dot" "$n" portable; fi
done
