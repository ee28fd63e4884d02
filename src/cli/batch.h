// --batch FILE: many prompts, one model load. Each line of FILE ("-" = stdin) is a prompt:
// a JSON object {"prompt": "..."} when it starts with '{', else the line itself as plain text
// (an empty line is an empty prompt). One JSON line is written per prompt, in order, each with
// "line" (1-based, the record's index in FILE). A line that cannot be used (invalid JSON, no
// "prompt" string) or a prompt that fails (InputError: too long, ...) gives
// {"line": N, "error": "..."} and the rest go on.
//
// Corpus jobs: --shard K/N runs only the records whose index n has (n - 1) mod N == K - 1, so N
// processes (GNU parallel, a Slurm array) split a file deterministically and their outputs, sorted
// by "line", are exactly one process's output. -o FILE writes the records there, each line whole
// in one write; --resume keeps the complete records already in FILE (a partial last line, left
// by a killed run, is cut off) and runs only the others. A progress line goes to stderr on a
// terminal (or always with --progress), and one summary line at the end (unless -q).
#pragma once
#include <functional>
#include <set>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <memory>
#include <vector>

#include "journey/model/batcher.h"

namespace journey::cli {

using journey::Batcher;

struct BatchOptions {
    std::string file;    // --batch FILE ("-" = stdin); empty: no batch
    std::string shard;   // --shard K/N (1 <= K <= N)
    std::string output;  // -o/--output FILE; empty: stdout
    bool resume = false;
    bool progress = false;
    bool no_timings = false;  // drop each record's "timings": outputs then repeat byte for byte
    int parallel = 1;    // --parallel N: records decoded together (model/batcher.h)
};

void add_batch_option(CLI::App* cmd, BatchOptions& opts);
// --parallel N (generate, next, score: records evaluated together).
void add_parallel_option(CLI::App* cmd, BatchOptions& opts);

// The batch file, read before the model loads, and the output opened (InputError/UsageError
// saying why it cannot be); stdin ("-") is streamed line by line instead.
struct BatchInput {
    BatchOptions opts;
    std::string contents;      // empty for stdin
    size_t shard_k = 1, shard_n = 1;
    std::set<size_t> done;     // --resume: records already complete in the output
    long resume_at = 0;        // --resume: the bytes of those records (the rest is cut off)
    int out_fd = -1;           // -o: the output, opened by run_batch
};
BatchInput open_batch(const BatchOptions& opts);

// Runs `one` on every prompt of the shard not yet done and writes its JSON object (plus "line")
// per line. Every line is processed (after an interrupt, none is started); then, if any failed,
// throws InputError (exit 3) saying how many. With a batcher (--parallel N > 1), N records run at
// once, `one` on N worker threads (worker = 0 .. N-1, each with its own session attached to the
// batcher); a finished record is replaced by the next line at once, and the records are written
// in input order, each exactly as one at a time would write it.
using BatchRecord = std::function<nlohmann::ordered_json(const std::string& prompt, int worker)>;
void run_batch(BatchInput& input, const BatchRecord& one, Batcher* batcher = nullptr);

// --parallel N: N sessions of opts on model, attached to batcher when N > 1. Checks that N
// caches fit the memory the machine has (UsageError naming --parallel and the sizes otherwise)
// and says on stderr what they take.
std::vector<std::unique_ptr<Session>> batch_sessions(const Model& model, const SessionOptions& opts, int parallel,
                                                     Batcher& batcher);

}  // namespace journey::cli
