// The tokenizer keys of a converted GGUF, as llama.cpp's convert_hf_to_gguf.py writes them:
// tokenizer.ggml.* and tokenizer.chat_template from tokenizer.json / tokenizer.model /
// tokenizer_config.json / config.json (its get_vocab_base, _create_vocab_sentencepiece and
// gguf-py's SpecialVocab, re-implemented).
#include "journey/convert/convert_vocab.h"

#include <charconv>
#include <cstring>
#include <cctype>
#include <map>
#include <set>

#include "journey/chat/chat_files.h"
#include "journey/errors.h"
#include "journey/formats/json_file.h"
#include "journey/formats/mapped_file.h"
#include "journey/text/gguf_pre.h"

namespace journey {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

enum TokType : int32_t { NORMAL = 1, UNKNOWN = 2, CONTROL = 3, USER_DEFINED = 4, UNUSED = 5, BYTE = 6 };

bool looks_special(const std::string& t) {
    auto starts = [&](std::string_view p) { return t.rfind(p, 0) == 0; };
    auto ends = [&](std::string_view s) { return t.size() >= s.size() && t.compare(t.size() - s.size(), s.size(), s) == 0; };
    return t == "<pad>" || t == "<mask>" || t == "<2mass>" || t == "[@BOS@]" || (starts("<|") && ends("|>")) ||
           (starts("<\xef\xbd\x9c") && ends("\xef\xbd\x9c>")) || (starts("<unused") && ends(">"));
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
    for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
    return s;
}

std::optional<json> read_if(const fs::path& p) {
    if (!fs::is_regular_file(p)) return std::nullopt;
    return read_json_file(p);
}

// gguf-py's SpecialVocab: special token ids, add_*_token flags and the chat template.
void special_vocab(GgufWriter& w, const fs::path& dir, const std::optional<json>& tok_json, bool load_merges,
                   std::optional<int64_t> n_vocab) {
    std::vector<std::string> types = {"bos", "eos", "unk", "sep", "pad", "cls", "mask"};
    std::vector<std::pair<std::string, int64_t>> ids;      // in the order found
    std::vector<std::pair<std::string, bool>> add;          // in the order set
    auto set_add = [&](const std::string& typ, bool v) {
        for (auto& [k, val] : add)
            if (k == typ) return void(val = v);
        add.emplace_back(typ, v);
    };
    auto set_id = [&](const std::string& typ, const json& tid) {
        if (!tid.is_number_integer()) return;
        const int64_t id = tid.get<int64_t>();
        if (id < 0) throw ModelError(dir.string() + ": special token '" + typ + "' has a negative id");
        if (n_vocab && id >= *n_vocab) return;
        for (auto& [k, v] : ids)
            if (k == typ) return;
        ids.emplace_back(typ, id);
    };
    std::vector<std::string> merges;
    const ChatFiles chat = read_chat_files(dir);  // tokenizer_config.json and the chat template
    std::optional<json> config;
    if (!chat.tokenizer_config.is_null()) config = chat.tokenizer_config;
    json added_tokens = json::array();
    if (tok_json) {
        const json& tj = *tok_json;
        if (load_merges && tj.contains("model") && tj["model"].contains("merges") && tj["model"]["merges"].is_array()) {
            for (const json& m : tj["model"]["merges"]) {
                if (m.is_string()) merges.push_back(m.get<std::string>());
                else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string())
                    merges.push_back(replace_all(m[0].get<std::string>(), " ", "\xc4\xa0") + " " +
                                     replace_all(m[1].get<std::string>(), " ", "\xc4\xa0"));
                else throw ModelError((dir / "tokenizer.json").string() + ": unknown merges format");
            }
        }
        if (tj.contains("added_tokens") && tj["added_tokens"].is_array()) added_tokens = tj["added_tokens"];
        auto cfg_str = [&](const char* k) -> std::string {
            if (!config || !config->contains(k)) return "";
            const json& v = (*config)[k];
            if (v.is_string()) return v.get<std::string>();
            if (v.is_object() && v.contains("content") && v["content"].is_string()) return v["content"].get<std::string>();
            return "";
        };
        std::string special_bos = cfg_str("bos_token"), special_eos = cfg_str("eos_token");
        std::string special_sep = cfg_str("sep_token"), special_cls = cfg_str("cls_token");
        const json* post = tj.contains("post_processor") && tj["post_processor"].is_object() ? &tj["post_processor"] : nullptr;
        if (post) {
            const std::string tj_name = (dir / "tokenizer.json").string();
            json procs = post->contains("processors") ? (*post)["processors"] : json::array({*post});
            if (!procs.is_array()) throw ModelError(tj_name + ": \"post_processor\".\"processors\" must be an array, not " + json_kind(procs));
            for (const json& p : procs) {
                if (!p.is_object() || json_value<std::string>(p, "type", "", tj_name) != "TemplateProcessing") continue;
                const json single = p.value("single", json::array()), pair = p.value("pair", json::array());
                if (!single.is_array() || !pair.is_array())
                    throw ModelError(tj_name + ": a TemplateProcessing's \"single\" and \"pair\" must be arrays");
                // {"SpecialToken": {"id": "<s>"}} -> "<s>"; anything else -> "".
                auto special_of = [&](const json& item) -> std::string {
                    if (!item.is_object() || !item.contains("SpecialToken")) return "";
                    return json_value<std::string>(item["SpecialToken"], "id", "", tj_name);
                };
                std::string first, last;
                if (single.size() > 1) {
                    first = special_of(single.front());
                    if (!first.empty()) {
                        if (!config) special_bos = first;
                        else if (first != special_bos && first != special_cls) {
                            if (special_bos.empty()) (*config)["bos_token"] = special_bos = first;
                            if (special_cls.empty()) (*config)["cls_token"] = special_cls = first;
                        }
                        set_add("bos", first == special_bos || first == special_cls);
                    }
                    last = special_of(single.back());
                    if (!last.empty()) {
                        if (!config) special_eos = last;
                        else if (last != special_eos) throw ModelError((dir / "tokenizer.json").string() + ": its post-processor ends sequences with '" + excerpt(last, 40) + "', not the EOS token (journey does not convert this)");
                        set_add("eos", last == special_eos);
                    }
                }
                if (!pair.empty()) {
                    size_t start = !first.empty() && special_of(pair.front()) == first ? 1 : 0;
                    size_t stop = !last.empty() && special_of(pair.back()) == last ? pair.size() - 1 : pair.size();
                    if (start < stop) {
                        std::vector<json> mid(pair.begin() + long(start), pair.begin() + long(stop));
                        auto seq = [&](const json& item) {
                            return item.is_object() && item.contains("Sequence") ? json_value<std::string>(item["Sequence"], "id", "", tj_name)
                                                                                  : std::string();
                        };
                        if (seq(mid.front()) == "A" && seq(mid.back()) == "B" && mid.size() > 2) {
                            std::vector<json> between(mid.begin() + 1, mid.end() - 1);
                            bool add_sep = false;
                            const std::string e = special_of(between[0]);
                            if (!e.empty() && (e == special_sep || e == special_eos) && last.empty()) add_sep = true;
                            if (between.size() == 2) {
                                const std::string e2 = special_of(between[1]);
                                if (!e2.empty() && (e2 == special_sep || e2 == special_eos)) add_sep = true;
                            }
                            set_add("sep", add_sep);
                        }
                    }
                }
            }
        }
    }
    if (config) {
        for (const std::string& typ : types) {
            const std::string add_key = "add_" + typ + "_token";
            if (config->contains(add_key) && (*config)[add_key].is_boolean()) set_add(typ, (*config)[add_key].get<bool>());
            const std::string key = typ + "_token";
            if (!config->contains(key)) continue;
            const json& e = (*config)[key];
            std::string content;
            if (e.is_string()) content = e.get<std::string>();
            else if (e.is_object() && e.contains("content") && e["content"].is_string()) content = e["content"].get<std::string>();
            else continue;
            json id;
            for (const json& a : added_tokens)
                if (a.is_object() && json_value<std::string>(a, "content", "", (dir / "tokenizer.json").string()) == content) {
                    id = a.value("id", json());
                    break;
                }
            set_id(typ, id);
        }
    }
    if (auto cj = read_if(dir / "config.json"); cj && cj->is_object())
        for (const std::string& typ : types) {
            json id = cj->value(typ + "_token_id", json());
            // not at the root: text_config's (a multimodal wrapper's, as gguf-py's SpecialVocab)
            if (id.is_null() && cj->contains("text_config") && (*cj)["text_config"].is_object())
                id = (*cj)["text_config"].value(typ + "_token_id", json());
            set_id(typ, id);
        }
    if (load_merges && merges.empty() && fs::is_regular_file(dir / "merges.txt")) {
        MappedFile f(dir / "merges.txt");
        std::string text(reinterpret_cast<const char*>(f.data()), f.size());
        size_t pos = 0;
        bool first = true;
        while (pos < text.size()) {
            size_t nl = text.find('\n', pos);
            if (nl == std::string::npos) nl = text.size();
            std::string line = text.substr(pos, nl - pos);
            pos = nl + 1;
            auto trim = [](std::string s) {
                const char* ws = " \t\r\n\f\v";
                s.erase(0, s.find_first_not_of(ws));
                s.erase(s.find_last_not_of(ws) + 1);
                return s;
            };
            line = trim(line);
            if (first && !line.empty() && line[0] == '#') { first = false; continue; }
            first = false;
            if (line.empty()) continue;
            const size_t sp = line.find_first_of(" \t");
            if (sp == std::string::npos) continue;
            const std::string a = line.substr(0, sp), b = trim(line.substr(sp));
            if (b.empty() || b.find_first_of(" \t") != std::string::npos) continue;
            merges.push_back(a + " " + b);
        }
    }
    if (!merges.empty()) w.set_strs("tokenizer.ggml.merges", merges);
    static const std::map<std::string, std::string> id_key = {
        {"bos", "tokenizer.ggml.bos_token_id"}, {"eos", "tokenizer.ggml.eos_token_id"},
        {"unk", "tokenizer.ggml.unknown_token_id"}, {"sep", "tokenizer.ggml.seperator_token_id"},
        {"pad", "tokenizer.ggml.padding_token_id"}, {"cls", "tokenizer.ggml.cls_token_id"},
        {"mask", "tokenizer.ggml.mask_token_id"}};
    for (const auto& [typ, id] : ids) w.set_u32(id_key.at(typ), uint32_t(id));
    for (const auto& [typ, v] : add) w.set_bool("tokenizer.ggml.add_" + typ + "_token", v);
    if (chat.chat_template) w.set_str("tokenizer.chat_template", *chat.chat_template);
    for (const auto& [name, text] : chat.named_templates) w.set_str("tokenizer.chat_template." + name, text);
}

// SentencePiece's tokenizer.model (a protobuf ModelProto): the pieces, scores and types.
struct Piece {
    std::string text;
    float score = 0;
    int type = 1;
};
std::vector<Piece> read_sentencepiece(const fs::path& file) {
    MappedFile f(file);
    const auto* p = reinterpret_cast<const unsigned char*>(f.data());
    const size_t n = f.size();
    auto bad = [&] { return ModelError(file.string() + ": not a valid SentencePiece model"); };
    auto varint = [&](size_t& pos, size_t end) {
        uint64_t v = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            if (pos >= end) throw bad();
            const unsigned char b = p[pos++];
            v |= uint64_t(b & 0x7f) << shift;
            if (!(b & 0x80)) return v;
        }
        throw bad();
    };
    auto skip = [&](size_t& pos, size_t end, int wire) {
        if (wire == 0) varint(pos, end);
        else if (wire == 1) pos += 8;
        else if (wire == 5) pos += 4;
        else if (wire == 2) {
            const uint64_t len = varint(pos, end);
            if (len > end - pos) throw bad();
            pos += size_t(len);
        } else throw bad();
        if (pos > end) throw bad();
    };
    std::vector<Piece> pieces;
    size_t pos = 0;
    while (pos < n) {
        const uint64_t tag = varint(pos, n);
        if (tag >> 3 == 1 && (tag & 7) == 2) {
            const uint64_t len = varint(pos, n);
            if (len > n - pos) throw bad();
            const size_t end = pos + size_t(len);
            Piece piece;
            while (pos < end) {
                const uint64_t t = varint(pos, end);
                if (t >> 3 == 1 && (t & 7) == 2) {
                    const uint64_t l = varint(pos, end);
                    if (l > end - pos) throw bad();
                    piece.text.assign(reinterpret_cast<const char*>(p + pos), size_t(l));
                    pos += size_t(l);
                } else if (t >> 3 == 2 && (t & 7) == 5) {
                    if (end - pos < 4) throw bad();
                    std::memcpy(&piece.score, p + pos, 4);
                    pos += 4;
                } else if (t >> 3 == 3 && (t & 7) == 0) {
                    piece.type = int(varint(pos, end));
                } else {
                    skip(pos, end, int(t & 7));
                }
            }
            pieces.push_back(std::move(piece));
        } else {
            skip(pos, n, int(tag & 7));
        }
    }
    if (pieces.empty()) throw bad();
    return pieces;
}

}  // namespace

void convert_vocab(GgufWriter& w, const fs::path& dir, const std::string& family, const json& config) {
    const std::optional<json> tok_json = read_if(dir / "tokenizer.json");
    const bool spm = fs::is_regular_file(dir / "tokenizer.model") && family != "qwen2" && family != "qwen3" && family != "gpt2";
    std::optional<int64_t> cfg_vocab;
    if (config.contains("vocab_size") && config["vocab_size"].is_number_integer()) cfg_vocab = config["vocab_size"].get<int64_t>();
    if (family == "gemma4") {  // Gemma4Model.set_vocab: gguf-py's LlamaHfVocab over tokenizer.json
        const std::string tj_name = (dir / "tokenizer.json").string();
        if (!tok_json || !tok_json->is_object() || !tok_json->contains("model") || !(*tok_json)["model"].is_object() ||
            json_value<std::string>((*tok_json)["model"], "type", "", tj_name) != "BPE" ||
            !json_value<bool>((*tok_json)["model"], "byte_fallback", false, tj_name) || !(*tok_json)["model"].contains("vocab") ||
            !(*tok_json)["model"]["vocab"].is_object())
            throw ModelError(tj_name + ": journey converts Gemma 4 with its byte-fallback BPE tokenizer.json (none here)");
        std::map<int64_t, std::string> by_id;
        for (const auto& [text, id] : (*tok_json)["model"]["vocab"].items())
            if (id.is_number_integer()) by_id[id.get<int64_t>()] = text;
        std::set<int64_t> special;
        if (tok_json->contains("added_tokens") && (*tok_json)["added_tokens"].is_array())
            for (const json& a : (*tok_json)["added_tokens"])
                if (a.is_object() && a.contains("id") && a["id"].is_number_integer()) {
                    const int64_t id = a["id"].get<int64_t>();
                    if (!by_id.contains(id)) throw ModelError(tj_name + ": added token " + std::to_string(id) + " is not in the vocabulary (journey converts Gemma 4's as part of it)");
                    if (json_value<bool>(a, "special", false, tj_name)) special.insert(id);
                }
        if (by_id.empty() || by_id.begin()->first != 0 || by_id.rbegin()->first + 1 != int64_t(by_id.size()))
            throw ModelError(tj_name + ": the vocabulary's ids are not 0..n-1");
        static const std::set<std::string> visible = {"<|channel>", "<channel|>", "<|tool_call>", "<tool_call|>",
                                                      "<|tool_response>", "<tool_response|>", "<|\"|>"};
        std::vector<std::string> tokens;
        std::vector<int32_t> types;
        for (const auto& [id, text] : by_id) {
            tokens.push_back(text);
            const bool byte = text.size() == 6 && text.starts_with("<0x") && text[5] == '>' && std::isxdigit(static_cast<unsigned char>(text[3])) &&
                              std::isxdigit(static_cast<unsigned char>(text[4]));
            types.push_back(visible.contains(text) ? USER_DEFINED : byte ? BYTE : special.contains(id) ? CONTROL : NORMAL);
        }
        w.set_str("tokenizer.ggml.model", "gemma4");
        w.set_strs("tokenizer.ggml.tokens", tokens);
        w.set_f32s("tokenizer.ggml.scores", std::vector<float>(tokens.size(), -1000.0f));
        w.set_i32s("tokenizer.ggml.token_type", types);
        special_vocab(w, dir, tok_json, true, std::nullopt);
        return;
    }
    if (spm) {
        const std::vector<Piece> pieces = read_sentencepiece(dir / "tokenizer.model");
        const int64_t vocab = cfg_vocab.value_or(int64_t(pieces.size()));
        if (vocab <= 0 || vocab > (int64_t{1} << 24)) throw ModelError((dir / "config.json").string() + ": vocab_size is out of range");
        std::vector<std::string> tokens(static_cast<size_t>(vocab));
        std::vector<float> scores(size_t(vocab), -10000.0f);
        std::vector<int32_t> types(size_t(vocab), UNUSED);
        for (int64_t i = 0; i < vocab; ++i) tokens[size_t(i)] = "[PAD" + std::to_string(i) + "]";
        for (size_t i = 0; i < pieces.size() && int64_t(i) < vocab; ++i) {
            const Piece& pc = pieces[i];
            tokens[i] = pc.text;
            scores[i] = pc.score;
            // sentencepiece's IsUnknown / IsControl / IsUnused / IsByte, else NORMAL (user-defined too)
            types[i] = pc.type == 2 ? UNKNOWN : pc.type == 3 ? CONTROL : pc.type == 5 ? UNUSED : pc.type == 6 ? BYTE : NORMAL;
        }
        if (auto added = read_if(dir / "added_tokens.json"); added && added->is_object())
            for (const auto& [key, id] : added->items()) {
                if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() >= vocab) continue;
                const size_t i = size_t(id.get<int64_t>());
                tokens[i] = key;
                scores[i] = -1000.0f;
                types[i] = USER_DEFINED;
            }
        if (auto tc = read_if(dir / "tokenizer_config.json"); tc && tc->is_object() && tc->contains("added_tokens_decoder"))
            for (const auto& [key, data] : (*tc)["added_tokens_decoder"].items()) {
                const std::string tc_name = (dir / "tokenizer_config.json").string();
                int64_t id = -1;
                const auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), id);
                if (ec != std::errc() || end != key.data() + key.size())
                    throw ModelError(tc_name + ": \"added_tokens_decoder\" key \"" + excerpt(key, 40) + "\" is not a token id");
                if (id < 0 || id >= vocab || !data.is_object()) continue;
                std::string content = json_value<std::string>(data, "content", "", tc_name);
                if (json_value<bool>(data, "special", false, tc_name) || looks_special(content)) types[size_t(id)] = CONTROL;
                else {
                    content = replace_all(content, "\xe2\x96\x81", " ");
                    types[size_t(id)] = USER_DEFINED;
                }
                scores[size_t(id)] = -1000.0f;
                tokens[size_t(id)] = content;
            }
        w.set_str("tokenizer.ggml.model", "llama");
        w.set_str("tokenizer.ggml.pre", "default");
        w.set_strs("tokenizer.ggml.tokens", tokens);
        w.set_f32s("tokenizer.ggml.scores", scores);
        w.set_i32s("tokenizer.ggml.token_type", types);
        special_vocab(w, dir, tok_json, false, vocab);
        return;
    }
    // Byte-level BPE (tokenizer.json, or GPT-2's vocab.json + merges.txt).
    json vocab_obj;
    json added = json::array();
    std::string pre;
    if (tok_json) {
        if (!tok_json->is_object()) throw ModelError((dir / "tokenizer.json").string() + ": not a JSON object");
        const json& model = tok_json->contains("model") ? (*tok_json)["model"] : json();
        if (!model.is_object() || json_value<std::string>(model, "type", "BPE", (dir / "tokenizer.json").string()) != "BPE" ||
            !model.contains("vocab") || !model["vocab"].is_object())
            throw ModelError((dir / "tokenizer.json").string() + ": not a BPE tokenizer journey converts");
        vocab_obj = model["vocab"];
        if (tok_json->contains("added_tokens")) added = (*tok_json)["added_tokens"];
        pre = gguf_pre_of_tokenizer_json(*tok_json, family, (dir / "tokenizer.json").string());
    } else if (fs::is_regular_file(dir / "vocab.json") && family == "gpt2") {
        vocab_obj = read_json_file(dir / "vocab.json");
        pre = "gpt-2";
    } else {
        throw ModelError(dir.string() + ": no tokenizer.json or tokenizer.model (journey converts the tokenizer with the weights)");
    }
    std::map<int64_t, std::string> by_id;
    for (const auto& [text, id] : vocab_obj.items())
        if (id.is_number_integer()) by_id[id.get<int64_t>()] = text;
    std::map<int64_t, const json*> added_by_id;
    for (const json& a : added)
        if (a.is_object() && a.contains("id") && a["id"].is_number_integer() && a.contains("content")) {
            by_id[a["id"].get<int64_t>()] = json_value<std::string>(a, "content", "", (dir / "tokenizer.json").string());
            added_by_id[a["id"].get<int64_t>()] = &a;
        }
    const int64_t vocab = cfg_vocab.value_or(by_id.empty() ? 0 : by_id.rbegin()->first + 1);
    if (by_id.empty() || by_id.rbegin()->first >= vocab || by_id.begin()->first < 0)
        throw ModelError(dir.string() + ": a token id lies outside the vocabulary size " + std::to_string(vocab));
    std::vector<std::string> tokens;
    std::vector<int32_t> types;
    for (int64_t i = 0; i < vocab; ++i) {
        auto it = by_id.find(i);
        if (it == by_id.end()) {
            tokens.push_back("[PAD" + std::to_string(i) + "]");
            types.push_back(UNUSED);
            continue;
        }
        std::string token = it->second;
        auto a = added_by_id.find(i);
        if (a != added_by_id.end()) {
            if (json_value<bool>(*a->second, "special", false, (dir / "tokenizer.json").string()) || looks_special(token))
                types.push_back(CONTROL);
            else {
                token = replace_all(token, "\xe2\x96\x81", " ");
                types.push_back(USER_DEFINED);
            }
        } else {
            types.push_back(NORMAL);
        }
        tokens.push_back(token);
    }
    w.set_str("tokenizer.ggml.model", "gpt2");
    w.set_str("tokenizer.ggml.pre", pre);
    w.set_strs("tokenizer.ggml.tokens", tokens);
    w.set_i32s("tokenizer.ggml.token_type", types);
    special_vocab(w, dir, tok_json, true, std::nullopt);
}

}  // namespace journey
