// Reading tokenizer files: Hugging Face's tokenizer.json, or GPT-2's vocab.json + merges.txt.
// Every loader throws ModelError naming the file (and the line, for merges.txt).
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "journey/text/bpe_tokenizer.h"

namespace journey {

std::unique_ptr<BpeTokenizer> load_bpe_from_files(const std::string& vocab_json, const std::string& merges_txt);
// A tokenizer.json of GPT-2's kind: byte-level BPE.
std::unique_ptr<BpeTokenizer> load_bpe_from_tokenizer_json(const std::string& tokenizer_json);
// Any tokenizer.json: GPT-2's own form gives a BpeTokenizer (the same ids, faster), every other
// an HfTokenizer running the file's whole pipeline, which also reads tokenizer_config.json beside
// the file. What it cannot run exactly (a Unigram or WordPiece model, an unknown stage) is refused.
std::unique_ptr<Tokenizer> load_tokenizer_json(const std::string& tokenizer_json);
// dir/tokenizer.json if it exists (as load_tokenizer_json), else dir/vocab.json + dir/merges.txt.
std::unique_ptr<Tokenizer> load_tokenizer_dir(const std::string& dir);

// tokenizer.json's model.vocab {"token": id, ...} as (token, id) pairs, and model.merges ("a b"
// strings or ["a", "b"] pairs), as views into the JSON's strings. `file` names the source in errors.
BpeVocab parse_vocab_json(const nlohmann::json& vocab, const std::string& file);
std::vector<BpeMerge> parse_merges_json(const nlohmann::json& merges, const std::string& file);

// merges.txt as Hugging Face reads it: a line starting with "#version" is skipped, every other
// line must be two tokens separated by one space. The merges view `text`. `file` names the
// source in errors.
std::vector<BpeMerge> parse_merges_txt(std::string_view text, const std::string& file);

}  // namespace journey
