#include "journey/text/tokenizer_loader.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <filesystem>
#include <iterator>
#include <system_error>

#include <nlohmann/json.hpp>

#include "journey/errors.h"
#include "journey/formats/gguf_reader.h"
#include "journey/formats/json_file.h"
#include "journey/formats/mapped_file.h"
#include "journey/text/hf/tokenizer.h"
#include "journey/text/spm_tokenizer.h"
#include "journey/text/hf/tokenizer_json_reader.h"
#include "journey/text/vocab_json.h"

namespace journey {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

std::string_view text_of(const MappedFile& file) {
    return {reinterpret_cast<const char*>(file.data()), file.size()};
}

json parse_json_file(const std::string& path) {
    return read_json_file(path);
}

// We implement GPT-2's pre-tokenizer only, and no normalizer; refuse files that ask for another,
// rather than silently giving other ids.
void check_pre_tokenizer(const json& root, const std::string& file) {
    if (auto n = root.find("normalizer"); n != root.end() && !n->is_null())
        throw ModelError(file + ": normalizer " + json_excerpt(*n) + " is not supported with a byte-level BPE");
    auto it = root.find("pre_tokenizer");
    if (it == root.end() || it->is_null()) return;
    const json& p = *it;
    std::string type = p.is_object() && p.contains("type") && p["type"].is_string() ? p["type"].get<std::string>() : "";
    if (type != "ByteLevel")
        throw ModelError(file + ": pre_tokenizer \"" + excerpt(type, 40) + "\" is not supported (only GPT-2's ByteLevel)");
    if (json_value(p, "add_prefix_space", false, file + ": pre_tokenizer"))
        throw ModelError(file + ": ByteLevel add_prefix_space=true is not supported");
    if (!json_value(p, "use_regex", true, file + ": pre_tokenizer"))
        throw ModelError(file + ": ByteLevel use_regex=false is not supported");
}

// The model object of a tokenizer.json, which must be BPE.
const json& bpe_model(const json& root, const std::string& file) {
    if (!root.is_object() || !root.contains("model") || !root["model"].is_object())
        throw ModelError(file + ": no \"model\" object");
    const json& model = root["model"];
    const json type = model.value("type", json("BPE"));
    if (type != "BPE") throw ModelError(file + ": model type " + json_excerpt(type) + " is not supported (only BPE)");
    return model;
}

// tokenizer_config.json beside a tokenizer.json, or null when there is none.
json config_beside(const std::string& tokenizer_json) {
    const fs::path config = fs::path(tokenizer_json).parent_path() / "tokenizer_config.json";
    if (!fs::exists(config)) return json();
    json j = parse_json_file(config.string());
    if (!j.is_object()) throw ModelError(config.string() + ": not a JSON object");
    return j;
}

// GPT-2's own form: no normalizer, ByteLevel(add_prefix_space false, use_regex) alone, a plain BPE
// model, added tokens without strip or single-word flags, no template. BpeTokenizer gives exactly
// the pipeline's ids for it, faster; everything else goes to HfTokenizer.
bool is_gpt2_form(const json& root) {
    auto null_or = [&](const char* key, const char* type) {
        const json v = root.value(key, json());
        return v.is_null() || (v.is_object() && v.value("type", json()) == type);
    };
    if (!root.value("normalizer", json()).is_null() || !null_or("post_processor", "ByteLevel") || !null_or("decoder", "ByteLevel"))
        return false;
    const json pre = root.value("pre_tokenizer", json());
    if (!pre.is_object() || pre.value("type", json()) != "ByteLevel" || pre.value("add_prefix_space", json(true)) != false ||
        pre.value("use_regex", json(true)) != true)
        return false;
    const json model = root.value("model", json());
    if (!model.is_object() || model.value("type", json("BPE")) != "BPE") return false;
    for (const char* key : {"ignore_merges", "byte_fallback", "fuse_unk"})
        if (model.value(key, json(false)) != false) return false;
    for (const char* key : {"unk_token", "dropout"})
        if (!model.value(key, json()).is_null()) return false;
    for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"})
        if (const json v = model.value(key, json()); !v.is_null() && v != "") return false;
    for (const json& a : root.value("added_tokens", json::array()))
        for (const char* key : {"lstrip", "rstrip", "single_word"})
            if (a.is_object() && a.value(key, json(false)) != false) return false;
    return true;
}

std::unique_ptr<BpeTokenizer> bpe_from_tokenizer_json(const json& root, const std::string& file) {
    const json& model = bpe_model(root, file);
    if (!model.contains("vocab")) throw ModelError(file + ": model.vocab is missing");
    if (!model.contains("merges")) throw ModelError(file + ": model.merges is missing");
    check_pre_tokenizer(root, file);

    auto vocab = parse_vocab_json(model["vocab"], file);
    auto merges = parse_merges_json(model["merges"], file);
    std::vector<AddedToken> added;
    if (root.contains("added_tokens") && root["added_tokens"].is_array()) {
        for (const json& a : root["added_tokens"]) {
            if (!a.is_object() || !a.contains("id") || !a["id"].is_number_integer() || !a.contains("content") ||
                !a["content"].is_string())
                throw ModelError(file + ": an added token lacks an integer \"id\" or a string \"content\": " + json_excerpt(a));
            added.push_back({a["id"].get<TokenId>(), a["content"].get<std::string>(),
                             json_value(a, "special", false, file + ": added token " + json_excerpt(a["content"], 40))});
        }
    }
    return std::make_unique<BpeTokenizer>(vocab, merges, added, BpeSources{file, file});
}

}  // namespace

std::unique_ptr<BpeTokenizer> load_bpe_from_files(const std::string& vocab_json, const std::string& merges_txt) {
    // Both files are read in place, and the tokens and merges are views into them.
    const MappedFile vocab_file(vocab_json);
    const VocabJson vocab(text_of(vocab_file), vocab_json);
    const MappedFile merges_file(merges_txt);
    const std::vector<BpeMerge> merges = parse_merges_txt(text_of(merges_file), merges_txt);
    // GPT-2's one special token, as Hugging Face's GPT2Tokenizer registers it.
    std::vector<AddedToken> added;
    for (const auto& [token, id] : vocab.tokens())
        if (token == "<|endoftext|>") added.push_back({id, std::string(token), true});
    return std::make_unique<BpeTokenizer>(vocab.tokens(), merges, added, BpeSources{vocab_json, merges_txt});
}

std::unique_ptr<BpeTokenizer> load_bpe_from_tokenizer_json(const std::string& tokenizer_json) {
    return bpe_from_tokenizer_json(parse_json_file(tokenizer_json), tokenizer_json);
}

std::unique_ptr<Tokenizer> load_tokenizer_json(const std::string& tokenizer_json) {
    const std::string& file = tokenizer_json;
    const TokenizerJson parsed = read_tokenizer_json(file);
    // GPT-2's own form reads its vocabulary from the tree (a small file: read it again whole).
    if (is_gpt2_form(parsed.root)) return bpe_from_tokenizer_json(parsed.tables.read ? parse_json_file(file) : parsed.root, file);
    return std::make_unique<HfTokenizer>(parsed.root, config_beside(file), file, &parsed.tables);
}

std::unique_ptr<Tokenizer> load_tokenizer_dir(const std::string& dir) {
    if (!fs::is_directory(dir)) throw ModelError(dir + ": not a directory");
    return open_tokenizer(TokenizerSpec::at(dir));
}

bool tokenizer_only(const fs::path& p) {
    std::error_code ec;
    if (fs::is_directory(p, ec))
        return !fs::exists(p / "config.json", ec) && (fs::exists(p / "tokenizer.json", ec) || fs::exists(p / "vocab.json", ec));
    return p.extension() == ".gguf" && fs::is_regular_file(p, ec) && read_gguf(p).tensors.empty();
}

std::unique_ptr<Tokenizer> open_tokenizer(const TokenizerSpec& spec) {
    if (spec.gguf) return load_tokenizer_from_gguf(*spec.gguf);
    const fs::path& p = spec.path;
    if (!spec.merges.empty()) return load_bpe_from_files(p.string(), spec.merges.string());
    if (spec.json) return load_tokenizer_json(p.string());
    if (fs::is_directory(p)) {
        if (fs::exists(p / "tokenizer.json")) return load_tokenizer_json((p / "tokenizer.json").string());
        if (fs::exists(p / "vocab.json") && fs::exists(p / "merges.txt"))
            return load_bpe_from_files((p / "vocab.json").string(), (p / "merges.txt").string());
        throw ModelError(p.string() + ": no tokenizer (expected tokenizer.json, or vocab.json and merges.txt)");
    }
    if (!fs::exists(p)) throw ModelError(p.string() + ": no such tokenizer file");
    if (p.extension() == ".gguf") return load_tokenizer_from_gguf(read_gguf(p));
    if (p.extension() == ".json") return load_tokenizer_json(p.string());
    return SpmTokenizer::from_llama2c(p, spec.n_vocab);
}

}  // namespace journey
