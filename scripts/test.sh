#!/usr/bin/env bash
# The whole test suite, twice: a Release build, then a build under AddressSanitizer and
# UndefinedBehaviorSanitizer. Any failure fails the run.
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
echo "all tests passed (release and sanitize)" >&2
