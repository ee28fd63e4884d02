#!/usr/bin/env bash
# The whole test suite, twice: a Release build, then a build under AddressSanitizer and
# UndefinedBehaviorSanitizer; then a short fuzz run of every parser. Any failure fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
# Headless Chromium renders trace's HTML page in the tests; without it that one test is skipped.
bash scripts/install-deps.sh chromium || echo "chromium could not be installed: the trace HTML test will be skipped" >&2
for kind in release sanitize; do
  dir=build-$kind
  if [ $kind = release ]; then flags=(-DCMAKE_BUILD_TYPE=Release)
  else flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DJOURNEY_SANITIZE=ON); fi
  echo "== $kind build ==" >&2
  cmake -S . -B "$dir" "${flags[@]}" >/dev/null
  cmake --build "$dir" -j "$jobs"
  echo "== $kind tests ==" >&2
  (cd "$dir" && ctest --output-on-failure)
done
# Then a short run of every fuzz harness (clang, ASan + UBSan), so that a parser regression is
# caught at once: JOURNEY_FUZZ_SECONDS=20 runs each for 20 s. Off by default for now: Debian's
# clang 14 does not yet compile the kernels (__builtin_cpu_supports("f16c") in quant_dot.cpp).
fuzz_seconds=${JOURNEY_FUZZ_SECONDS:-0}
if [ "$fuzz_seconds" -gt 0 ]; then
  echo "== fuzz (${fuzz_seconds}s per harness) ==" >&2
  bash scripts/fuzz.sh "$fuzz_seconds"
fi
echo "all tests passed" >&2
