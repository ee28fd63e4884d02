// Rules llama.cpp applies to a GGUF vocabulary's token types on loading (llama-vocab.cpp,
// v0.5.0), which decide which tokens written in a text are recognised and how.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace journey {

// Texts llama.cpp makes control tokens whatever type the file gives them (end-of-turn,
// end-of-generation and fill-in-the-middle tokens: "its type will be overridden").
bool llama_cpp_forces_control(std::string_view text);
// Texts llama.cpp makes plain user-defined tokens (gpt-oss's channel markers).
bool llama_cpp_forces_user_defined(std::string_view text);

// How a special token written in a text is cut out of it (tokenizer_st_partition).
struct LlamaSpecial {
    int32_t id;
    std::string text;
    bool control;  // control or unknown: recognised only when special tokens are parsed
    bool lstrip = false, rstrip = false;  // ASCII white space before / after it is dropped
};
// One piece of a text after partition: raw text [begin, end), or a special token.
struct LlamaFragment {
    int32_t token;  // -1: raw text
    size_t begin, end;
};
// llama.cpp's partition: each special token in turn, longest text first, cuts every raw
// fragment at each of its occurrences. specials must be sorted by text length, longest first.
std::vector<LlamaFragment> llama_cpp_partition(std::string_view text, const std::vector<LlamaSpecial>& specials,
                                               bool parse_special);

}  // namespace journey
