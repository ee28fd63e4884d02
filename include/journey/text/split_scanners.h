// Hand-written scanners for the Split patterns most tokenizer.json files use, chosen only when
// the pattern string is exactly one of these, and tested to split exactly as Oniguruma does:
//   GPT-2:   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//   Llama 3: (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//   Qwen2:   the same with \p{N} for \p{N}{1,3}
// and llama.cpp's forms of the last two ((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])
// for the case-insensitive group), which GGUF vocabularies run.
// Each pattern matches every character, so its matches are the pieces, one after another.
#pragma once
#include <cstddef>
#include <string_view>

namespace journey {

// End (byte offset) of the piece that starts at byte pos of text (pos < text.size()).
using PieceScanner = size_t (*)(std::string_view text, size_t pos);

extern const std::string_view kGpt2Pattern, kLlama3Pattern, kQwen2Pattern, kLlama3CppPattern, kQwen2CppPattern;

size_t llama3_piece_end(std::string_view text, size_t pos);
size_t qwen2_piece_end(std::string_view text, size_t pos);

// The scanner for a pattern, or nullptr when none is exactly that pattern.
PieceScanner scanner_for_pattern(std::string_view regex);

}  // namespace journey
