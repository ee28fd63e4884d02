// A Hugging Face tokenizer.json for a SentencePiece BPE vocabulary, made the way transformers'
// LlamaConverter makes one from a Llama tokenizer.model: the pieces with their ids; as merges,
// every split of a piece into two pieces (between characters), a piece's splits ordered by the
// halves' ids, the pieces ordered by score, highest first (a stable sort, so equal scores keep id
// order); byte_fallback; <unk>, <s>, </s> as special added tokens; BOS put first by the
// post-processor.
#pragma once
#include <algorithm>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

namespace journey::test {

// How spaces become "▁": LlamaConverter's normalizer (legacy) or its newer Metaspace
// pre-tokenizer (prepend_scheme "first", split false).
enum class HfSpaces { legacy, metaspace };

inline nlohmann::json llama_tokenizer_json(const std::vector<std::string>& pieces, const std::vector<float>& scores,
                                           HfSpaces spaces = HfSpaces::legacy) {
    using json = nlohmann::json;
    std::unordered_map<std::string, int> id;
    json vocab = json::object();
    for (size_t i = 0; i < pieces.size(); ++i) {
        id.emplace(pieces[i], int(i));
        vocab[pieces[i]] = i;
    }
    struct Merge {
        int left, right;
        float score;
    };
    std::vector<Merge> merges;
    for (size_t i = 0; i < pieces.size(); ++i) {
        const std::string& p = pieces[i];
        std::vector<Merge> local;
        for (size_t k = 1; k < p.size(); ++k) {
            if ((static_cast<unsigned char>(p[k]) & 0xC0) == 0x80) continue;  // inside a character
            auto l = id.find(p.substr(0, k)), r = id.find(p.substr(k));
            if (l != id.end() && r != id.end()) local.push_back({l->second, r->second, scores[i]});
        }
        std::sort(local.begin(), local.end(),
                  [](const Merge& a, const Merge& b) { return std::pair(a.left, a.right) < std::pair(b.left, b.right); });
        merges.insert(merges.end(), local.begin(), local.end());
    }
    std::stable_sort(merges.begin(), merges.end(), [](const Merge& a, const Merge& b) { return a.score > b.score; });
    json merge_list = json::array();
    for (const Merge& m : merges) merge_list.push_back({pieces[size_t(m.left)], pieces[size_t(m.right)]});

    json added = json::array();
    for (int i : {0, 1, 2})
        added.push_back({{"id", i}, {"content", pieces[size_t(i)]}, {"single_word", false}, {"lstrip", false},
                         {"rstrip", false}, {"normalized", false}, {"special", true}});
    const json bos = {{"SpecialToken", {{"id", pieces[1]}, {"type_id", 0}}}};
    const std::string space = "\xe2\x96\x81";
    json root = {
        {"version", "1.0"},
        {"truncation", nullptr},
        {"padding", nullptr},
        {"added_tokens", added},
        {"normalizer", nullptr},
        {"pre_tokenizer", nullptr},
        {"post_processor",
         {{"type", "TemplateProcessing"},
          {"single", {bos, {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}}},
          {"pair", {bos, {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}, bos, {{"Sequence", {{"id", "B"}, {"type_id", 1}}}}}},
          {"special_tokens", {{pieces[1], {{"id", pieces[1]}, {"ids", {1}}, {"tokens", {pieces[1]}}}}}}}},
        {"decoder",
         {{"type", "Sequence"},
          {"decoders",
           {{{"type", "Replace"}, {"pattern", {{"String", space}}}, {"content", " "}},
            {{"type", "ByteFallback"}},
            {{"type", "Fuse"}},
            {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}}}}},
        {"model",
         {{"type", "BPE"},
          {"dropout", nullptr},
          {"unk_token", pieces[0]},
          {"continuing_subword_prefix", nullptr},
          {"end_of_word_suffix", nullptr},
          {"fuse_unk", true},
          {"byte_fallback", true},
          {"vocab", vocab},
          {"merges", merge_list}}},
    };
    if (spaces == HfSpaces::legacy) {
        root["normalizer"] = {{"type", "Sequence"},
                              {"normalizers",
                               {{{"type", "Prepend"}, {"prepend", space}},
                                {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", space}}}}};
    } else {
        root["pre_tokenizer"] = {{"type", "Metaspace"}, {"replacement", space}, {"prepend_scheme", "first"}, {"split", false}};
    }
    return root;
}

}  // namespace journey::test
