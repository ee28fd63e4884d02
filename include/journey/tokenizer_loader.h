// Reading tokenizer files: Hugging Face's tokenizer.json, or GPT-2's vocab.json + merges.txt.
// Every loader throws ModelError naming the file (and the line, for merges.txt).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "journey/bpe_tokenizer.h"

namespace journey {

std::unique_ptr<BpeTokenizer> load_bpe_from_files(const std::string& vocab_json, const std::string& merges_txt);
std::unique_ptr<BpeTokenizer> load_bpe_from_tokenizer_json(const std::string& tokenizer_json);
// dir/tokenizer.json if it exists, else dir/vocab.json + dir/merges.txt.
std::unique_ptr<Tokenizer> load_tokenizer_dir(const std::string& dir);

// merges.txt as Hugging Face reads it: a line starting with "#version" is skipped, every other
// line must be two tokens separated by one space. `file` names the source in errors.
std::vector<BpeMerge> parse_merges_txt(const std::string& text, const std::string& file);

}  // namespace journey
