#!/usr/bin/env bash
# The whole test suite, twice: a Release build (g++), then a clang build under AddressSanitizer and
# UndefinedBehaviorSanitizer; then a short fuzz run of every parser from that same build (and,
# after the Release suite, scripts/hostile_set.py on the Release binary). Any
# failure fails the run. Each phase prints its wall time and the CPU time spent so far (the
# machine may be shared); CI's budget is 30 minutes on 2 cores.
#   JOURNEY_TEST_SHARDS=N   run the suite as N processes at once (default: the cores), each a
#                           share of the test cases (Catch2's --input-file); 1 = plain ctest
#   JOURNEY_FUZZ_RUNS=N     inputs per fuzz harness, from seed 1 (default 30000; 0 skips fuzzing)
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
shards=${JOURNEY_TEST_SHARDS:-$jobs}
fuzz_runs=${JOURNEY_FUZZ_RUNS:-30000}
t0=$SECONDS
# Wall time, and the CPU time of every child so far (bash's `times`, second line: user and system;
# run in this shell, not in a $(...) subshell, whose own children are none).
cpu_file=$(mktemp)
trap 'rm -f "$cpu_file"' EXIT
phase() {
  times >"$cpu_file"
  echo "== $1 ($((SECONDS - t0)) s so far; CPU user, system: $(tail -n 1 "$cpu_file")) ==" >&2
}
# Everything the run needs, in one apt-get (each call that finds a package missing updates apt's
# lists first): the build's libraries, python3 and time for the hostile set, clang and its runtime
# for the sanitizer build. Headless Chromium renders trace's HTML page in the tests and GNU parallel
# runs the corpus recipe; without them those tests are skipped, so they may fail to install alone.
need=(python3 time clang libclang-rt-14-dev)
bash scripts/install-deps.sh "${need[@]}" chromium parallel || {
  bash scripts/install-deps.sh "${need[@]}"
  bash scripts/install-deps.sh chromium parallel ||
    echo "chromium or parallel could not be installed: the trace HTML test or the GNU parallel recipe test will be skipped" >&2
}

# The suite of build dir $1 in $shards processes; every case runs exactly once.
run_suite() {
  local dir=$1
  if [ "$shards" -le 1 ]; then
    (cd "$dir" && ctest --output-on-failure)
    return
  fi
  # Every case's name, escaped for a test spec (\ , [ ] * are special there), dealt by cost:
  # heaviest first (tests/shard-weights.tsv; a case not listed counts 0.5 s), each to the shard
  # with the least so far, so that the shards end together (dealt round-robin, one shard had twice
  # the other's work).
  "$dir/journey_tests" --list-test-names-only | grep -v '^$' |
    sed -e 's/\\/\\\\/g' -e 's/,/\\,/g' -e 's/\[/\\[/g' -e 's/\]/\\]/g' -e 's/\*/\\*/g' >"$dir/test-names" || true
  local s pids=() failed=0 total=0 listed
  for ((s = 0; s < shards; s++)); do : >"$dir/test-names.$s"; done
  awk -F'\t' 'FNR == NR { if ($0 !~ /^#/) cost[$2] = $1; next }
               { printf "%s\t%s\n", ($0 in cost) ? cost[$0] : 0.5, $0 }' tests/shard-weights.tsv "$dir/test-names" |
    LC_ALL=C sort -t "$(printf '\t')" -k1,1gr -k2,2 |
    awk -F'\t' -v n="$shards" -v dir="$dir" '{
      best = 0
      for (s = 1; s < n; s++) if (load[s] < load[best]) best = s
      load[best] += $1
      sub(/^[^\t]*\t/, "")
      print > (dir "/test-names." best)
    }'
  for ((s = 0; s < shards; s++)); do
    listed=$("$dir/journey_tests" -f "$dir/test-names.$s" --list-test-names-only | grep -vc '^$' || true)
    total=$((total + listed))
  done
  if [ "$total" -ne "$(wc -l <"$dir/test-names")" ]; then  # a name the spec syntax still mangles
    echo "test shards select $total of $(wc -l <"$dir/test-names") cases: running them in one process" >&2
    (cd "$dir" && ctest --output-on-failure)
    return
  fi
  for ((s = 0; s < shards; s++)); do
    (cd "$dir" && OPENBLAS_NUM_THREADS=1 ./journey_tests -f "test-names.$s" >"shard-$s.log" 2>&1) &
    pids+=($!)
  done
  for ((s = 0; s < shards; s++)); do
    if wait "${pids[$s]}"; then
      tail -n 2 "$dir/shard-$s.log" | grep -v '^$' >&2
    else
      cat "$dir/shard-$s.log" >&2
      failed=1
    fi
  done
  return $failed
}

phase "release build"
cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build-release -j "$jobs"
phase "release tests"
run_suite build-release
# The held-back-style hostile set (issue 40): ~160 hostile files and command lines, each answered
# within 10 s of CPU and 1 GiB, with one line on stderr and nothing destroyed or left behind.
phase "hostile set"
python3 scripts/hostile_set.py --journey build-release/journey --data build-release/test-data
# One clang build under ASan + UBSan serves the suite and the fuzz harnesses (scripts/asan_build.sh).
phase "ASan + UBSan build (clang; the suite and the fuzz harnesses)"
bash scripts/asan_build.sh all fuzz_all
phase "ASan + UBSan tests"
run_suite build-asan
# Then every fuzz harness for a fixed number of inputs from a fixed seed (the same run on every
# machine, so CI's verdict never rests on luck), so that a parser regression is caught at once.
if [ "$fuzz_runs" -gt 0 ]; then
  phase "fuzz ($fuzz_runs inputs per harness, seed 1)"
  JOURNEY_FUZZ_RUNS=$fuzz_runs bash scripts/fuzz.sh 0
fi
phase "done"
echo "all tests passed in $((SECONDS - t0)) s" >&2
