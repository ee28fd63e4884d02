#!/usr/bin/env bash
# What the trace costs (issue 38's "Done when"): on MODEL with a TOKENS-token prompt,
#   trace (and trace --attribute, trace --html, trace --pos all --html) against a plain `next` on
#   the same prompt, each the wall time of the whole command (load included, as a user sees it):
#   the goal is <= 1.5x next;
#   patch's layer x position grid against the suffixes it implies: a patch at position p re-runs
#   only the corrupted prompt's suffix [p, T) from the cached prefix [0, p), once per row (layers
#   + 1 for --site resid), so the grid is worth
#       rows x sum_{p=0}^{T-1} c(T - p) = rows x sum_{n=1}^{T} c(n)
#   where c(n) is the time of n prompt tokens evaluated after T - n tokens already in the cache:
#   `journey bench -p n -d T-n`'s pp (its seconds, n / pp tok/s, no load). c is measured at n = 1,
#   2, 4, ... and T and taken as linear between (the cost of a prompt is close to linear in its
#   length between powers of two); the sum is over every n. The goal is patch <= that sum: its
#   extras (load, the clean and corrupted whole runs, and each thread's prefix built a token at a
#   time) must be paid for by running N cells at once with -t N. patch runs PATCH_TOKENS
#   positions (default 24: a 200-token grid of a 1B model is rows x 20,100 suffix tokens, hours on
#   two cores; the ratio is what the arithmetic compares, at any length).
# Rounds alternate the commands (the host's speed drifts minute to minute); medians are reported.
#   scripts/bench_trace.sh MODEL [ROUNDS=3] [THREADS=2] [JOURNEY=build/journey] [TOKENS=200] [PATCH_TOKENS=24]
# Example: scripts/bench_trace.sh /tmp/bench/llama-3.2-1b-q8_0.gguf 3 2
set -euo pipefail
usage="usage: bench_trace.sh MODEL [ROUNDS] [THREADS] [JOURNEY] [TOKENS] [PATCH_TOKENS]"
model=${1:?$usage}
rounds=${2:-3}
threads=${3:-2}
journey=${4:-build/journey}
tokens=${5:-200}
patch_tokens=${6:-24}
exec python3 - "$model" "$rounds" "$threads" "$journey" "$tokens" "$patch_tokens" <<'PY'
import json, os, statistics, subprocess, sys, tempfile, time

model, rounds, threads, journey, T, PT = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6])
tmp = tempfile.mkdtemp()

def run(args):
    t0 = time.perf_counter()
    p = subprocess.run([journey] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    dt = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit(f"bench_trace: {' '.join(args)} failed: {p.stderr.strip()}")
    return dt, p.stdout

# The prompt: English text tokenized by the model's own tokenizer, the first T ids.
text = ("In the beginning God created the heaven and the earth. And the earth was without form, and void; "
        "and darkness was upon the face of the deep. And the Spirit of God moved upon the face of the waters. ") * 40
_, out = run(["tokenize", "-m", model, "--json", "-p", text])
ids = json.loads(out)["ids"]
if len(ids) < T:
    sys.exit(f"bench_trace: the text is only {len(ids)} tokens")
prompt = " ".join(map(str, ids[:T]))
clean = ids[:PT]
corrupted = list(clean)
corrupted[PT // 2] = ids[PT + 1] if ids[PT + 1] != clean[PT // 2] else ids[PT + 2]  # one token changed, mid-prompt
m, t = ["-m", model], ["-t", threads]
commands = {
    "next": ["next"] + m + t + ["--ids", prompt],
    "trace": ["trace"] + m + t + ["--ids", prompt],
    "trace --attribute": ["trace"] + m + t + ["--ids", prompt, "--attribute"],
    "trace --html": ["trace"] + m + t + ["--ids", prompt, "--html", os.path.join(tmp, "t.html")],
    "trace --pos all --html": ["trace"] + m + t + ["--ids", prompt, "--pos", "all", "--html", os.path.join(tmp, "a.html")],
    "patch": ["patch"] + m + t + ["--json", "--clean-ids", " ".join(map(str, clean)), "--corrupted-ids", " ".join(map(str, corrupted))],
}
# c(n) at these suffix lengths: 1, 2, 4, ... and PT
lengths = sorted({1 << k for k in range(20) if (1 << k) < PT} | {PT})
times = {k: [] for k in commands}
suffix = {n: [] for n in lengths}
rows = None
for r in range(rounds):
    print(f"round {r + 1} ({time.strftime('%H:%M:%S', time.gmtime())} UTC, load {os.getloadavg()[0]:.1f})", file=sys.stderr)
    for name, args in commands.items():
        dt, out = run(args)
        times[name].append(dt)
        if name == "patch":
            rows = len(json.loads(out)["rows"])
        print(f"  {name}: {dt:.2f} s", file=sys.stderr)
    for n in lengths:
        _, out = run(["bench"] + m + t + ["-p", str(n), "-n", "0", "-d", str(PT - n), "-r", "1", "--json"])
        suffix[n].append(n / json.loads(out)["pp_tok_s"])
    print("  c(n): " + ", ".join(f"{n} {suffix[n][-1]:.3f} s" for n in lengths), file=sys.stderr)

med = {k: statistics.median(v) for k, v in times.items()}
c = {n: statistics.median(v) for n, v in suffix.items()}
def c_of(n):  # linear between the measured lengths
    lo = max(x for x in lengths if x <= n)
    hi = min(x for x in lengths if x >= n)
    return c[lo] if lo == hi else c[lo] + (c[hi] - c[lo]) * (n - lo) / (hi - lo)
grid = rows * sum(c_of(n) for n in range(1, PT + 1))
print(f"model {model}, -t {threads}, {rounds} rounds, medians (wall time of each command, load included)")
print(f"| command ({T}-token prompt) | seconds | / next |")
print("| --- | ---: | ---: |")
for k in commands:
    if k != "patch":
        print(f"| {k} | {med[k]:.2f} | {med[k] / med['next']:.2f} |")
print(f"patch, {PT} positions x {rows} rows: {med['patch']:.2f} s; rows x sum of the suffixes' costs "
      f"(c(1) {c[1]:.3f} s .. c({PT}) {c[PT]:.3f} s) {grid:.2f} s; patch / that {med['patch'] / grid:.2f}")
PY
