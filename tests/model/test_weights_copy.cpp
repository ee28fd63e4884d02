// The weights a token reads are copied at load into memory of journey's own (huge pages where the
// kernel gives them; Weights::copy_for_kernels), unless --mmap leaves them in the file's mapping.
// Where they live must not change a bit of the result: the same model loaded both ways gives the
// same logits, prompt and one-token steps alike (the mapped load is the reference the rest of the
// suite checks against llama.cpp through the same views).
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "journey/model/model.h"
#include "journey/model/session.h"

using namespace journey;

namespace {

bool in_mapping(const ModelFile& f, std::span<const std::byte> s) {
    for (const auto& m : f.mappings)
        if (m->data() && s.data() >= m->data() && s.data() + s.size() <= m->data() + m->size()) return true;
    return false;
}

// Logits of a 4-token prompt, then of three one-token steps, end to end.
std::vector<float> run(const Model& m) {
    Session s(m, SessionOptions{.n_ctx = 16});
    std::vector<float> all;
    const int64_t V = m.config().n_vocab;
    std::vector<TokenId> prompt;
    for (int i = 0; i < 4; ++i) prompt.push_back(TokenId((7 + 31 * i) % V));
    auto l = s.eval(prompt);
    all.insert(all.end(), l.begin(), l.end());
    for (int i = 0; i < 3; ++i) {
        const TokenId t = TokenId((11 + 17 * i) % V);
        l = s.eval(std::span<const TokenId>(&t, 1));
        all.insert(all.end(), l.begin(), l.end());
    }
    return all;
}

}  // namespace

TEST_CASE("weights: copied at load or read in place, the same logits to the bit", "[model][weights]") {
    const std::string data = JOURNEY_TEST_DATA;
    // llama3: safetensors (tensors at any multiple of 8 bytes) and GGUF; gpt2: Conv1D F32
    // matrices and an output tied to the token embedding; Q4_K_M: Q4_K and Q6_K regrouped (in
    // both modes: with --mmap too nothing of this file's matrices is read in place).
    for (const std::string& path : {data + "/models/llama3/hf", data + "/models/llama3/llama3-F32.gguf",
                                   data + "/models/gpt2/hf", data + "/quant/tinyllama-Q4_K_M.gguf",
                                   data + "/quant/tinyllama-Q5_0.gguf"}) {
        INFO(path);
        const auto mapped = Model::load(path, LoadOptions{.tokenizer = false, .mmap = true});
        const auto copied = Model::load(path, LoadOptions{.tokenizer = false});
        const auto mapped_reads = mapped->weights().token_reads(), copied_reads = copied->weights().token_reads();
        REQUIRE(mapped_reads.size() == copied_reads.size());
        REQUIRE_FALSE(copied_reads.empty());
        size_t moved = 0;
        for (size_t i = 0; i < copied_reads.size(); ++i) {
            const auto a = mapped_reads[i], b = copied_reads[i];
            REQUIRE(a.size() == b.size());
            CHECK(std::memcmp(a.data(), b.data(), a.size()) == 0);  // the same bytes
            CHECK_FALSE(in_mapping(copied->file(), b));               // read from the copy
            CHECK(reinterpret_cast<uintptr_t>(b.data()) % 64 == 0);  // each on a line of its own
            moved += in_mapping(mapped->file(), a);
        }
        if (path.find("Q4_K_M") == std::string::npos)
            CHECK(moved > 0);  // --mmap: the matrices stay in the file (Q4_K's and Q6_K's regrouping aside)
        const Weights& w = copied->weights();
        if (mapped->weights().output.data == mapped->weights().tok_embd.data)  // tied: one copy serves both
            CHECK(w.output.data == w.tok_embd.data);
        const std::vector<float> a = run(*mapped), b = run(*copied);
        REQUIRE(a.size() == b.size());
        CHECK(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
    }
}
