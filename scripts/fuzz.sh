#!/usr/bin/env bash
# Fuzz every parser: builds the libFuzzer harnesses of tests/fuzz with clang under ASan + UBSan
# (build-fuzz/), seeds each from small valid files (tests/fuzz/make_seeds.py), and runs them one
# after another for SECONDS each (default 30), one process at a time. A crash, a sanitizer
# report, a leak, a hang (-timeout) or a property violated stops the run with the reproducer in
# build-fuzz/findings/. New inputs found are kept in build-fuzz/corpus/ for the next run.
# Usage: scripts/fuzz.sh [SECONDS] [HARNESS...]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-30}
shift || true
# Fuzz-only dependencies: clang and its runtime (libFuzzer and the sanitizers).
bash scripts/install-deps.sh clang libclang-rt-14-dev python3
cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
      -DJOURNEY_FUZZ=ON -DJOURNEY_TESTS=OFF >/dev/null
harnesses=("$@")
if [ ${#harnesses[@]} -eq 0 ]; then
  for f in tests/fuzz/fuzz_*.cpp; do harnesses+=("$(basename "$f" .cpp)"); done
fi
cmake --build build-fuzz -j "$(nproc)" --target "${harnesses[@]}"
rm -rf build-fuzz/seeds
python3 tests/fuzz/make_seeds.py . build-fuzz/seeds
mkdir -p build-fuzz/findings
dict_of() {
  case $1 in
    fuzz_gguf) echo gguf ;;
    fuzz_tokenizer_bin) echo tokenizer_bin ;;
    fuzz_bpe_gpt2|fuzz_spm|fuzz_llama2c) echo text ;;
    *) echo json ;;
  esac
}
export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
for h in "${harnesses[@]}"; do
  corpus=build-fuzz/corpus/$h
  mkdir -p "$corpus"
  echo "== $h: ${secs}s ==" >&2
  # rss_limit: a parser must not reserve more than this for any input; -timeout: nor loop.
  build-fuzz/$h "$corpus" "build-fuzz/seeds/$h" -dict="tests/fuzz/dict/$(dict_of "$h").dict" \
    -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=16384 \
    -artifact_prefix="build-fuzz/findings/$h-" -print_final_stats=1 2>"build-fuzz/$h.log" || {
      tail -n 60 "build-fuzz/$h.log" >&2
      echo "fuzz: $h found a problem (reproducer in build-fuzz/findings/)" >&2
      exit 1
    }
  grep -E "^(stat::number_of_executed_units|stat::peak_rss_mb)|cov: .* ft: " "build-fuzz/$h.log" | tail -n 3 >&2
done
echo "fuzz: ${#harnesses[@]} harnesses, ${secs}s each, no findings" >&2
