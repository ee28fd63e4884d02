// The GPT-2 pre-tokenizer: cut text into the pieces BPE runs on, as the regex
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// does in Hugging Face tokenizers (Oniguruma) and tiktoken, written as a scanner over code points.
// \s is the Unicode White_Space property (U+0085 is white space, U+FEFF is not).
// Bytes that are not valid UTF-8 count as one "other" character each, so any input is split.
#pragma once
#include <cstddef>
#include <string_view>
#include <vector>

namespace journey {

// End (byte offset) of the piece that starts at byte `pos` of `text`; pos < text.size().
size_t gpt2_piece_end(std::string_view text, size_t pos);

// All pieces of `text`, in order; they concatenate back to `text`.
std::vector<std::string_view> gpt2_pretokenize(std::string_view text);

}  // namespace journey
