// The tokenizer options that tokenize and detokenize share, and where the default tokenizer lives.
#pragma once
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "journey/text/tokenizer.h"

namespace journey::cli {

// -m MODEL_DIR | --vocab FILE --merges FILE | --tokenizer-json FILE; none: default_tokenizer_dir().
struct TokenizerSource {
    std::string model_dir;
    std::string vocab, merges;
    std::string tokenizer_json;
};
void add_tokenizer_options(CLI::App* cmd, TokenizerSource& src);
std::unique_ptr<Tokenizer> load_tokenizer(const TokenizerSource& src);

// The tokenizer used when no option names one: GPT-2's vocabulary, installed next to the binary
// (<exe_dir>/../share/journey/models/gpt2-tokenizer) or in the source tree.
std::string default_tokenizer_dir();

}  // namespace journey::cli
