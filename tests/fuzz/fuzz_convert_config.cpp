// journey convert's readers of a Hugging Face directory: config.json (the runtime's
// config_from_hf and what the converter reads beside it: rope_scaling, _name_or_path's naming
// regexes, the vocabulary padding, the tokenizer's special ids) and tokenizer_config.json, with
// the tokenizer files of tests/data/convert/llama3 (a 512-token Llama 3 vocabulary) and a tiny
// Llama of its own (1 layer, width 16, written here: a conversion takes milliseconds).
// The input is config.json, then optionally a NUL byte and tokenizer_config.json (else the real
// one). Properties: a refusal is a journey::Error; a conversion that succeeds writes a GGUF that
// journey loads (convert never writes a file the loader refuses); no temporary file is left in
// the output directory either way.
#include <filesystem>
#include <vector>

#include <nlohmann/json.hpp>

#include "fuzz_common.h"
#include "journey/convert/convert.h"
#include "journey/model/model.h"

namespace fs = std::filesystem;

namespace {

fs::path model_dir, out_dir;

// The tiny Llama's tensors (HF names, shapes) as F32 safetensors; the seeds' config matches it
// (tests/fuzz/make_seeds.py: hidden_size 16, 2 heads, 1 kv head, head_dim 8, intermediate 32).
std::string tiny_llama() {
    const std::vector<std::pair<std::string, std::vector<int64_t>>> shapes = {
        {"model.embed_tokens.weight", {512, 16}},
        {"model.layers.0.input_layernorm.weight", {16}},
        {"model.layers.0.self_attn.q_proj.weight", {16, 16}},
        {"model.layers.0.self_attn.k_proj.weight", {8, 16}},
        {"model.layers.0.self_attn.v_proj.weight", {8, 16}},
        {"model.layers.0.self_attn.o_proj.weight", {16, 16}},
        {"model.layers.0.post_attention_layernorm.weight", {16}},
        {"model.layers.0.mlp.gate_proj.weight", {32, 16}},
        {"model.layers.0.mlp.up_proj.weight", {32, 16}},
        {"model.layers.0.mlp.down_proj.weight", {16, 32}},
        {"model.norm.weight", {16}},
    };
    nlohmann::json header = nlohmann::json::object();
    std::string data;
    for (const auto& [name, shape] : shapes) {
        int64_t n = 1;
        for (int64_t d : shape) n *= d;
        std::vector<float> v(static_cast<size_t>(n));
        for (size_t i = 0; i < v.size(); ++i) v[i] = 0.01f * float(int(i % 13) - 6);
        header[name] = {{"dtype", "F32"}, {"shape", shape}, {"data_offsets", {data.size(), data.size() + v.size() * 4}}};
        data.append(reinterpret_cast<const char*>(v.data()), v.size() * 4);
    }
    std::string h = header.dump();
    h.append((8 - h.size() % 8) % 8, ' ');
    const uint64_t n = h.size();
    return std::string(reinterpret_cast<const char*>(&n), 8) + h + data;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    const fs::path tok = JOURNEY_SOURCE_DIR "/tests/data/convert/llama3";
    model_dir = journey::fuzz::scratch_dir() / "hf";
    out_dir = journey::fuzz::scratch_dir() / "out";
    fs::create_directories(model_dir);
    fs::create_directories(out_dir);
    journey::fuzz::write_scratch("hf/model.safetensors", tiny_llama());
    for (const char* f : {"tokenizer.json", "special_tokens_map.json", "generation_config.json"})
        fs::create_symlink(tok / f, model_dir / f);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace journey;
    const std::string_view in = fuzz::as_text(data, size);
    const size_t nul = in.find('\0');
    fuzz::write_scratch("hf/config.json", in.substr(0, nul));
    fs::remove(model_dir / "tokenizer_config.json");
    if (nul != std::string_view::npos) fuzz::write_scratch("hf/tokenizer_config.json", in.substr(nul + 1));
    else fs::copy_file(JOURNEY_SOURCE_DIR "/tests/data/convert/llama3/tokenizer_config.json", model_dir / "tokenizer_config.json");
    const fs::path out = out_dir / "model.gguf";
    fs::remove(out);
    bool written = false;
    fuzz::refusal_ok([&] {
        convert_hf_dir(model_dir, out, *find_quant_target("f32"));
        written = true;
    });
    size_t files = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(out_dir)) ++files;
    fuzz::require(files == (written ? 1u : 0u), "only the finished output is left in the output directory");
    if (written) {
        try {
            const auto m = Model::load(out, {.mmap = true});
        } catch (const Error& e) {
            std::fprintf(stderr, "convert wrote a GGUF journey refuses: %s\n", e.what());
            fuzz::require(false, "journey loads what convert writes");
        }
    }
    return 0;
}
