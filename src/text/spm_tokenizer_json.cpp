// Building an SpmTokenizer from a Hugging Face tokenizer.json of SentencePiece-style BPE, as
// transformers' LlamaConverter writes one for Llama and Mistral: model.vocab, model.merges,
// byte_fallback, and "▁" for spaces (a Prepend/Replace normalizer or a Metaspace pre-tokenizer).
//
// Hugging Face's BPE merges, again and again, the adjacent pair listed first in model.merges;
// SpmTokenizer merges the adjacent pair whose concatenation has the highest score. With
// score = -(rank of the first merge that makes the piece) they pick the same pair when the merges
// are shaped as LlamaConverter makes them from a SentencePiece model (every split of every piece
// into two pieces, sorted by the piece's score):
//   - every split of a merged piece into two pieces that can be merged is itself a merge (HF
//     merges only listed pairs, SpmTokenizer any pair whose concatenation is a piece);
//   - the merges that make one piece are consecutive (one score per piece keeps the ranks' order);
//   - every character of a merged piece is a piece (HF never merges a character it lacks);
//   - no merge involves a byte or special token (SpmTokenizer never merges those).
// A file whose merges are otherwise is refused rather than tokenized differently. A piece that
// no merge makes is never formed by merging, as in HF (e.g. "▁▁" in files that list no "▁ ▁").
// One difference is left: when two overlapping pairs make the same piece by different splits,
// HF takes the split listed first, SpmTokenizer the leftmost pair.
//
// Not read: the decoder (decoding is SpmTokenizer's: "▁" to space, <0xNN> to its byte, the
// prefix space dropped), added tokens' normalized/lstrip/rstrip flags (special tokens are found
// in the raw text, as llama.cpp does), and EOS appended by the post-processor.
#include <algorithm>
#include <cstdio>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "journey/errors.h"
#include "journey/formats/json_file.h"
#include "journey/text/spm_tokenizer.h"
#include "journey/text/tokenizer_loader.h"

namespace journey {

namespace {

using json = nlohmann::json;

const json kSpace = "\xe2\x96\x81";  // U+2581 "▁", SentencePiece's space

// A string or a JSON value as it appears in a message: quoted, escaped, on one line.
std::string shown(const json& j) { return json_excerpt(j, 60); }

// Byte offsets of the UTF-8 character boundaries inside s (s is valid UTF-8: it came from JSON).
std::vector<size_t> char_boundaries(std::string_view s) {
    std::vector<size_t> at;
    for (size_t i = 1; i < s.size(); ++i)
        if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) at.push_back(i);
    return at;
}

// Where the "▁" for spaces and the one before the text come from.
struct Spaces {
    bool prefix = false, start_only = false, unless_space = false, split = false;
};

Spaces read_spaces(const json& root, const std::string& file) {
    auto fail = [&](const std::string& problem) { throw ModelError(file + ": " + problem); };
    const json norm = root.value("normalizer", json());
    const json pre = root.value("pre_tokenizer", json());
    Spaces s;
    if (!norm.is_null() && !pre.is_null()) fail("both a normalizer and a pre_tokenizer: not supported with SentencePiece-style BPE");
    if (!norm.is_null()) {
        // LlamaConverter's: Sequence[Prepend("▁"), Replace(" ", "▁")]; without Prepend, no prefix.
        const bool seq = norm.is_object() && norm.value("type", json()) == "Sequence";
        const json steps = seq ? norm.value("normalizers", json()) : json::array({norm});
        if (!steps.is_array()) fail("normalizer Sequence has no \"normalizers\" array");
        bool replace = false;
        for (const json& n : steps) {
            const json type = n.is_object() ? n.value("type", json()) : json();
            if (type == "Prepend" && n.value("prepend", json()) == kSpace && !s.prefix) {
                s.prefix = true;
            } else if (type == "Replace" && n.value("pattern", json()) == json{{"String", " "}} &&
                       n.value("content", json()) == kSpace && !replace) {
                replace = true;
            } else {
                fail("normalizer " + shown(n) + " is not supported (only Prepend \"▁\" and Replace \" \" -> \"▁\")");
            }
        }
        if (!replace) fail("the normalizer does not replace spaces with \"▁\"");
        return s;
    }
    if (pre.is_null()) fail("neither a normalizer nor a pre_tokenizer replaces spaces with \"▁\"");
    if (!pre.is_object() || pre.value("type", json()) != "Metaspace")
        fail("pre_tokenizer " + shown(pre) + " is not supported with SentencePiece-style BPE (only Metaspace)");
    if (pre.value("replacement", json()) != kSpace) fail("Metaspace replacement " + shown(pre.value("replacement", json())) + " is not \"▁\"");
    // Newer files say prepend_scheme; older ones add_prefix_space (true meaning "always").
    json scheme = pre.value("prepend_scheme", json());
    if (scheme.is_null()) {
        const json add = pre.value("add_prefix_space", json(true));
        if (!add.is_boolean()) fail("Metaspace add_prefix_space is not a boolean");
        scheme = add.get<bool>() ? "always" : "never";
    }
    if (scheme != "always" && scheme != "first" && scheme != "never")
        fail("Metaspace prepend_scheme " + shown(scheme) + " is not always, first or never");
    s.prefix = scheme != "never";
    s.start_only = scheme == "first";
    s.unless_space = true;  // Metaspace prepends only to text that does not start with "▁"
    const json split = pre.value("split", json(true));  // true unless said otherwise
    if (!split.is_boolean()) fail("Metaspace split is not a boolean");
    s.split = split.get<bool>();
    return s;
}

// Refuse model options that make HF's BPE something SpmTokenizer is not.
void check_model_options(const json& model, const std::string& file) {
    auto fail = [&](const std::string& problem) { throw ModelError(file + ": " + problem + " is not supported"); };
    const json dropout = model.value("dropout", json());
    if (!dropout.is_null() && !(dropout.is_number() && dropout.get<double>() <= 0)) fail("model.dropout " + shown(dropout));
    for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
        const json v = model.value(key, json());
        if (!v.is_null() && v != "") fail(std::string("model.") + key + " " + shown(v));
    }
    if (model.value("ignore_merges", json(false)) != false) fail("model.ignore_merges true");
    for (const char* key : {"byte_fallback", "fuse_unk"})
        if (!model.value(key, json(false)).is_boolean()) throw ModelError(file + ": model." + key + " is not a boolean");
}

// A special token named in tokenizer_config.json: "<s>" or {"content": "<s>", ...}.
std::optional<std::string> config_token(const json& config, const char* key) {
    const json v = config.is_object() ? config.value(key, json()) : json();
    if (v.is_string()) return v.get<std::string>();
    if (v.is_object() && v.value("content", json()).is_string()) return v["content"].get<std::string>();
    return std::nullopt;
}

}  // namespace

std::unique_ptr<SpmTokenizer> SpmTokenizer::from_tokenizer_json(const json& root, const json& config,
                                                                const std::string& file) {
    auto fail = [&](const std::string& problem) { throw ModelError(file + ": " + problem); };
    if (!root.is_object() || !root.contains("model") || !root["model"].is_object()) fail("no \"model\" object");
    const json& model = root["model"];
    const json type = model.value("type", json("BPE"));
    if (type != "BPE") fail("model type " + shown(type) + " is not supported (only BPE)");
    if (!model.contains("vocab")) fail("model.vocab is missing");
    if (!model.contains("merges")) fail("model.merges is missing");
    check_model_options(model, file);
    const Spaces spaces = read_spaces(root, file);
    const bool byte_fallback = model.value("byte_fallback", false);

    // Every token: model.vocab's, then the added tokens (which may repeat a vocabulary entry).
    struct Entry {
        TokenId id;
        std::string text;
        TokenType type;
    };
    std::vector<Entry> entries;
    std::unordered_map<std::string, TokenId> vocab;  // model.vocab: what HF's BPE can merge into
    for (const auto& [text, id] : parse_vocab_json(model["vocab"], file)) {
        vocab.emplace(text, id);
        entries.push_back({id, std::string(text), TokenType::Normal});
    }
    std::vector<TokenId> byte_ids;
    if (byte_fallback) {
        // HF falls back to exactly these names, and only when a character's every byte has one.
        for (int b = 0; b < 256; ++b) {
            char name[8];
            std::snprintf(name, sizeof name, "<0x%02X>", b);
            auto it = vocab.find(name);
            if (it == vocab.end()) fail(std::string("model.byte_fallback is true but model.vocab has no ") + name);
            byte_ids.push_back(it->second);
        }
    }
    const json added = root.value("added_tokens", json::array());
    if (!added.is_array()) fail("added_tokens is not an array");
    for (const json& a : added) {
        if (!a.is_object() || !a.contains("id") || !a["id"].is_number_integer() || a["id"].get<int64_t>() < 0 ||
            a["id"].get<int64_t>() > INT32_MAX || !a.contains("content") || !a["content"].is_string())
            fail("an added token lacks an id in [0, 2^31) or a string \"content\": " + shown(a));
        const TokenId id = a["id"].get<TokenId>();
        const std::string& text = a["content"].get_ref<const std::string&>();
        if (auto it = vocab.find(text); it != vocab.end() && it->second != id)
            fail("added token " + shown(text) + " has id " + std::to_string(id) + " but model.vocab gives it " +
                 std::to_string(it->second));
        entries.push_back({id, text, a.value("special", json(false)) == true ? TokenType::Control : TokenType::UserDefined});
    }

    // Ids 0..n-1, each once (an added token may restate its vocabulary entry; its type wins).
    std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.id < b.id; });
    std::vector<std::string> tokens;
    std::vector<TokenType> types;
    for (const Entry& e : entries) {
        if (size_t(e.id) < tokens.size()) {
            if (tokens.back() != e.text)
                fail("tokens " + shown(tokens.back()) + " and " + shown(e.text) + " both have id " + std::to_string(e.id));
            types.back() = e.type;
            continue;
        }
        if (size_t(e.id) > tokens.size()) fail("no token has id " + std::to_string(tokens.size()));
        tokens.push_back(e.text);
        types.push_back(e.type);
    }
    if (tokens.empty()) fail("model.vocab is empty");
    for (TokenId id : byte_ids) types[size_t(id)] = TokenType::Byte;
    std::unordered_map<std::string_view, TokenId> id_of;
    for (size_t i = 0; i < tokens.size(); ++i)
        if (auto [it, fresh] = id_of.emplace(tokens[i], TokenId(i)); !fresh)
            fail("token " + shown(tokens[i]) + " has two ids, " + std::to_string(it->second) + " and " + std::to_string(i));
    auto lookup = [&](const std::string& text, const std::string& what) {
        auto it = id_of.find(text);
        if (it == id_of.end()) fail(what + " " + shown(text) + " is not a token");
        return it->second;
    };

    // Unknown, BOS and EOS; whether prompts start with BOS. tokenizer_config.json (as transformers
    // reads it) comes first, then the post-processor, then Llama's names.
    Options opt;
    const json unk_token = model.value("unk_token", json());
    if (!unk_token.is_null() && !unk_token.is_string()) fail("model.unk_token is not a string");
    opt.unk = lookup(unk_token.is_string() ? unk_token.get<std::string>() : "<unk>", "the unknown token");
    types[size_t(opt.unk)] = TokenType::Unknown;
    opt.fuse_unk = model.value("fuse_unk", false);

    const json post = root.value("post_processor", json());
    std::optional<std::string> template_bos;  // the special token a TemplateProcessing puts first
    if (!post.is_null()) {
        if (!post.is_object() || post.value("type", json()) != "TemplateProcessing")
            fail("post_processor " + shown(post.is_object() ? post.value("type", json()) : post) +
                 " is not supported (only TemplateProcessing)");
        const json single = post.value("single", json());
        if (!single.is_array()) fail("post_processor.single is not an array");
        if (!single.empty() && single[0].is_object() && single[0].contains("SpecialToken")) {
            const json name = single[0]["SpecialToken"].is_object() ? single[0]["SpecialToken"].value("id", json()) : json();
            if (!name.is_string()) fail("post_processor.single[0].SpecialToken has no string id");
            template_bos = name.get<std::string>();
        }
    }
    opt.bos = lookup(config_token(config, "bos_token").value_or(template_bos.value_or("<s>")), "the BOS token");
    opt.eos = lookup(config_token(config, "eos_token").value_or("</s>"), "the EOS token");
    opt.add_bos = template_bos.has_value();
    if (config.is_object() && config.contains("add_bos_token")) {
        if (!config["add_bos_token"].is_boolean()) fail("tokenizer_config.json's add_bos_token is not a boolean");
        opt.add_bos = config["add_bos_token"].get<bool>();
    }
    opt.add_space_prefix = spaces.prefix;
    opt.prefix_text_start_only = spaces.start_only;
    opt.prefix_unless_space = spaces.unless_space;
    opt.split_words = spaces.split;

    // Scores from merge ranks, checking that the merges are shaped as the top of this file says.
    const std::vector<BpeMerge> merges = parse_merges_json(model["merges"], file);
    if (merges.size() > (size_t(1) << 24)) fail("more than 2^24 merges (their ranks would not be exact float scores)");
    auto mergeable = [&](TokenId id) { return types[size_t(id)] == TokenType::Normal || types[size_t(id)] == TokenType::UserDefined; };
    auto merge_piece = [&](size_t rank, const std::string& text) {
        auto it = vocab.find(text);
        if (it == vocab.end()) fail("merge " + std::to_string(rank) + " names " + shown(text) + ", which is not in model.vocab");
        if (!mergeable(it->second))
            fail("merge " + std::to_string(rank) + " involves the byte or special token " + shown(text));
        return it->second;
    };
    std::vector<float> scores(tokens.size(), -float(merges.size()));  // below every merge's
    std::vector<int64_t> last_rank(tokens.size(), -1);                 // the latest merge making each piece
    std::unordered_set<uint64_t> listed;                               // (left id, right id)
    auto pair_key = [](TokenId l, TokenId r) { return uint64_t(uint32_t(l)) << 32 | uint32_t(r); };
    for (size_t rank = 0; rank < merges.size(); ++rank) {
        const std::string left(merges[rank].left), right(merges[rank].right);
        const TokenId l = merge_piece(rank, left), r = merge_piece(rank, right);
        const TokenId p = merge_piece(rank, left + right);
        int64_t& last = last_rank[size_t(p)];
        if (last < 0) {
            scores[size_t(p)] = -float(rank);
        } else if (last != int64_t(rank) - 1) {
            fail("the merges making " + shown(tokens[size_t(p)]) + " are not consecutive (" + std::to_string(last) +
                 " and " + std::to_string(rank) + "), so one score per piece cannot order them");
        }
        last = int64_t(rank);
        listed.insert(pair_key(l, r));
    }
    // A symbol while merging is a character or a merged piece.
    auto is_symbol = [&](std::string_view text) -> std::optional<TokenId> {
        auto it = vocab.find(std::string(text));
        if (it == vocab.end() || (last_rank[size_t(it->second)] < 0 && !char_boundaries(text).empty())) return std::nullopt;
        return it->second;
    };
    for (size_t i = 0; i < tokens.size(); ++i) {
        if (last_rank[i] < 0) {
            opt.never_merged.push_back(TokenId(i));
            continue;
        }
        const std::string_view piece = tokens[i];
        size_t from = 0;
        for (size_t at : char_boundaries(piece)) {
            const std::string_view ch = piece.substr(from, at - from);
            if (auto c = vocab.find(std::string(ch)); c == vocab.end() || !mergeable(c->second))
                fail("merged piece " + shown(tokens[i]) + " has the character " + shown(std::string(ch)) + ", which is not a piece");
            from = at;
            const auto l = is_symbol(piece.substr(0, at)), r = is_symbol(piece.substr(at));
            if (l && r && !listed.count(pair_key(*l, *r)))
                fail("merges make " + shown(tokens[i]) + " but do not list " + shown(std::string(piece.substr(0, at)) + " " +
                     std::string(piece.substr(at))) + " (not SentencePiece-style merges)");
        }
        const std::string_view last_ch = piece.substr(from);
        if (auto c = vocab.find(std::string(last_ch)); c == vocab.end() || !mergeable(c->second))
            fail("merged piece " + shown(tokens[i]) + " has the character " + shown(std::string(last_ch)) + ", which is not a piece");
    }
    return std::make_unique<SpmTokenizer>(std::move(tokens), std::move(scores), std::move(types), opt, file);
}

}  // namespace journey
