// llama2.c checkpoints: the stories260K model under GGUF tensor names, and damaged headers.
#include <catch2/catch.hpp>

#include <cstring>
#include <fstream>
#include <iterator>

#include "cli_run.h"
#include "files.h"
#include "gguf_writer.h"
#include "journey/errors.h"
#include "journey/formats/llama2c_reader.h"

using namespace journey;

namespace {

const std::string kStories = journey::test::data_dir() + "/models/stories260K/stories260K.bin";

}  // namespace

TEST_CASE("llama2.c: stories260K is read under GGUF names", "[llama2c]") {
    const auto mf = read_llama2c(kStories);
    CHECK(mf.format == "llama2.c");
    CHECK(mf.metadata["general.architecture"] == "llama");
    CHECK(mf.metadata["llama.embedding_length"] == 64);
    CHECK(mf.metadata["llama.feed_forward_length"] == 172);
    CHECK(mf.metadata["llama.block_count"] == 5);
    CHECK(mf.metadata["llama.attention.head_count"] == 8);
    CHECK(mf.metadata["llama.attention.head_count_kv"] == 4);
    CHECK(mf.metadata["llama.vocab_size"] == 512);
    CHECK(mf.metadata["llama.context_length"] == 512);
    CHECK(mf.metadata["llama.rope.dimension_count"] == 8);

    using S = std::vector<int64_t>;
    CHECK(mf.tensors.at("token_embd.weight").shape == S{512, 64});
    CHECK(mf.tensors.at("output_norm.weight").shape == S{64});
    CHECK(mf.find("output.weight") == nullptr);  // shared classifier
    for (int l = 0; l < 5; ++l) {
        const std::string p = "blk." + std::to_string(l) + ".";
        CHECK(mf.tensors.at(p + "attn_norm.weight").shape == S{64});
        CHECK(mf.tensors.at(p + "attn_q.weight").shape == S{64, 64});
        CHECK(mf.tensors.at(p + "attn_k.weight").shape == S{32, 64});
        CHECK(mf.tensors.at(p + "attn_v.weight").shape == S{32, 64});
        CHECK(mf.tensors.at(p + "attn_output.weight").shape == S{64, 64});
        CHECK(mf.tensors.at(p + "ffn_norm.weight").shape == S{64});
        CHECK(mf.tensors.at(p + "ffn_gate.weight").shape == S{172, 64});
        CHECK(mf.tensors.at(p + "ffn_down.weight").shape == S{64, 172});
        CHECK(mf.tensors.at(p + "ffn_up.weight").shape == S{172, 64});
    }
    CHECK(mf.tensors.size() == 2 + 5 * 9);
    // Layout: the embedding follows the 28-byte header; layer 1's norm follows layer 0's.
    const std::byte* base = mf.mappings.at(0)->data();
    CHECK(mf.tensors.at("token_embd.weight").data == base + 28);
    CHECK(mf.tensors.at("blk.1.attn_norm.weight").data == mf.tensors.at("blk.0.attn_norm.weight").data + 64 * 4);
    CHECK(mf.tensors.at("blk.0.attn_q.weight").data == mf.tensors.at("blk.4.attn_norm.weight").data + 64 * 4);
}

TEST_CASE("llama2.c: an unshared classifier becomes output.weight", "[llama2c]") {
    std::string bytes = journey::test::slurp(kStories);
    int32_t vocab = -512;
    std::memcpy(bytes.data() + 20, &vocab, 4);
    bytes += std::string(512 * 64 * 4, '\0');
    const auto mf = read_llama2c(journey::test::write_temp("unshared.bin", bytes));
    CHECK(mf.metadata["llama.vocab_size"] == 512);
    CHECK(mf.tensors.at("output.weight").shape == std::vector<int64_t>{512, 64});
}

TEST_CASE("llama2.c: damaged checkpoints are refused naming the file", "[llama2c]") {
    const std::string good = journey::test::slurp(kStories);
    auto refused = [](const std::string& name, const std::string& bytes, const std::string& problem) {
        const auto path = journey::test::write_temp(name, bytes);
        try {
            read_llama2c(path);
            FAIL("accepted " << name);
        } catch (const ModelError& e) {
            INFO(e.what());
            CHECK(std::string(e.what()).find(path.string()) != std::string::npos);
            CHECK(std::string(e.what()).find(problem) != std::string::npos);
        }
    };
    auto with_field = [&](int index, int32_t value) {
        std::string b = good;
        std::memcpy(b.data() + 4 * index, &value, 4);
        return b;
    };
    refused("short.bin", good.substr(0, 20), "too small");
    refused("truncated.bin", good.substr(0, good.size() - 4), "truncated");
    refused("trailing.bin", good + "xxxx", "trailing");
    refused("negdim.bin", with_field(0, -64), "out of range");
    refused("heads.bin", with_field(3, 7), "multiple of n_heads");
    refused("kvheads.bin", with_field(4, 3), "n_kv_heads");
    refused("vocab0.bin", with_field(5, 0), "out of range");
    refused("hugevocab.bin", with_field(5, 1 << 20), "truncated");
    refused("unshared.bin", with_field(5, -512), "truncated");
}
