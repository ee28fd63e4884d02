// Stage 1 of the journey: text -> token ids, and ids -> exact bytes.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace journey {

using TokenId = int32_t;

class Tokenizer {
public:
    virtual ~Tokenizer() = default;

    // parse_special: recognise special tokens such as <|endoftext|> in the text (HF default).
    virtual std::vector<TokenId> encode(std::string_view text, bool parse_special = true) const = 0;
    // The exact bytes one token stands for (may be part of a UTF-8 character).
    virtual std::string token_bytes(TokenId id) const = 0;
    // The exact bytes of a sequence; default: the concatenation of token_bytes.
    virtual std::string decode(std::span<const TokenId> ids) const;

    virtual int32_t n_vocab() const = 0;
    virtual std::optional<TokenId> bos_id() const { return std::nullopt; }
    virtual std::optional<TokenId> eos_id() const { return std::nullopt; }
    // Whether a prompt starts with bos_id() (Llama/SPM: yes; GPT-2: no). See encode_prompt().
    virtual bool add_bos() const { return false; }
    // The special tokens a model expects around a text (Hugging Face's add_special_tokens=true:
    // the post-processor's template). Default: bos_id() when add_bos(), nothing after.
    virtual std::vector<TokenId> special_prefix() const;
    virtual std::vector<TokenId> special_suffix() const { return {}; }
    virtual std::string kind() const = 0;  // e.g. "gpt2-bpe", "llama-spm"
};

// Replace invalid UTF-8 with U+FFFD so the text can go into JSON or a terminal.
std::string valid_utf8(std::string_view bytes);

}  // namespace journey
