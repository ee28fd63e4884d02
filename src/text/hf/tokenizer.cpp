#include "journey/text/hf/tokenizer.h"

#include <algorithm>
#include <memory>

#include "journey/errors.h"
#include "journey/text/unicode.h"

namespace journey {
namespace {

using json = nlohmann::json;

// A special token named in tokenizer_config.json: "<s>" or {"content": "<s>", ...}.
std::optional<std::string> config_token(const json& config, const char* key) {
    const json v = config.is_object() ? config.value(key, json()) : json();
    if (v.is_string()) return v.get<std::string>();
    if (v.is_object() && v.value("content", json()).is_string()) return v["content"].get<std::string>();
    return std::nullopt;
}

// Copies of the pieces seen in one encode() call, so the cache can key on them after the
// pre-tokenizer's buffers are gone.
class PieceArena {
public:
    std::string_view keep(std::string_view s) {
        if (blocks_.empty() || used_ + s.size() > block_size_) {
            block_size_ = std::max<size_t>(1 << 16, s.size());
            blocks_.push_back(std::make_unique<char[]>(block_size_));
            used_ = 0;
        }
        char* at = blocks_.back().get() + used_;
        std::copy(s.begin(), s.end(), at);
        used_ += s.size();
        return {at, s.size()};
    }

private:
    std::vector<std::unique_ptr<char[]>> blocks_;
    size_t block_size_ = 0, used_ = 0;
};

}  // namespace

HfTokenizer::HfTokenizer(const json& root, const json& config, const std::string& file, const BpeTables* tables)
    : file_(file) {
    if (!root.is_object()) throw ModelError(file + ": not a JSON object");
    const HfPart top{file, "tokenizer", root};
    auto part = [&](const char* key) {
        static const json null_value;
        return HfPart{file, key, root.contains(key) ? root[key] : null_value};
    };
    normalizer_ = make_normalizer(part("normalizer"));
    pre_tokenizer_ = make_pre_tokenizer(part("pre_tokenizer"));
    if (!root.contains("model")) top.fail("has no \"model\"");
    model_ = std::make_unique<HfBpeModel>(part("model"), pre_tokenizer_ && pre_tokenizer_->byte_level(), tables);
    decoder_ = make_decoder(part("decoder"));

    // Added tokens: matched in the raw text, or (normalized) in the normalized text.
    std::vector<HfAddedToken> raw, normalized;
    n_vocab_ = int32_t(model_->n_ids());
    if (root.contains("added_tokens") && !root["added_tokens"].is_null()) {
        const HfPart list = part("added_tokens");
        if (!list.j.is_array()) list.fail("is not an array");
        for (size_t i = 0; i < list.j.size(); ++i) {
            const HfPart a = list.at(i);
            HfAddedToken t;
            const int64_t id = a.integer("id");
            if (id < 0 || id > INT32_MAX) a.fail("id " + std::to_string(id) + " is not in [0, 2^31)");
            if (id > int64_t(model_->n_ids()) + int64_t(list.j.size()) + (int64_t(1) << 20))
                a.fail("id " + std::to_string(id) + " is far beyond the vocabulary");
            t.id = TokenId(id);
            t.content = a.string("content");
            t.special = a.boolean("special", false);
            t.lstrip = a.boolean("lstrip", false);
            t.rstrip = a.boolean("rstrip", false);
            t.single_word = a.boolean("single_word", false);
            t.normalized = a.boolean("normalized", !t.special);
            n_vocab_ = std::max(n_vocab_, t.id + 1);
            added_ids_.emplace(t.content, t.id);
            added_[t.id] = t;
            if (t.normalized && normalizer_) {
                HfAddedToken n = t;
                normalizer_->normalize(n.content);  // matched in normalized text as normalized
                normalized.push_back(std::move(n));
            } else {
                raw.push_back(t);
            }
        }
    }
    raw_added_ = AddedTokenMatcher(std::move(raw));
    normalized_added_ = AddedTokenMatcher(std::move(normalized));

    read_post_processor(part("post_processor"));

    // BOS/EOS: tokenizer_config.json's names, else the template's first token for BOS.
    auto config_id = [&](const char* key) -> std::optional<TokenId> {
        const auto name = config_token(config, key);
        if (!name) return std::nullopt;
        const auto id = id_of(*name);
        if (!id) throw ModelError(file + ": tokenizer_config.json's " + key + " " + HfPart::shown(*name) + " is not a token");
        return id;
    };
    bos_ = config_id("bos_token");
    eos_ = config_id("eos_token");
    if (!bos_ && !prefix_.empty()) bos_ = prefix_.front();
    // transformers rebuilds the template from add_bos_token / add_eos_token when the config has them.
    auto flag = [&](const char* key) -> std::optional<bool> {
        if (!config.is_object() || !config.contains(key) || config[key].is_null()) return std::nullopt;
        if (!config[key].is_boolean()) throw ModelError(file + ": tokenizer_config.json's " + key + " is not a boolean");
        return config[key].get<bool>();
    };
    if (const auto add = flag("add_bos_token")) {
        if (*add && !bos_) throw ModelError(file + ": tokenizer_config.json asks for add_bos_token but names no bos_token");
        prefix_ = *add ? std::vector<TokenId>{*bos_} : std::vector<TokenId>{};
    }
    if (const auto add = flag("add_eos_token")) {
        if (*add && !eos_) throw ModelError(file + ": tokenizer_config.json asks for add_eos_token but names no eos_token");
        suffix_ = *add ? std::vector<TokenId>{*eos_} : std::vector<TokenId>{};
    }
}

std::optional<TokenId> HfTokenizer::id_of(const std::string& content) const {
    if (auto it = added_ids_.find(content); it != added_ids_.end()) return it->second;
    return model_->id_of(content);
}

// TemplateProcessing (its "single" template), ByteLevel (offsets only), or a Sequence of them.
void HfTokenizer::read_post_processor(const HfPart& part) {
    if (part.j.is_null()) return;
    const std::string type = part.type();
    if (type == "ByteLevel") return;
    if (type == "Sequence") {
        const HfPart list = part.at("processors");
        if (!list.j.is_array()) list.fail("is not an array");
        for (size_t i = 0; i < list.j.size(); ++i) read_post_processor(list.at(i));
        return;
    }
    if (type != "TemplateProcessing")
        part.fail("post_processor type \"" + type + "\" is not supported (journey knows TemplateProcessing, ByteLevel, Sequence)");
    const HfPart single = part.at("single");
    if (!single.j.is_array()) single.fail("is not an array");
    const HfPart specials = part.at("special_tokens");
    bool seen_sequence = false;
    for (size_t i = 0; i < single.j.size(); ++i) {
        const HfPart item = single.at(i);
        if (item.has("Sequence")) {
            const std::string name = item.at("Sequence").string("id");
            if (name != "A" || seen_sequence) item.fail("a single-sequence template holds sequence A once");
            seen_sequence = true;
            continue;
        }
        if (!item.has("SpecialToken")) item.fail("is neither a SpecialToken nor a Sequence");
        const std::string name = item.at("SpecialToken").string("id");
        if (!specials.has(name.c_str())) item.fail("special token " + HfPart::shown(name) + " is not in special_tokens");
        const HfPart ids = specials.at(name.c_str()).at("ids");
        if (!ids.j.is_array()) ids.fail("is not an array");
        for (const json& id : ids.j) {
            if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() >= n_vocab_)
                ids.fail("id " + HfPart::shown(id) + " is not a token");
            (seen_sequence ? suffix_ : prefix_).push_back(id.get<TokenId>());
        }
    }
    if (!seen_sequence) single.fail("has no sequence A");
}

std::vector<TokenId> HfTokenizer::encode(std::string_view text, bool parse_special) const {
    if (!unicode::is_valid_utf8(text)) throw InputError("the text is not valid UTF-8 (a tokenizer.json tokenizer reads Unicode text)");
    std::vector<TokenId> ids;
    ids.reserve(text.size() / 3 + 1);
    // Pieces already tokenized in this call -> where their ids are in `ids`.
    struct IdSpan {
        size_t offset = 0, count = 0;
    };
    FlatMap<std::string_view, IdSpan, BytesHash> cache;
    PieceArena arena;
    HfBpeModel::Scratch scratch;
    auto to_model = [&](std::string_view piece, bool) {
        if (piece.size() > 1) {
            if (const IdSpan* known = cache.find(piece)) {
                const size_t at = ids.size();
                ids.resize(at + known->count);
                std::copy_n(ids.begin() + ptrdiff_t(known->offset), known->count, ids.begin() + ptrdiff_t(at));
                return;
            }
        }
        const size_t at = ids.size();
        model_->tokenize(piece, ids, scratch);
        if (piece.size() > 1) cache.insert_or_assign(arena.keep(piece), IdSpan{at, ids.size() - at});
    };
    auto pre_tokenize = [&](std::string_view stretch, bool at_start) {
        if (pre_tokenizer_) pre_tokenizer_->split(stretch, at_start, to_model);
        else if (!stretch.empty()) to_model(stretch, at_start);
    };

    std::vector<AddedTokenMatcher::Segment> segments, inner;
    raw_added_.split(text, parse_special, segments);
    std::string normalized;
    for (const auto& seg : segments) {
        if (seg.token) {
            ids.push_back(seg.token->id);
            continue;
        }
        std::string_view stretch = text.substr(seg.begin, seg.end - seg.begin);
        if (normalizer_) {
            normalized.assign(stretch);
            normalizer_->normalize(normalized);
            stretch = normalized;
        }
        if (normalized_added_.empty()) {
            pre_tokenize(stretch, seg.begin == 0);
            continue;
        }
        inner.clear();
        normalized_added_.split(stretch, parse_special, inner);
        for (const auto& sub : inner) {
            if (sub.token) ids.push_back(sub.token->id);
            else pre_tokenize(stretch.substr(sub.begin, sub.end - sub.begin), seg.begin == 0 && sub.begin == 0);
        }
    }
    return ids;
}

std::string_view HfTokenizer::token_string(TokenId id) const {
    if (auto it = added_.find(id); it != added_.end()) return it->second.content;
    if (const auto t = model_->token(id)) return *t;
    // A row of the model the tokenizer has no token for (Qwen's padding up to vocab_size): Hugging
    // Face's decode skips it, so it is the empty string. Callers check ids against the model's rows.
    if (id >= 0) return {};
    throw InputError("token id " + std::to_string(id) + " is not in the vocabulary (" + std::to_string(n_vocab_) + " ids)");
}

std::string HfTokenizer::token_bytes(TokenId id) const {
    std::vector<std::string> tokens{std::string(token_string(id))};
    if (decoder_) decoder_->decode_chain(tokens, /*continuation=*/true);
    std::string out;
    for (const auto& t : tokens) out += t;
    return out;
}

std::string HfTokenizer::decode(std::span<const TokenId> ids, bool skip_special) const {
    std::vector<std::string> tokens;
    tokens.reserve(ids.size());
    for (TokenId id : ids) {
        if (skip_special) {
            auto it = added_.find(id);
            if (it != added_.end() && it->second.special) continue;
        }
        tokens.emplace_back(token_string(id));
    }
    std::string out;
    if (!decoder_) {  // HF joins the tokens with spaces
        for (size_t i = 0; i < tokens.size(); ++i) out += (i ? " " : "") + tokens[i];
        return out;
    }
    decoder_->decode_chain(tokens, /*continuation=*/false);
    for (const auto& t : tokens) out += t;
    return out;
}

}  // namespace journey
