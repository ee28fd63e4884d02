// Builds gpt2-tiny.gguf for the tests from the gpt2-tiny checkpoint directory, at build time, so
// the repository stores the random weights once (the GGUF was 28 MB beside a 13 MB safetensors).
// The layout is llama.cpp's converter's for GPT-2: its tensor names, Linear [out, in] matrices
// (Conv1D weights transposed), an untied copy of the embedding as output.weight, the tokenizer
// as tokenizer.ggml.* arrays. The tests that read it compare against minGPT's numbers and
// against the directory, both independent of this program.
// Usage: make_gpt2_tiny_gguf DIR OUT.gguf
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gguf_writer.h"
#include "journey/formats/safetensors_reader.h"

namespace fs = std::filesystem;
using namespace journey;
using journey::test::GgufBuilder;
using journey::test::GgufTensor;

namespace {

const TensorInfo& need(const ModelFile& f, const std::string& name) {
    const TensorInfo* t = f.find(name);
    if (!t || t->dtype != DType::F32) throw std::runtime_error("missing F32 tensor " + name);
    return *t;
}

std::string bytes_of(const TensorInfo& t) { return std::string(reinterpret_cast<const char*>(t.data), t.nbytes); }

// A GGUF tensor as stored: ne innermost first (GGUF) = the safetensors shape reversed.
GgufTensor as_is(const std::string& name, const TensorInfo& t) {
    return {name, std::vector<uint64_t>(t.shape.rbegin(), t.shape.rend()), journey::gguf::kTypeF32, bytes_of(t), std::nullopt};
}

// Conv1D [in, out] -> Linear [out, in].
GgufTensor transposed(const std::string& name, const TensorInfo& t) {
    const int64_t in = t.dim(0), out = t.dim(1);
    const auto* w = reinterpret_cast<const float*>(t.data);
    std::vector<float> lin(size_t(in * out));
    for (int64_t i = 0; i < in; ++i)
        for (int64_t o = 0; o < out; ++o) lin[size_t(o * in + i)] = w[i * out + o];
    return {name, {uint64_t(in), uint64_t(out)}, journey::gguf::kTypeF32,
            std::string(reinterpret_cast<const char*>(lin.data()), lin.size() * sizeof(float)), std::nullopt};
}

std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + p.string());
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

}  // namespace

int main(int argc, char** argv) try {
    if (argc != 3) {
        std::fprintf(stderr, "usage: make_gpt2_tiny_gguf DIR OUT.gguf\n");
        return 1;
    }
    const fs::path dir = argv[1];
    const ModelFile st = read_safetensors(dir / "model.safetensors");
    const auto config = nlohmann::json::parse(slurp(dir / "config.json"));
    const auto vocab = nlohmann::json::parse(slurp(dir / "vocab.json"));
    const int n_layer = config.at("n_layer"), n_vocab = config.at("vocab_size");

    std::vector<std::string> tokens(static_cast<size_t>(n_vocab));
    for (const auto& [piece, id] : vocab.items()) tokens.at(id.get<size_t>()) = piece;
    std::vector<int32_t> types(static_cast<size_t>(n_vocab), 1);
    types.back() = 3;  // <|endoftext|> is a control token
    std::vector<std::string> merges;
    std::istringstream ml(slurp(dir / "merges.txt"));
    for (std::string line; std::getline(ml, line);)
        if (!line.empty() && line.rfind("#version", 0) != 0) merges.push_back(line);

    GgufBuilder g;
    g.kv_str("general.architecture", "gpt2").kv_str("general.name", "gpt2-tiny");
    g.kv_u32("gpt2.context_length", config.at("n_positions")).kv_u32("gpt2.embedding_length", config.at("n_embd"));
    g.kv_u32("gpt2.feed_forward_length", 4 * config.at("n_embd").get<uint32_t>()).kv_u32("gpt2.block_count", n_layer);
    g.kv_u32("gpt2.attention.head_count", config.at("n_head"));
    g.kv_f32("gpt2.attention.layer_norm_epsilon", config.at("layer_norm_epsilon"));
    g.kv_u32("general.file_type", 0);
    g.kv_str("tokenizer.ggml.model", "gpt2").kv_str("tokenizer.ggml.pre", "gpt-2");
    g.kv_strs("tokenizer.ggml.tokens", tokens).kv_i32s("tokenizer.ggml.token_type", types);
    g.kv_strs("tokenizer.ggml.merges", merges);
    g.kv_u32("tokenizer.ggml.bos_token_id", n_vocab - 1).kv_u32("tokenizer.ggml.eos_token_id", n_vocab - 1);

    g.tensor(as_is("token_embd.weight", need(st, "wte.weight")));
    g.tensor(as_is("position_embd.weight", need(st, "wpe.weight")));
    g.tensor(as_is("output_norm.weight", need(st, "ln_f.weight")));
    g.tensor(as_is("output_norm.bias", need(st, "ln_f.bias")));
    g.tensor(as_is("output.weight", need(st, "wte.weight")));
    for (int l = 0; l < n_layer; ++l) {
        const std::string h = "h." + std::to_string(l) + ".", b = "blk." + std::to_string(l) + ".";
        g.tensor(as_is(b + "attn_norm.weight", need(st, h + "ln_1.weight")));
        g.tensor(as_is(b + "attn_norm.bias", need(st, h + "ln_1.bias")));
        g.tensor(transposed(b + "attn_qkv.weight", need(st, h + "attn.c_attn.weight")));
        g.tensor(as_is(b + "attn_qkv.bias", need(st, h + "attn.c_attn.bias")));
        g.tensor(transposed(b + "attn_output.weight", need(st, h + "attn.c_proj.weight")));
        g.tensor(as_is(b + "attn_output.bias", need(st, h + "attn.c_proj.bias")));
        g.tensor(as_is(b + "ffn_norm.weight", need(st, h + "ln_2.weight")));
        g.tensor(as_is(b + "ffn_norm.bias", need(st, h + "ln_2.bias")));
        g.tensor(transposed(b + "ffn_up.weight", need(st, h + "mlp.c_fc.weight")));
        g.tensor(as_is(b + "ffn_up.bias", need(st, h + "mlp.c_fc.bias")));
        g.tensor(transposed(b + "ffn_down.weight", need(st, h + "mlp.c_proj.weight")));
        g.tensor(as_is(b + "ffn_down.bias", need(st, h + "mlp.c_proj.bias")));
    }
    std::ofstream out(argv[2], std::ios::binary);
    const std::string bytes = g.build();
    out.write(bytes.data(), std::streamsize(bytes.size()));
    if (!out) throw std::runtime_error(std::string("cannot write ") + argv[2]);
    return 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "make_gpt2_tiny_gguf: %s\n", e.what());
    return 1;
}
