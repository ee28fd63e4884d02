// Where a trace came from, for the page's provenance block: the model's files with their
// SHA-256 (FIPS 180-4), so that a page names exactly the weights it shows.
#pragma once
#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace journey {

// SHA-256 of bytes, as 64 lowercase hex digits.
std::string sha256_hex(std::string_view bytes);
// SHA-256 of a file's contents (read in 1 MiB pieces). InputError if it cannot be read.
std::string sha256_file(const std::filesystem::path& path);

// [{name, bytes, sha256}] for a model source: the file itself, or a directory's regular files
// that hold weights, the config or the tokenizer (*.safetensors, *.gguf, *.bin, *.model,
// config.json, tokenizer*.json, vocab.json, merges.txt),
// sorted by name.
nlohmann::json model_files_json(const std::filesystem::path& source);

}  // namespace journey
