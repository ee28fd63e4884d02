#!/usr/bin/env bash
# The one sanitizer build (build-asan/): clang, AddressSanitizer + UndefinedBehaviorSanitizer, and
# libFuzzer's coverage instrumentation on the whole library, so that the same objects serve the
# test suite (scripts/test.sh) and the fuzz harnesses (scripts/fuzz.sh): one compile, not two.
# -O1 -gline-tables-only as OSS-Fuzz builds: half the compile time of -O2 -g, stacks still name lines.
# -ffp-contract=off: the floating-point contraction of g++ in ISO mode, which the Release build uses.
# Usage: scripts/asan_build.sh [TARGET...]   (default: every target, the harnesses too)
set -euo pipefail
cd "$(dirname "$0")/.."
# clang and its runtime (libFuzzer and the sanitizers).
bash scripts/install-deps.sh clang libclang-rt-14-dev >&2
cmake -S . -B build-asan -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -ffp-contract=off" -DJOURNEY_FUZZ=ON >/dev/null
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(all fuzz_all)
cmake --build build-asan -j "$(nproc)" --target "${targets[@]}"
