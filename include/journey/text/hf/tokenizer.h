// A Hugging Face tokenizer.json, its whole pipeline composed from the file, as the `tokenizers`
// library runs it:
//   text -> added tokens (raw) -> per stretch: normalizer -> added tokens (normalized)
//        -> pre-tokenizer pieces -> BPE model -> ids;  add_special_tokens: the post-processor's
//   template around them.  ids -> token strings -> decoder -> text (exact bytes).
// tokenizer_config.json beside the file may override BOS/EOS (add_bos_token, add_eos_token,
// bos_token, eos_token), as transformers does.
#pragma once
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "journey/text/hf/added_tokens.h"
#include "journey/text/hf/bpe_model.h"
#include "journey/text/hf/decoder.h"
#include "journey/text/hf/normalizer.h"
#include "journey/text/hf/pre_tokenizer.h"
#include "journey/text/tokenizer.h"

namespace journey {

class HfTokenizer : public Tokenizer {
public:
    // root: the parsed tokenizer.json; config: tokenizer_config.json (null when there is none);
    // file names the tokenizer.json in errors (ModelError naming the part at fault).
    // tables: model.vocab / model.merges read beside the tree (tokenizer_json_reader.h).
    HfTokenizer(const nlohmann::json& root, const nlohmann::json& config, const std::string& file,
                const BpeTables* tables = nullptr);

    // Without the template's special tokens (HF's add_special_tokens=false). InputError for text
    // that is not valid UTF-8 (the library takes only Unicode strings).
    std::vector<TokenId> encode(std::string_view text, bool parse_special = true) const override;
    // One token decoded as the continuation of a text (see Decoder::decode_chain).
    std::string token_bytes(TokenId id) const override;
    // The decoder over the whole sequence, as HF's decode(ids, skip_special_tokens=false).
    std::string decode(std::span<const TokenId> ids) const override { return decode(ids, false); }
    std::string decode(std::span<const TokenId> ids, bool skip_special) const;

    int32_t n_vocab() const override { return n_vocab_; }
    std::optional<TokenId> bos_id() const override { return bos_; }
    std::optional<TokenId> eos_id() const override { return eos_; }
    bool add_bos() const override { return bos_ && prefix_.size() == 1 && prefix_[0] == *bos_; }
    std::vector<TokenId> special_prefix() const override { return prefix_; }
    std::vector<TokenId> special_suffix() const override { return suffix_; }
    std::string kind() const override { return "hf-bpe"; }

    // BOS/EOS and the tokens around a text, set from elsewhere than the file (a GGUF's keys).
    void set_special_tokens(std::optional<TokenId> bos, std::optional<TokenId> eos, std::vector<TokenId> prefix,
                            std::vector<TokenId> suffix) {
        bos_ = bos, eos_ = eos, prefix_ = std::move(prefix), suffix_ = std::move(suffix);
    }

private:
    // The token string HF decodes for an id; InputError when there is none.
    std::string_view token_string(TokenId id) const;
    void read_post_processor(const HfPart& part);
    std::optional<TokenId> id_of(const std::string& content) const;

    std::string file_;
    std::unique_ptr<Normalizer> normalizer_;
    std::unique_ptr<PreTokenizer> pre_tokenizer_;
    std::unique_ptr<HfBpeModel> model_;
    std::unique_ptr<Decoder> decoder_;
    AddedTokenMatcher raw_added_, normalized_added_;
    std::unordered_map<TokenId, HfAddedToken> added_;  // by id
    std::unordered_map<std::string, TokenId> added_ids_;  // by content
    std::vector<TokenId> prefix_, suffix_;  // the template around a single sequence
    std::optional<TokenId> bos_, eos_;
    int32_t n_vocab_ = 0;
};

}  // namespace journey
