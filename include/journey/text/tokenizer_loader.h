// Opening a tokenizer: open_tokenizer decides, for every command (a model's load, tokenize,
// detokenize), which file a tokenizer is read from; the loaders of each kind are below it.
// Every loader throws ModelError naming the file (and the line, for merges.txt).
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "journey/formats/model_file.h"
#include "journey/text/bpe_merges.h"
#include "journey/text/bpe_tokenizer.h"

namespace journey {

// Where a tokenizer comes from: one of
//   gguf: a GGUF file already read: its tokenizer.ggml.* metadata;
//   path + merges: GPT-2's vocab.json and merges.txt;
//   path alone: a directory (its tokenizer.json, else vocab.json + merges.txt), a tokenizer.json,
//     a .gguf file (its metadata), or llama2.c's tokenizer.bin (any other file);
//   path + json: a tokenizer.json whatever its name (--tokenizer-json).
struct TokenizerSpec {
    std::filesystem::path path;
    std::filesystem::path merges;
    bool json = false;
    std::optional<int32_t> n_vocab;  // tokenizer.bin: the model's vocabulary size (it reads that many)
    const ModelFile* gguf = nullptr;

    static TokenizerSpec at(std::filesystem::path p, std::optional<int32_t> n_vocab = std::nullopt) {
        TokenizerSpec s;
        s.path = std::move(p);
        s.n_vocab = n_vocab;
        return s;
    }
    static TokenizerSpec gpt2_files(std::filesystem::path vocab, std::filesystem::path merges) {
        TokenizerSpec s = at(std::move(vocab));
        s.merges = std::move(merges);
        return s;
    }
    static TokenizerSpec json_file(std::filesystem::path p) {
        TokenizerSpec s = at(std::move(p));
        s.json = true;
        return s;
    }
    static TokenizerSpec metadata(const ModelFile& f) {
        TokenizerSpec s;
        s.gguf = &f;
        return s;
    }
};
std::unique_ptr<Tokenizer> open_tokenizer(const TokenizerSpec& spec);

// Whether `path` holds a tokenizer and no model, so that open_tokenizer(at(path)) is the whole
// answer: a directory with tokenizer.json or vocab.json but no config.json (models/gpt2-tokenizer),
// or a GGUF file without tensors (llama.cpp's ggml-vocab-*.gguf).
bool tokenizer_only(const std::filesystem::path& path);

std::unique_ptr<BpeTokenizer> load_bpe_from_files(const std::string& vocab_json, const std::string& merges_txt);
// A tokenizer.json of GPT-2's kind: byte-level BPE.
std::unique_ptr<BpeTokenizer> load_bpe_from_tokenizer_json(const std::string& tokenizer_json);
// Any tokenizer.json: GPT-2's own form gives a BpeTokenizer (the same ids, faster), every other
// an HfTokenizer running the file's whole pipeline, which also reads tokenizer_config.json beside
// the file. What it cannot run exactly (a Unigram or WordPiece model, an unknown stage) is refused.
std::unique_ptr<Tokenizer> load_tokenizer_json(const std::string& tokenizer_json);
// dir/tokenizer.json if it exists (as load_tokenizer_json), else dir/vocab.json + dir/merges.txt.
std::unique_ptr<Tokenizer> load_tokenizer_dir(const std::string& dir);

}  // namespace journey
