#include "tokenizer_options.h"

#include <filesystem>
#include <system_error>

#include "journey/errors.h"
#include "journey/formats/gguf_reader.h"
#include "journey/text/spm_tokenizer.h"
#include "journey/text/tokenizer_loader.h"

namespace journey::cli {

namespace fs = std::filesystem;

void add_tokenizer_options(CLI::App* cmd, TokenizerSource& src) {
    auto* m = cmd->add_option("-m,--model", src.model_dir,
                              "Model directory holding tokenizer.json or vocab.json + merges.txt, or a GGUF file");
    auto* v = cmd->add_option("--vocab", src.vocab, "GPT-2 vocab.json (with --merges)");
    auto* g = cmd->add_option("--merges", src.merges, "GPT-2 merges.txt (with --vocab)");
    auto* t = cmd->add_option("--tokenizer-json", src.tokenizer_json, "Hugging Face tokenizer.json");
    v->needs(g);
    g->needs(v);
    m->excludes(v)->excludes(g)->excludes(t);
    t->excludes(v)->excludes(g);
}

std::string default_tokenizer_dir() {
    std::error_code ec;
    fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) {
        fs::path installed = exe.parent_path().parent_path() / JOURNEY_INSTALL_DATADIR / "models" / "gpt2-tokenizer";
        if (fs::is_directory(installed, ec)) return installed.string();
    }
    return (fs::path(JOURNEY_SOURCE_DIR) / "models" / "gpt2-tokenizer").string();
}

std::unique_ptr<Tokenizer> load_tokenizer(const TokenizerSource& src) {
    if (!src.tokenizer_json.empty()) return load_tokenizer_json(src.tokenizer_json);
    if (!src.vocab.empty()) return load_bpe_from_files(src.vocab, src.merges);
    // A GGUF file carries its tokenizer in its metadata.
    if (!src.model_dir.empty() && fs::is_regular_file(src.model_dir) && fs::path(src.model_dir).extension() == ".gguf")
        return load_tokenizer_from_gguf(read_gguf(src.model_dir));
    return load_tokenizer_dir(src.model_dir.empty() ? default_tokenizer_dir() : src.model_dir);
}

}  // namespace journey::cli
