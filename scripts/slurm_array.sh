#!/usr/bin/env bash
# A corpus job as a Slurm job array: one task per shard, each `journey ... --shard K/N`.
#   sbatch --array=1-16 scripts/slurm_array.sh OUT_PREFIX journey score --batch corpus.txt --json --no-timings
# Task K writes OUT_PREFIX.K (resumed if the task is requeued). When every task is done, merge:
#   LC_ALL=C sort -m -s -t, -k1.9,1n OUT_PREFIX.* > OUT.jsonl
# Untested: no Slurm runs where journey is developed; the sharding it relies on is tested with
# GNU parallel (scripts/shard_run.sh, tests/cli/test_cli_corpus.cpp).
#SBATCH --job-name=journey-corpus
#SBATCH --cpus-per-task=2
#SBATCH --requeue
set -euo pipefail
prefix=${1:?usage: sbatch --array=1-N scripts/slurm_array.sh OUT_PREFIX journey SUBCOMMAND --batch FILE [ARGS...]}
shift
k=${SLURM_ARRAY_TASK_ID:?not a Slurm array task}
n=${SLURM_ARRAY_TASK_COUNT:?not a Slurm array task}
exec "$@" -t "${SLURM_CPUS_PER_TASK:-2}" --shard "$k/$n" -o "$prefix.$k" --resume
