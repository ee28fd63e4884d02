#!/usr/bin/env bash
# Fuzz every parser: builds the libFuzzer harnesses of tests/fuzz with clang under ASan + UBSan
# (build-fuzz/), seeds each from the real files in the repository (tests/fuzz/make_seeds.py),
# and runs each for SECONDS (default 30), JOURNEY_FUZZ_JOBS harnesses at a time (default 2). A
# crash, a sanitizer report, a leak, a hang (-timeout), more than 2 GiB resident (-rss_limit_mb)
# or a property violated fails the run with the reproducer in build-fuzz/findings/. New inputs
# found are kept in build-fuzz/corpus/ for the next run; each run's final stats (executions,
# cov:, ft:) are in build-fuzz/HARNESS.log.
# Usage: scripts/fuzz.sh [SECONDS] [HARNESS...]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-30}
shift || true
jobs=${JOURNEY_FUZZ_JOBS:-2}
# Fuzz-only dependencies: clang and its runtime (libFuzzer and the sanitizers).
bash scripts/install-deps.sh clang libclang-rt-14-dev python3
# -O1 -gline-tables-only: as OSS-Fuzz builds, half the compile time of -O2 -g, stacks still name lines.
cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
      -DCMAKE_CXX_COMPILER=clang++ -DJOURNEY_FUZZ=ON -DJOURNEY_TESTS=OFF >/dev/null
harnesses=("$@")
if [ ${#harnesses[@]} -eq 0 ]; then
  for f in tests/fuzz/fuzz_*.cpp; do harnesses+=("$(basename "$f" .cpp)"); done
fi
if [ $# -eq 0 ]; then
  cmake --build build-fuzz -j "$(nproc)" --target fuzz_all  # one build, the harnesses in parallel
else
  cmake --build build-fuzz -j "$(nproc)" --target "${harnesses[@]}"
fi
rm -rf build-fuzz/seeds
python3 tests/fuzz/make_seeds.py . build-fuzz/seeds
mkdir -p build-fuzz/findings
dict_of() {
  case $1 in
    fuzz_gguf) echo gguf ;;
    fuzz_tokenizer_bin) echo tokenizer_bin ;;
    fuzz_chat_template) echo jinja ;;
    fuzz_bpe_gpt2|fuzz_spm|fuzz_llama2c|fuzz_hf_pipeline) echo text ;;
    *) echo json ;;
  esac
}
export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
run_one() {
  local h=$1 corpus=build-fuzz/corpus/$1
  mkdir -p "$corpus"
  # rss_limit: a parser must not reserve more than this for any input; -timeout: nor loop.
  if build-fuzz/$h "$corpus" "build-fuzz/seeds/$h" -dict="tests/fuzz/dict/$(dict_of "$h").dict" \
       -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=16384 \
       -artifact_prefix="build-fuzz/findings/$h-" -print_final_stats=1 >"build-fuzz/$h.log" 2>&1; then
    local stats
    stats=$(grep -E "^#[0-9]+.*(DONE|cov:)" "build-fuzz/$h.log" | tail -n 1 | sed -E 's/^#([0-9]+)\s+\S+\s+/\1 execs, /')
    echo "fuzz: $h ${secs}s: $stats" >&2
  else
    tail -n 60 "build-fuzz/$h.log" >&2
    echo "fuzz: $h found a problem (reproducer in build-fuzz/findings/, log build-fuzz/$h.log)" >&2
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
echo "fuzz: ${#harnesses[@]} harnesses, ${secs}s each, $jobs at a time, no findings" >&2
