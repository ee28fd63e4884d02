#!/usr/bin/env bash
# Prepare the pinned reference for the same-round benchmarks and for making fixtures: llama.cpp
# v0.5.0 (commit de3ff81), which ships as a git bundle inside the npm package node-llama-cpp@3.22.1.
# It is cloned and built natively (-DGGML_NATIVE=ON) OUTSIDE the repository; journey never links,
# includes or calls it, and nothing it builds is committed.
#   scripts/prepare_reference.sh [DIR]
# DIR defaults to ${XDG_CACHE_HOME:-~/.cache}/journey/reference. Prints the bin/ folder holding
# llama-bench, llama-quantize, llama-imatrix and llama-batched-bench on stdout (progress on stderr),
# so that:  LLAMA_BIN=$(scripts/prepare_reference.sh)
# Needs npm (Debian's nodejs/npm), git, cmake, g++; run twice, it rebuilds nothing.
set -euo pipefail
dir=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/journey/reference}
commit=de3ff81
repo_root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
case "$dir/" in
  "$repo_root"/*) echo "prepare_reference.sh: $dir is inside the repository; give a folder outside it" >&2; exit 2 ;;
esac
src=$dir/llama.cpp
if [ ! -d "$src/.git" ]; then
  echo "fetching node-llama-cpp@3.22.1 (llama.cpp's git bundle) with npm pack" >&2
  (cd "$dir" && npm pack --silent node-llama-cpp@3.22.1 >/dev/null)
  tar -xzf "$dir/node-llama-cpp-3.22.1.tgz" -C "$dir" package/llama/gitRelease.bundle
  git -c advice.detachedHead=false clone --quiet "$dir/package/llama/gitRelease.bundle" "$src"
  rm -rf "$dir/package" "$dir/node-llama-cpp-3.22.1.tgz"
fi
(cd "$src" && git -c advice.detachedHead=false checkout --quiet "$commit")
head=$(cd "$src" && git rev-parse --short=7 HEAD)
[ "$head" = "$commit" ] || { echo "prepare_reference.sh: $src is at $head, not $commit" >&2; exit 1; }
echo "building llama.cpp $commit natively in $src/build (a few minutes on two cores)" >&2
cmake -S "$src" -B "$src/build" -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON -DLLAMA_CURL=OFF \
  -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_SERVER=OFF >/dev/null
cmake --build "$src/build" -j "$(nproc)" \
  --target llama-bench llama-quantize llama-imatrix llama-batched-bench >/dev/null
echo "$src/build/bin"
