// Which tokenizer a GGUF file describes: tokenizer.ggml.model names the algorithm. "llama" is
// SentencePiece (SpmTokenizer); "gpt2" is byte-level BPE, whose pre-tokenizer llama.cpp chooses
// by tokenizer.ggml.pre: here that choice becomes a tokenizer.json pipeline (a Split per regex
// of llama.cpp's set for the value, then ByteLevel) run by HfTokenizer.
#include <string_view>

#include "journey/errors.h"
#include "journey/text/hf_tokenizer.h"
#include "journey/text/spm_tokenizer.h"
#include "journey/text/split_scanners.h"

namespace journey {

namespace {

using json = nlohmann::json;

// llama.cpp's regex set for a tokenizer.ggml.pre value (llama-vocab.cpp, llm_tokenizer_bpe),
// each applied to the pieces of the one before. Where llama.cpp adapted a tokenizer.json pattern
// to its own engine it keeps the original in a comment; that original is used here (it is what
// Oniguruma and Hugging Face run).
struct PreTokenizerSet {
    std::vector<std::string_view> names;
    std::vector<std::string_view> regexes;
    bool ignore_merges = false;
    bool add_bos = false;  // llama.cpp's default when the file does not say
};

const std::string_view kGpt2NoTail = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S))";

const std::vector<PreTokenizerSet>& pre_tokenizer_sets() {
    static const std::vector<PreTokenizerSet> sets = {
        {{"default"},
         {R"([\p{P}\$\+<=>\^~\|]+)", kGpt2NoTail, R"(\p{N}+)", R"([0-9][0-9][0-9])"}},
        {{"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2", "dbrx", "smaug-bpe"},
         {kLlama3Pattern}, true, true},
        {{"qwen2", "stablelm2", "hunyuan"}, {kQwen2Pattern}},
        {{"starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b"}, {R"(\p{N})", kGpt2NoTail}},
        {{"gpt-2", "phi-2", "jina-es", "jina-de", "jina-v2-es", "jina-v2-de", "jina-v2-code", "mpt", "olmo", "jais",
          "trillion", "granite-docling"},
         {kGpt2NoTail}},
        {{"falcon"}, {R"([\p{P}\$\+<=>\^~\|`]+)", kGpt2NoTail, R"([0-9][0-9][0-9])"}},
        {{"deepseek-coder"}, {"[\r\n]", R"(\s?\p{L}+)", R"(\s?\p{P}+)", "[\u4e00-\u9fa5\u0800-\u4e00\uac00-\ud7ff]+", R"(\p{N})"}},
        {{"tekken"},
         {R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)"},
         true, true},
    };
    return sets;
}

const PreTokenizerSet& pre_tokenizer_set(const std::string& pre, const std::string& file) {
    for (const PreTokenizerSet& s : pre_tokenizer_sets())
        for (std::string_view name : s.names)
            if (name == pre) return s;
    throw ModelError(file + ": tokenizer.ggml.pre \"" + pre + "\" is not a pre-tokenizer journey knows");
}

// End-of-generation texts that llama.cpp makes control tokens whatever their stored type ("its
// type will be overridden"), so that they are recognised in text as specials.
bool is_end_of_generation_text(std::string_view t) {
    for (std::string_view e : {"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<EOT>", "_<EOT>",
                               "<|eom_id|>", "</s>", "<|end_of_text|>", "<end_of_utterance>",
                               "<\xef\xbd\x9c" "end\xe2\x96\x81of\xe2\x96\x81sentence\xef\xbd\x9c>"})
        if (t == e) return true;
    return false;
}

// GPT-2 byte-level BPE from tokenizer.ggml.tokens (byte-to-unicode form, index = id),
// tokenizer.ggml.merges ("left right", index = rank) and the token types, as a tokenizer.json.
std::unique_ptr<Tokenizer> gpt2_from_gguf(const ModelFile& mf) {
    const std::string file = mf.path.string();
    auto find = [&](const char* key) -> const json* {
        auto it = mf.metadata.find(key);
        return it == mf.metadata.end() ? nullptr : &*it;
    };
    auto array = [&](const char* key) -> const json& {
        const json* v = find(key);
        if (!v || !v->is_array()) throw ModelError(file + ": tokenizer metadata '" + key + "' is missing or not an array");
        return *v;
    };
    const json& tokens = array("tokenizer.ggml.tokens");
    const json& merges = array("tokenizer.ggml.merges");
    const json* types = find("tokenizer.ggml.token_type");
    if (types && (!types->is_array() || types->size() != tokens.size()))
        throw ModelError(file + ": tokenizer metadata 'tokenizer.ggml.token_type' does not have one type per token");
    // Without tokenizer.ggml.pre llama.cpp warns and uses "default".
    const json* pre_value = find("tokenizer.ggml.pre");
    if (pre_value && !pre_value->is_string()) throw ModelError(file + ": tokenizer.ggml.pre is not a string");
    const PreTokenizerSet& pre = pre_tokenizer_set(pre_value ? pre_value->get<std::string>() : "default", file);

    json vocab = json::object(), added = json::array();
    for (size_t i = 0; i < tokens.size(); ++i) {
        if (!tokens[i].is_string()) throw ModelError(file + ": tokenizer.ggml.tokens holds a non-string");
        const std::string& text = tokens[i].get_ref<const std::string&>();
        auto type = types && (*types)[i].is_number_integer() ? TokenType((*types)[i].get<int32_t>()) : TokenType::Normal;
        if (is_end_of_generation_text(text)) type = TokenType::Control;
        if (!vocab.contains(text)) vocab[text] = i;
        // Control tokens are recognised in text when special tokens are parsed; user-defined
        // ones always (llama.cpp's tokenizer_st_partition).
        if (type == TokenType::Control || type == TokenType::UserDefined)
            added.push_back({{"id", i}, {"content", text}, {"special", type == TokenType::Control}, {"normalized", false}});
    }
    json splits = json::array();
    for (std::string_view regex : pre.regexes)
        splits.push_back({{"type", "Split"}, {"pattern", {{"Regex", regex}}}, {"behavior", "Isolated"}, {"invert", false}});
    splits.push_back({{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}});
    const json root = {
        {"added_tokens", added},
        {"normalizer", nullptr},
        {"pre_tokenizer", {{"type", "Sequence"}, {"pretokenizers", splits}}},
        {"post_processor", nullptr},
        {"decoder", {{"type", "ByteLevel"}}},
        {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", merges}, {"ignore_merges", pre.ignore_merges}}},
    };
    // BOS/EOS and whether a text gets them, as tokenizer_config.json would say.
    json config = json::object();
    auto token_name = [&](const char* key) -> std::optional<std::string> {
        const json* v = find(key);
        if (!v) return std::nullopt;
        if (!v->is_number_integer() || v->get<int64_t>() < 0 || v->get<uint64_t>() >= tokens.size())
            throw ModelError(file + ": " + key + " is not a token id");
        return tokens[v->get<size_t>()].get<std::string>();
    };
    auto flag = [&](const char* key, bool fallback) {
        const json* v = find(key);
        if (!v) return fallback;
        if (!v->is_boolean()) throw ModelError(file + ": " + key + " is not a bool");
        return v->get<bool>();
    };
    if (auto bos = token_name("tokenizer.ggml.bos_token_id")) config["bos_token"] = *bos;
    if (auto eos = token_name("tokenizer.ggml.eos_token_id")) config["eos_token"] = *eos;
    const bool add_bos = flag("tokenizer.ggml.add_bos_token", pre.add_bos) && config.contains("bos_token");
    const bool add_eos = flag("tokenizer.ggml.add_eos_token", false) && config.contains("eos_token");
    config["add_bos_token"] = add_bos;
    config["add_eos_token"] = add_eos;
    return std::make_unique<HfTokenizer>(root, config, file + " (tokenizer.ggml.*)");
}

}  // namespace

std::unique_ptr<Tokenizer> load_tokenizer_from_gguf(const ModelFile& mf) {
    auto it = mf.metadata.find("tokenizer.ggml.model");
    if (it == mf.metadata.end() || !it->is_string())
        throw ModelError(mf.path.string() + ": no tokenizer in the file (tokenizer.ggml.model is missing)");
    const std::string model = it->get<std::string>();
    if (model == "llama") return SpmTokenizer::from_gguf(mf);
    if (model == "gpt2") return gpt2_from_gguf(mf);
    throw ModelError(mf.path.string() + ": unsupported tokenizer model '" + excerpt(model, 40) + "' (journey knows llama, gpt2)");
}

}  // namespace journey
