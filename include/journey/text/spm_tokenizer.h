// SentencePiece-style BPE with scores (Llama 1/2, llama2.c), as llama.cpp's SPM tokenizer does it:
// spaces become U+2581 "▁" (a leading one is added when add_space_prefix), the text is split
// into UTF-8 characters, and the adjacent pair whose concatenation is the vocabulary piece
// with the highest score is merged, again and again (ties: leftmost first). A character that
// is not a piece falls back to its bytes' <0xNN> tokens (to <unk> in a vocabulary without them).
#pragma once
#include <array>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "journey/formats/model_file.h"
#include "journey/text/llama_vocab_rules.h"
#include "journey/text/tokenizer.h"

namespace journey {

// GGUF's tokenizer.ggml.token_type values.
enum class TokenType : int32_t {
    Undefined = 0, Normal = 1, Unknown = 2, Control = 3, UserDefined = 4, Unused = 5, Byte = 6,
};

class SpmTokenizer : public Tokenizer {
public:
    struct Options {
        TokenId bos = 1;
        TokenId eos = 2;
        TokenId unk = 0;
        bool add_bos = true;           // callers put bos_id() before a prompt
        bool add_eos = false;          // ... and eos_id() after it (add_special), as llama.cpp
        bool add_space_prefix = true;  // encode(" ..."), and decode drops that space again
        // Special tokens that drop ASCII white space before / after them in a text (llama.cpp
        // sets these by model name: all of Phi-3's but <unk>, <s>, <|endoftext|> rstrip).
        std::vector<TokenId> lstrip, rstrip;
    };

    // tokens use "▁" for spaces and "<0xNN>" for byte tokens. scores and types must have one
    // entry per token. source names the file in error messages (ModelError).
    SpmTokenizer(std::vector<std::string> tokens, std::vector<float> scores, std::vector<TokenType> types,
                 Options options, const std::string& source);

    // From GGUF metadata with tokenizer.ggml.model == "llama".
    static std::unique_ptr<SpmTokenizer> from_gguf(const ModelFile& mf);
    // From llama2.c's tokenizer.bin: int32 max_token_length, then per token {float score,
    // int32 length, bytes}; ids 0, 1, 2 = <unk>, <s>, </s>; 3..258 = <0x00>..<0xFF>.
    // Reads every token in the file, or exactly vocab_size of them when given.
    static std::unique_ptr<SpmTokenizer> from_llama2c(const std::filesystem::path& path,
                                                      std::optional<int32_t> vocab_size = std::nullopt);

    // Never adds BOS (see add_bos()). User-defined token texts in the text become those tokens;
    // control and unknown ones (e.g. "<s>") too when parse_special, as llama.cpp does.
    std::vector<TokenId> encode(std::string_view text, bool parse_special = true) const override;
    // Byte tokens give their byte, "▁" gives a space, control tokens give nothing, the unknown
    // token gives "▅" (as llama.cpp). Throws InputError for an id out of range.
    std::string token_bytes(TokenId id) const override;
    // Concatenated token_bytes, minus the space that add_space_prefix put at the start of the
    // text and after each control token, as llama2.c does after BOS.
    std::string decode(std::span<const TokenId> ids) const override;

    int32_t n_vocab() const override { return int32_t(tokens_.size()); }
    std::optional<TokenId> bos_id() const override { return options_.bos; }
    std::optional<TokenId> eos_id() const override { return options_.eos; }
    std::string kind() const override { return "llama-spm"; }

    bool add_bos() const override { return options_.add_bos; }
    std::vector<TokenId> special_suffix() const override {
        return options_.add_eos ? std::vector<TokenId>{options_.eos} : std::vector<TokenId>{};
    }
    bool add_space_prefix() const { return options_.add_space_prefix; }
    const std::string& token_text(TokenId id) const { return tokens_.at(size_t(id)); }
    float score(TokenId id) const { return scores_.at(size_t(id)); }
    TokenType type(TokenId id) const { return types_.at(size_t(id)); }

private:
    struct StringHash {
        using is_transparent = void;
        size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
    };

    void encode_raw(std::string_view text, std::vector<TokenId>& out) const;
    std::optional<TokenId> piece_id(std::string_view piece) const;

    std::vector<std::string> tokens_;
    std::vector<float> scores_;
    std::vector<TokenType> types_;
    Options options_;
    std::unordered_map<std::string, TokenId, StringHash, std::equal_to<>> pieces_;  // mergeable
    std::array<TokenId, 256> byte_tokens_{};     // <0xNN> ids
    bool has_byte_tokens_ = false;               // all 256 present: byte fallback, else <unk>
    std::vector<LlamaSpecial> specials_;         // control, unknown, user-defined; longest text first
};

// The tokenizer stored in a GGUF file's metadata: tokenizer.ggml.model "llama" gives an
// SpmTokenizer, "gpt2" the byte-level BPE tokenizer. Throws ModelError naming the file when the
// metadata is missing, inconsistent or of another model.
std::unique_ptr<Tokenizer> load_tokenizer_from_gguf(const ModelFile& mf);

}  // namespace journey
