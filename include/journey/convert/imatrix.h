// Importance matrices as llama.cpp's llama-imatrix computes them and its imatrix.gguf stores them:
// per weight matrix of the blocks (llama.cpp's names), the sum over every input row of the
// squared activations per input column, and the count of rows (per expert for a stacked experts
// tensor). llama-quantize divides the sums by the counts and weighs each column's error by them.
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "journey/model/session.h"
#include "journey/text/tokenizer.h"

namespace journey {

class Model;

struct ImatrixEntry {
    int64_t n_in = 0;             // columns of the matrix (values per expert)
    std::vector<float> sums;      // [n_mat][n_in]: sum of x^2 over the rows that reached it
    std::vector<int64_t> counts;  // [n_mat]: rows (tokens) that reached it
};

struct Imatrix {
    std::map<std::string, ImatrixEntry> entries;  // by weight name (blk.N.attn_q.weight)
    std::vector<std::string> datasets;            // the text files it was computed on
    int64_t chunk_count = 0, chunk_size = 0;
    bool legacy = false;  // read from a legacy .dat file (sums already divided)

    // What llama-quantize weighs a tensor's rows by: sums / counts per expert ([n_mat * n_in];
    // a matrix no row reached: ones). Empty when the name has no entry.
    std::vector<float> weights_of(const std::string& name) const;
};

// llama-imatrix's default run over `tokens` (the text tokenized with BOS, no special tokens):
// chunks of `chunk` tokens (the last partial one dropped, at least 2 chunks), each from an empty
// cache with its first token replaced by BOS when the tokenizer adds one, every matrix product of
// the blocks observed (Observer::product). progress(done, total) after each chunk.
Imatrix compute_imatrix(const Model& model, std::span<const TokenId> tokens, int chunk, int n_chunks, KvType kv,
                        const std::function<void(int, int)>& progress = {});

// imatrix.gguf as llama-imatrix writes it (general.type imatrix, imatrix.datasets, chunk_count,
// chunk_size; NAME.in_sum2 and NAME.counts as F32, sorted by name).
void write_imatrix(const Imatrix& m, const std::filesystem::path& out);
// Reads imatrix.gguf or the legacy .dat format (llama-imatrix --output-format dat). Throws
// InputError naming the file on anything malformed.
Imatrix read_imatrix(const std::filesystem::path& path);

}  // namespace journey
