// The tokenizer that tokenize and detokenize use: the same model as every other subcommand
// (-m, --tokenizer, $JOURNEY_MODEL, the default model), or tokenizer files named directly.
#pragma once
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "journey/model/model.h"
#include "journey/text/tokenizer.h"
#include "model_options.h"

namespace journey::cli {

// -m MODEL [--tokenizer FILE] | --tokenizer FILE | --vocab FILE --merges FILE | --tokenizer-json FILE.
// -m may also be a directory holding only a tokenizer (models/gpt2-tokenizer).
struct TokenizerSource {
    ModelOptions model;
    std::string vocab, merges;
    std::string tokenizer_json;
};
void add_tokenizer_options(CLI::App* cmd, TokenizerSource& src);

// A tokenizer and what it came from (the model, when one was loaded for it).
struct LoadedTokenizer {
    std::unique_ptr<Model> model;
    std::unique_ptr<Tokenizer> own;
    std::string source;  // path of the model or tokenizer file, for JSON's "model"
    const Tokenizer& get() const { return model ? model->tokenizer() : *own; }
};
LoadedTokenizer load_tokenizer(const TokenizerSource& src);

}  // namespace journey::cli
