#!/usr/bin/env bash
# A corpus job split into N shards with GNU parallel (Debian `parallel`), then merged back into
# exactly the output of one process:
#   JOBS=N scripts/shard_run.sh OUT.jsonl journey generate --batch prompts.txt -n 32 --no-timings
# runs `journey ... --shard K/N -o OUT.jsonl.K --resume` for K = 1..N (N at a time by default; a
# rerun after a kill resumes each shard where it stopped), then merges the shards by their
# "line" index into OUT.jsonl (sort -m: each shard is already in order). The command must be a
# --batch run with a file (not stdin); --no-timings makes the merged output repeat byte for byte.
# Further parallel options go in PARALLEL_OPTS, e.g. PARALLEL_OPTS="--sshlogin 4/host1,4/host2"
# to spread the shards over hosts that see the same folder (with --sshlogin give journey, the
# model and the files as paths valid on every host).
set -euo pipefail
out=${1:?usage: JOBS=N scripts/shard_run.sh OUT.jsonl journey SUBCOMMAND --batch FILE [ARGS...]}
shift
[ $# -gt 0 ] || { echo "shard_run.sh: give the journey command after OUT" >&2; exit 2; }
jobs=${JOBS:-$(nproc)}
command -v parallel >/dev/null || { echo "shard_run.sh: GNU parallel is not installed (apt-get install parallel)" >&2; exit 2; }
# Exit 3 means some records hold an "error" (a prompt journey refused): the shard is complete.
# Any other failure stops every shard (rerun the same command to resume).
# shellcheck disable=SC2016,SC2086  # $@ is the inner shell's; PARALLEL_OPTS is a list of options
parallel --will-cite --halt now,fail=1 -j "$jobs" ${PARALLEL_OPTS:-} -q \
  bash -c 'rc=0; "$@" || rc=$?; [ "$rc" -eq 0 ] || [ "$rc" -eq 3 ]' shard \
  "$@" --shard "{}/$jobs" -o "$out.{}" --resume ::: $(seq 1 "$jobs")
shards=()
for k in $(seq 1 "$jobs"); do shards+=("$out.$k"); done
LC_ALL=C sort -m -s -t, -k1.9,1n "${shards[@]}" >"$out.tmp"
mv "$out.tmp" "$out"
rm -f "${shards[@]}"
