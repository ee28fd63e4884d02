#!/usr/bin/env bash
# Fuzz every parser: builds the libFuzzer harnesses of tests/fuzz with clang under ASan + UBSan
# (build-asan/, the build the sanitizer test suite also runs from: scripts/asan_build.sh), seeds
# each from the real files in the repository (tests/fuzz/make_seeds.py), and runs each for SECONDS (default 30), JOURNEY_FUZZ_JOBS harnesses at a time (default 2). A
# crash, a sanitizer report, a leak, a hang (-timeout), more than 2 GiB resident (-rss_limit_mb)
# or a property violated fails the run with the reproducer in build-asan/findings/. New inputs
# found are kept in build-asan/corpus/ for the next run; each run's final stats (executions,
# cov:, ft:) are in build-asan/HARNESS.log.
# JOURNEY_FUZZ_RUNS=N instead runs each harness for exactly N inputs from a fixed seed and a fresh
# corpus (the seeds alone), so the run is the same on every machine: what CI uses, so that its
# verdict never depends on luck or speed. Long exploratory runs use SECONDS.
# Usage: scripts/fuzz.sh [SECONDS] [HARNESS...]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-30}
shift || true
jobs=${JOURNEY_FUZZ_JOBS:-2}
harnesses=("$@")
if [ ${#harnesses[@]} -eq 0 ]; then
  for f in tests/fuzz/fuzz_*.cpp; do harnesses+=("$(basename "$f" .cpp)"); done
fi
if [ $# -eq 0 ]; then
  bash scripts/asan_build.sh fuzz_all  # one build, the harnesses in parallel
else
  bash scripts/asan_build.sh "${harnesses[@]}"
fi
bash scripts/install-deps.sh python3
rm -rf build-asan/seeds
python3 tests/fuzz/make_seeds.py . build-asan/seeds
mkdir -p build-asan/findings
dict_of() {
  case $1 in
    fuzz_gguf) echo gguf ;;
    fuzz_tokenizer_bin) echo tokenizer_bin ;;
    fuzz_chat_template) echo jinja ;;
    fuzz_bpe_gpt2|fuzz_spm|fuzz_llama2c|fuzz_hf_pipeline) echo text ;;
    *) echo json ;;
  esac
}
# The convert harness converts and loads a model per input (milliseconds, not microseconds): a
# tenth of the inputs in the fixed run, to keep CI's budget.
runs_of() {
  case $1 in
    fuzz_convert_config) echo $((runs / 10)) ;;
    *) echo "$runs" ;;
  esac
}
export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
runs=${JOURNEY_FUZZ_RUNS:-}
label="${secs}s"
[ -z "$runs" ] || label="$runs runs from seed 1"
run_one() {
  local h=$1 corpus=build-asan/corpus/$1 budget=(-max_total_time="$secs")
  if [ -n "$runs" ]; then  # reproducible: fixed seed, fixed count, nothing from earlier runs
    corpus=build-asan/fixed-corpus/$1
    rm -rf "$corpus"
    budget=(-runs="$(runs_of "$h")" -seed=1)
  fi
  mkdir -p "$corpus"
  # rss_limit: a parser must not reserve more than this for any input; -timeout: nor loop.
  if "build-asan/$h" "$corpus" "build-asan/seeds/$h" -dict="tests/fuzz/dict/$(dict_of "$h").dict" \
       "${budget[@]}" -timeout=10 -rss_limit_mb=2048 -max_len=16384 \
       -artifact_prefix="build-asan/findings/$h-" -print_final_stats=1 >"build-asan/$h.log" 2>&1; then
    local stats
    stats=$(grep -E "^#[0-9]+.*(DONE|cov:)" "build-asan/$h.log" | tail -n 1 | sed -E 's/^#([0-9]+)\s+\S+\s+/\1 execs, /')
    echo "fuzz: $h $label: $stats" >&2
  else
    tail -n 60 "build-asan/$h.log" >&2
    echo "fuzz: $h found a problem (reproducer in build-asan/findings/, log build-asan/$h.log)" >&2
    return 1
  fi
}
failed=0
running=0
for h in "${harnesses[@]}"; do
  run_one "$h" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then
    wait -n || failed=1
    running=$((running - 1))
  fi
done
while [ "$running" -gt 0 ]; do
  wait -n || failed=1
  running=$((running - 1))
done
if [ "$failed" -ne 0 ]; then
  echo "fuzz: findings (see above)" >&2
  exit 1
fi
echo "fuzz: ${#harnesses[@]} harnesses, $label each, $jobs at a time, no findings" >&2
