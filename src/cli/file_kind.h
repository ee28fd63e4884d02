// What a file is by its content, not its name: so that `-m dir/config.json` or a GGUF passed as
// --tokenizer is answered with what was expected instead of a reader's complaint about bytes.
#pragma once
#include <filesystem>
#include <string>

namespace journey::cli {

enum class FileKind {
    missing,
    directory,
    gguf,         // starts with the magic "GGUF"
    safetensors,  // u64 header length, then a JSON header that fits in the file
    json,         // starts (after white space) with '{' or '['
    other,        // anything else: llama2.c checkpoints and tokenizers have no magic
};
FileKind sniff(const std::filesystem::path& path);
const char* describe(FileKind k);  // "a GGUF model file", "a JSON file", ...

}  // namespace journey::cli
