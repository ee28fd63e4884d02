// Which tokenizer a GGUF file describes: tokenizer.ggml.model names the algorithm.
#include "journey/text/bpe_tokenizer.h"
#include "journey/errors.h"
#include "journey/text/spm_tokenizer.h"

namespace journey {

namespace {

// GPT-2 byte-level BPE from tokenizer.ggml.tokens (byte-to-unicode form, index = id),
// tokenizer.ggml.merges ("left right", index = rank) and token types: control and
// user-defined tokens (e.g. <|endoftext|>) are matched in the text before BPE.
std::unique_ptr<Tokenizer> gpt2_from_gguf(const ModelFile& mf) {
    const std::string file = mf.path.string();
    auto array = [&](const char* key) -> const nlohmann::json& {
        auto it = mf.metadata.find(key);
        if (it == mf.metadata.end() || !it->is_array())
            throw ModelError(file + ": tokenizer metadata '" + key + "' is missing or not an array");
        return *it;
    };
    const nlohmann::json& tokens = array("tokenizer.ggml.tokens");
    const nlohmann::json& merges_json = array("tokenizer.ggml.merges");
    const nlohmann::json* types = nullptr;
    if (mf.metadata.contains("tokenizer.ggml.token_type")) {
        types = &array("tokenizer.ggml.token_type");
        if (types->size() != tokens.size())
            throw ModelError(file + ": tokenizer metadata 'tokenizer.ggml.token_type' does not have one type per token");
    }

    BpeVocab vocab;  // views into the metadata's strings
    std::vector<AddedToken> added;
    vocab.reserve(tokens.size());
    for (size_t i = 0; i < tokens.size(); ++i) {
        if (!tokens[i].is_string()) throw ModelError(file + ": tokenizer.ggml.tokens holds a non-string");
        const TokenId id = TokenId(i);
        vocab.emplace_back(tokens[i].get_ref<const std::string&>(), id);
        const auto type = types && (*types)[i].is_number_integer() ? TokenType((*types)[i].get<int32_t>())
                                                                   : TokenType::Normal;
        if (type == TokenType::Control || type == TokenType::UserDefined)
            added.push_back({id, tokens[i].get<std::string>(), type == TokenType::Control});
    }
    std::vector<BpeMerge> merges;
    merges.reserve(merges_json.size());
    for (size_t i = 0; i < merges_json.size(); ++i) {
        const nlohmann::json& m = merges_json[i];
        const size_t space = m.is_string() ? m.get_ref<const std::string&>().find(' ') : std::string::npos;
        if (space == std::string::npos)
            throw ModelError(file + ": tokenizer.ggml.merges entry " + std::to_string(i) + " is not \"left right\"");
        const std::string& s = m.get_ref<const std::string&>();
        merges.push_back({std::string_view(s).substr(0, space), std::string_view(s).substr(space + 1), 0});
    }
    const std::string source = file + " (tokenizer.ggml.*)";
    return std::make_unique<BpeTokenizer>(vocab, merges, added, BpeSources{source, source});
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
