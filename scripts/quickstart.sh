#!/usr/bin/env bash
# Install what is missing, build journey, and run its main job on the default model
# (models/default: a small GPT-2 trained on the King James Bible).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
# Only the journey target: the tests are built by scripts/test.sh.
cmake --build build -j "$(nproc)" --target journey >/dev/null
prompt="And the LORD spake unto Moses, saying,"
echo "\$ build/journey generate -p \"$prompt\" -n 48 --seed 7"
build/journey generate -p "$prompt" -n 48 --seed 7
echo
echo
echo "\$ build/journey next -p \"$prompt\" --rows 5"
build/journey next -p "$prompt" --rows 5
