// Measuring a model the way llama-bench does: prompt processing (pp) of n_prompt tokens in one
// eval, and text generation (tg) of n_gen tokens one at a time with the KV cache, each from an
// empty context, median over repetitions after one warm-up.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "journey/model/model.h"
#include "journey/model/session.h"

namespace journey {

struct BenchOptions {
    int n_prompt = 128;  // tokens in the prompt-processing test (0: skip it)
    int n_gen = 64;      // tokens in the generation test (0: skip it)
    int reps = 5;        // timed repetitions of each test, after one untimed warm-up
    int n_depth = 0;     // positions already in the cache when each test starts (llama-bench's -d)
    KvType kv_type = KvType::f32;  // the KV cache's type (--kv-type)
    int n_parallel = 1;  // --parallel N: tg runs N sequences together and reports their aggregate rate
    // Before each generation repetition, also time three reads of the same weights at full speed
    // (read_all: each thread one long stream); the fastest is the yardstick for generation's share.
    bool bandwidth = false;
};

struct BenchResult {
    double pp_tok_s = 0;  // median over reps, wall clock; 0 when skipped
    double tg_tok_s = 0;
    // The same, counting this process's CPU time (user + system) divided by the thread count
    // instead of wall time: what the rate would be with the cores to ourselves. On a shared,
    // oversubscribed machine wall-clock rates mostly measure the other processes.
    double pp_tok_s_cpu = 0;
    double tg_tok_s_cpu = 0;
    // Bytes of weights one token's step reads (Weights::token_reads), and at the median tg rate,
    // GB/s of them.
    double token_bytes = 0;
    double tg_weights_gb_s = 0;
    // With BenchOptions::bandwidth: the median of the reads' GB/s, and the median over the
    // repetitions of generation's GB/s of weights over the read's just before it (the share of
    // the machine's read bandwidth a token's step reaches, both taken within a second).
    double read_gb_s = 0;
    double tg_read_share = 0;
};

// Runs the tests on a fresh Session. `progress` (may be empty) gets one line per repetition.
// Token ids are a fixed pseudo-random sequence over the vocabulary: speed does not depend on
// them. Throws InputError when n_prompt or n_gen exceed the model's context.
BenchResult run_bench(const Model& model, const BenchOptions& opts, int threads,
                      const std::function<void(const std::string&)>& progress = {});

// Peak resident set size of this process so far (VmHWM), in bytes; 0 when unknown.
int64_t peak_rss_bytes();
// Memory of this process on 2 MiB pages now (AnonHugePages: the weights' copy, when the kernel
// gave huge pages), in bytes; 0 when none or unknown.
int64_t huge_page_bytes();

}  // namespace journey
