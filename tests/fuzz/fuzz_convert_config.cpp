// journey convert's readers of a Hugging Face directory: config.json (the runtime's
// config_from_hf and what the converter reads beside it: rope_scaling, _name_or_path's naming
// regexes, the vocabulary padding, the tokenizer's special ids) and tokenizer_config.json, with
// the real weights and tokenizer.json of tests/data/models/llama3 (a 2-layer Llama 3 stand-in).
// The input is config.json, then optionally a NUL byte and tokenizer_config.json (else the real
// one). Properties: a refusal is a journey::Error naming a file; a conversion that succeeds
// writes a GGUF that journey loads (convert never writes a file the loader refuses); no
// temporary file is left in the output directory either way.
#include <filesystem>

#include "fuzz_common.h"
#include "journey/convert/convert.h"
#include "journey/model/model.h"

namespace fs = std::filesystem;

namespace {

fs::path model_dir, out_dir;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    const fs::path data = JOURNEY_FUZZ_DATA "/models/llama3/hf", tok = JOURNEY_SOURCE_DIR "/tests/data/convert/llama3";
    model_dir = journey::fuzz::scratch_dir() / "hf";
    out_dir = journey::fuzz::scratch_dir() / "out";
    fs::create_directories(model_dir);
    fs::create_directories(out_dir);
    fs::create_symlink(data / "model.safetensors", model_dir / "model.safetensors");
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
