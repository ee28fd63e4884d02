// Reading BPE vocabularies and merges (bpe_merges.h).
#include "journey/text/bpe_merges.h"

#include <algorithm>
#include <climits>

#include "journey/errors.h"
#include "journey/formats/json_file.h"

namespace journey {

using json = nlohmann::json;

BpeVocab parse_vocab_json(const json& j, const std::string& file) {
    if (!j.is_object()) throw ModelError(file + ": the vocabulary is not a JSON object of token -> id");
    BpeVocab vocab;
    vocab.reserve(j.size());
    for (const auto& [token, id] : j.items()) {
        if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > INT32_MAX)
            throw ModelError(file + ": token \"" + excerpt(token, 40) + "\" has id " + json_excerpt(id, 40) + ", not an integer in [0, 2^31)");
        vocab.emplace_back(token, id.get<TokenId>());
    }
    return vocab;
}

// "a b" strings (older files) or ["a", "b"] pairs (newer files).
std::vector<BpeMerge> parse_merges_json(const json& j, const std::string& file) {
    if (!j.is_array()) throw ModelError(file + ": model.merges is not an array");
    std::vector<BpeMerge> merges;
    merges.reserve(j.size());
    for (size_t i = 0; i < j.size(); ++i) {
        const json& m = j[i];
        if (m.is_string()) {
            const std::string_view s = m.get_ref<const std::string&>();
            size_t space = s.find(' ');
            if (space == std::string::npos || s.find(' ', space + 1) != std::string::npos)
                throw ModelError(file + ": merge " + std::to_string(i) + " \"" + excerpt(s, 40) +
                                 "\" is not two tokens separated by one space");
            merges.push_back({s.substr(0, space), s.substr(space + 1)});
        } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
            merges.push_back({m[0].get_ref<const std::string&>(), m[1].get_ref<const std::string&>()});
        } else {
            throw ModelError(file + ": merge " + std::to_string(i) + " is neither \"a b\" nor [\"a\", \"b\"]: " + json_excerpt(m, 40));
        }
    }
    return merges;
}

std::vector<BpeMerge> parse_merges_txt(std::string_view text, const std::string& file) {
    std::vector<BpeMerge> merges;
    merges.reserve(static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) + 1);  // a line each
    int line_no = 0;
    // Lines are short (GPT-2's are 9 bytes on average): std::find, inlined, rather than memchr.
    for (auto pos = text.begin(); pos < text.end();) {
        const auto nl = std::find(pos, text.end(), '\n');
        std::string_view line(pos, nl);
        pos = nl == text.end() ? nl : nl + 1;
        ++line_no;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.starts_with("#version")) continue;
        const auto space = std::find(line.begin(), line.end(), ' ');
        if (space == line.end() || std::find(space + 1, line.end(), ' ') != line.end())
            throw ModelError(file + ":" + std::to_string(line_no) + ": expected two tokens separated by one space, got \"" +
                             excerpt(line, 40) + "\"");
        merges.push_back({std::string_view(line.begin(), space), std::string_view(space + 1, line.end()), line_no});
    }
    return merges;
}

}  // namespace journey
