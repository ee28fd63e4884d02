// Building an SpmTokenizer from two of the places Llama vocabularies are stored: GGUF metadata
// (tokenizer.ggml.*) and llama2.c's tokenizer.bin. (Hugging Face's tokenizer.json, the third,
// is HfTokenizer's.)
#include <algorithm>
#include <cctype>
#include <cstring>

#include "journey/errors.h"
#include "journey/formats/mapped_file.h"
#include "journey/text/spm_tokenizer.h"

namespace journey {

namespace {

// Typed access to GGUF tokenizer metadata, with errors naming the file and key.
class GgufKeys {
public:
    explicit GgufKeys(const ModelFile& mf) : mf_(mf) {}

    [[noreturn]] void fail(const std::string& key, const std::string& problem) const {
        throw ModelError(mf_.path.string() + ": tokenizer metadata '" + key + "' " + problem);
    }

    const nlohmann::json* find(const std::string& key) const {
        auto it = mf_.metadata.find(key);
        return it == mf_.metadata.end() ? nullptr : &*it;
    }

    const nlohmann::json& array(const std::string& key) const {
        const nlohmann::json* v = find(key);
        if (!v) fail(key, "is missing");
        if (!v->is_array()) fail(key, "is not an array");
        return *v;
    }

    TokenId id(const std::string& key, TokenId fallback) const {
        const nlohmann::json* v = find(key);
        if (!v) return fallback;
        if (!v->is_number_integer() || v->get<int64_t>() < 0 || v->get<int64_t>() > INT32_MAX)
            fail(key, "is not a token id");
        return v->get<TokenId>();
    }

    bool flag(const std::string& key, bool fallback) const {
        const nlohmann::json* v = find(key);
        if (!v) return fallback;
        if (!v->is_boolean()) fail(key, "is not a bool");
        return v->get<bool>();
    }

private:
    const ModelFile& mf_;
};

}  // namespace

std::unique_ptr<SpmTokenizer> SpmTokenizer::from_gguf(const ModelFile& mf) {
    GgufKeys keys(mf);
    const nlohmann::json& tokens_json = keys.array("tokenizer.ggml.tokens");
    const size_t n = tokens_json.size();

    std::vector<std::string> tokens;
    tokens.reserve(n);
    for (const auto& t : tokens_json) {
        if (!t.is_string()) keys.fail("tokenizer.ggml.tokens", "holds a non-string");
        tokens.push_back(t.get<std::string>());
    }
    std::vector<float> scores(n, 0.0f);
    if (keys.find("tokenizer.ggml.scores")) {
        const nlohmann::json& s = keys.array("tokenizer.ggml.scores");
        if (s.size() != n) keys.fail("tokenizer.ggml.scores", "does not have one score per token");
        for (size_t i = 0; i < n; ++i) {
            if (!s[i].is_number()) keys.fail("tokenizer.ggml.scores", "holds a non-number");
            scores[i] = s[i].get<float>();
        }
    }
    std::vector<TokenType> types(n, TokenType::Normal);
    if (keys.find("tokenizer.ggml.token_type")) {
        const nlohmann::json& t = keys.array("tokenizer.ggml.token_type");
        if (t.size() != n) keys.fail("tokenizer.ggml.token_type", "does not have one type per token");
        for (size_t i = 0; i < n; ++i) {
            if (!t[i].is_number_integer() || t[i].get<int64_t>() < 0 || t[i].get<int64_t>() > 6)
                keys.fail("tokenizer.ggml.token_type", "holds an unknown token type");
            types[i] = TokenType(t[i].get<int32_t>());
        }
    }
    Options opt;
    opt.bos = keys.id("tokenizer.ggml.bos_token_id", 1);
    opt.eos = keys.id("tokenizer.ggml.eos_token_id", 2);
    opt.unk = keys.id("tokenizer.ggml.unknown_token_id", 0);
    opt.add_bos = keys.flag("tokenizer.ggml.add_bos_token", true);
    opt.add_eos = keys.flag("tokenizer.ggml.add_eos_token", false);
    opt.add_space_prefix = keys.flag("tokenizer.ggml.add_space_prefix", true);
    // llama.cpp's per-model attributes, by general.name: Phi-3's special tokens drop the white
    // space after them, but for <unk>, <s> and <|endoftext|>.
    std::string name;
    if (const nlohmann::json* v = keys.find("general.name"); v && v->is_string()) name = v->get<std::string>();
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    if (name.find("phi-3") != std::string::npos || name.find("phi3") != std::string::npos) {
        for (size_t i = 0; i < n; ++i) {
            const bool special = types[i] == TokenType::Control || types[i] == TokenType::UserDefined ||
                                 types[i] == TokenType::Unknown || llama_cpp_forces_control(tokens[i]);
            const bool kept = tokens[i] == "<unk>" || tokens[i] == "<s>" || tokens[i] == "<|endoftext|>";
            if ((special || tokens[i] == "</s>") && !kept) opt.rstrip.push_back(TokenId(i));
        }
    }
    return std::make_unique<SpmTokenizer>(std::move(tokens), std::move(scores), std::move(types), opt,
                                          mf.path.string());
}

std::unique_ptr<SpmTokenizer> SpmTokenizer::from_llama2c(const std::filesystem::path& path,
                                                         std::optional<int32_t> vocab_size) {
    MappedFile file(path);
    const auto* p = reinterpret_cast<const unsigned char*>(file.data());
    const size_t size = file.size();
    auto bad = [&](const std::string& problem) {
        throw ModelError(path.string() + ": not a usable llama2.c tokenizer: " + problem);
    };
    size_t pos = 0;
    auto read_i32 = [&](const char* what) {
        if (size - pos < 4) bad(std::string("truncated ") + what + " at byte " + std::to_string(pos));
        int32_t v;
        std::memcpy(&v, p + pos, 4);
        pos += 4;
        return v;
    };
    auto read_f32 = [&](const char* what) {
        if (size - pos < 4) bad(std::string("truncated ") + what + " at byte " + std::to_string(pos));
        float v;
        std::memcpy(&v, p + pos, 4);
        pos += 4;
        return v;
    };
    const int32_t max_len = read_i32("max_token_length");
    if (max_len <= 0) bad("max_token_length " + std::to_string(max_len) + " is not positive");
    if (vocab_size && *vocab_size <= 0) bad("vocab_size " + std::to_string(*vocab_size) + " is not positive");

    std::vector<std::string> tokens;
    std::vector<float> scores;
    while (vocab_size ? tokens.size() < size_t(*vocab_size) : pos < size) {
        // A whole tokenizer for a smaller vocabulary (tok512.bin beside a 32000-token model).
        if (pos == size)
            bad("it has " + std::to_string(tokens.size()) + " tokens, the model " + std::to_string(*vocab_size) +
                " (pass the tokenizer.bin made for this model)");
        const float score = read_f32("token score");
        const int32_t len = read_i32("token length");
        if (len < 0 || len > max_len || size_t(len) > size - pos)
            bad("token " + std::to_string(tokens.size()) + " has length " + std::to_string(len) +
                " (max_token_length " + std::to_string(max_len) + ", " + std::to_string(size - pos) + " bytes left)");
        std::string text(reinterpret_cast<const char*>(p + pos), size_t(len));
        pos += size_t(len);
        tokens.push_back(std::move(text));
        scores.push_back(score);
    }
    if (tokens.size() < 259) bad("fewer than 259 tokens (<unk>, <s>, </s> and 256 byte tokens)");

    // Fixed layout: 0 <unk>, 1 <s>, 2 </s>, 3..258 <0x00>..<0xFF>; the pieces use ' ' where
    // SentencePiece uses "▁", so normalise them.
    std::vector<TokenType> types(tokens.size(), TokenType::Normal);
    types[0] = TokenType::Unknown;
    types[1] = types[2] = TokenType::Control;
    for (size_t i = 3; i < 259; ++i) types[i] = TokenType::Byte;
    for (size_t i = 259; i < tokens.size(); ++i) {
        std::string& t = tokens[i];
        for (size_t k = t.find(' '); k != std::string::npos; k = t.find(' ', k + 3)) t.replace(k, 1, "\xe2\x96\x81");
    }
    return std::make_unique<SpmTokenizer>(std::move(tokens), std::move(scores), std::move(types), Options{},
                                          path.string());
}

}  // namespace journey
