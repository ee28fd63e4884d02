// A Hugging Face Llama directory's own tokenizer.json (SentencePiece-style BPE): written here
// from the Llama-2 vocabulary and from tok512.bin the way transformers' LlamaConverter writes it,
// then read through the loader against llama.cpp's ids, llama2.c's greedy text, and ids that
// Hugging Face's tokenizers library gave for the same files (the literal lists below); and every
// way such a file can be unusable.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <tuple>

#include "cli_run.h"
#include "hf_tokenizer_json.h"
#include "journey/errors.h"
#include "journey/formats/gguf_reader.h"
#include "journey/text/hf/tokenizer.h"
#include "journey/text/spm_tokenizer.h"
#include "journey/text/tokenizer_loader.h"
#include "llama_hf_dir.h"

using namespace journey;
using namespace journey::test;
using json = nlohmann::json;
using Ids = std::vector<TokenId>;

namespace {

const std::string kSpace = "\xe2\x96\x81";

// Llama-2's tokenizer.json in the given style, as LlamaConverter writes it.
json llama2_json(HfSpaces spaces = HfSpaces::legacy) {
    const ModelFile mf = read_gguf(data_dir() + "/models/llama-spm-vocab/ggml-vocab-llama-spm.gguf");
    const auto pieces = mf.metadata.at("tokenizer.ggml.tokens").get<std::vector<std::string>>();
    const auto scores = mf.metadata.at("tokenizer.ggml.scores").get<std::vector<float>>();
    return llama_tokenizer_json(pieces, scores, spaces);
}

const json& llama2_legacy() {
    static const json j = llama2_json();
    return j;
}

std::unique_ptr<HfTokenizer> from_json(const json& root, const json& config = json()) {
    return std::make_unique<HfTokenizer>(root, config, "tokenizer.json");
}

// The legacy file with other ways of turning spaces into "▁".
json with_metaspace(json pre) {
    json j = llama2_legacy();
    j["normalizer"] = nullptr;
    pre["type"] = "Metaspace";
    pre["replacement"] = kSpace;
    j["pre_tokenizer"] = pre;
    return j;
}

struct Case {
    std::string text;
    Ids ids;
};

std::vector<Case> llama_cases() {
    std::vector<Case> cases;
    std::ifstream in(data_dir() + "/tokenizer/llama_spm_cases.jsonl");
    for (std::string line; std::getline(in, line);) {
        if (line.empty()) continue;
        const json c = json::parse(line);
        cases.push_back({c["text"], c["ids"].get<Ids>()});
    }
    return cases;
}

// A tiny SentencePiece-style file: no byte tokens, legacy normalizer, merges for "▁a", "ab", "▁ab".
json tiny_tokenizer_json() {
    const json vocab = {{"<unk>", 0}, {"<s>", 1}, {"</s>", 2}, {kSpace, 3}, {"a", 4}, {"b", 5},
                        {kSpace + "a", 6}, {"ab", 7}, {kSpace + "ab", 8}};
    json added = json::array();
    for (int i : {0, 1, 2}) added.push_back({{"id", i}, {"content", i == 0 ? "<unk>" : i == 1 ? "<s>" : "</s>"}, {"special", true}});
    return {
        {"added_tokens", added},
        {"normalizer",
         {{"type", "Sequence"},
          {"normalizers",
           {{{"type", "Prepend"}, {"prepend", kSpace}}, {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", kSpace}}}}}},
        {"pre_tokenizer", nullptr},
        {"post_processor", nullptr},
        {"model",
         {{"type", "BPE"}, {"unk_token", "<unk>"}, {"fuse_unk", true}, {"byte_fallback", false}, {"vocab", vocab},
          {"merges", {kSpace + " a", "a b", kSpace + " ab", kSpace + "a b"}}}},
    };
}

// Writes root as dir/tokenizer.json and returns that path.
std::string write_json(const TempDir& d, const json& root, const std::string& name = "tokenizer.json") {
    std::ofstream(d / name) << root.dump();
    return (d / name).string();
}

}  // namespace

TEST_CASE("tokenizer.json (Llama-2, LlamaConverter's legacy normalizer): every llama.cpp case", "[spm][hf-tokenizer]") {
    TempDir d;
    write_json(d, llama2_legacy());
    std::ofstream(d / "tokenizer_config.json") << json{{"bos_token", "<s>"}, {"eos_token", "</s>"}}.dump();
    const auto tok = load_tokenizer_dir(d.path.string());
    REQUIRE(tok->kind() == "hf-bpe");
    CHECK(tok->n_vocab() == 32000);
    CHECK(tok->bos_id() == 1);
    CHECK(tok->eos_id() == 2);
    CHECK(tok->add_bos());  // the post-processor puts <s> first
    int n = 0;
    for (const Case& c : llama_cases()) {
        INFO("case " << n << ": " << json(c.text).dump());
        CHECK(tok->encode(c.text) == c.ids);
        CHECK(tok->decode(c.ids) == c.text);
        ++n;
    }
    CHECK(n >= 40);
    CHECK(tok->encode("Hello<s>Hello") == Ids{15043, 1, 15043});
    CHECK(tok->encode("Hello<s> Hello") == Ids{15043, 1, 29871, 15043});
    CHECK(tok->encode(kSpace + "Hello") == Ids{29871, 15043});
}

TEST_CASE("tokenizer.json (Llama-2, Metaspace prepend_scheme first): the cases, less a leading space's prefix",
          "[spm][hf-tokenizer]") {
    TempDir d;
    const auto tok = load_tokenizer_json(write_json(d, llama2_json(HfSpaces::metaspace)));
    REQUIRE(tok->kind() == "hf-bpe");
    // Metaspace puts no "▁" before text that starts with one: such text is encoded as with no
    // prefix at all (a Replace-only normalizer); other text as the legacy file does.
    json replace_only = llama2_legacy();
    replace_only["normalizer"] = replace_only["normalizer"]["normalizers"][1];
    const auto unprefixed = from_json(replace_only);
    int n = 0;
    for (const Case& c : llama_cases()) {
        INFO("case " << n << ": " << json(c.text).dump());
        const bool leading_space = !c.text.empty() && c.text[0] == ' ';
        const Ids ids = tok->encode(c.text);
        CHECK(ids == (leading_space ? unprefixed->encode(c.text) : c.ids));
        CHECK(tok->decode(ids) == (leading_space ? c.text.substr(1) : c.text));
        ++n;
    }
    CHECK(n >= 40);
    // As Hugging Face's tokenizers gives them for this file:
    CHECK(tok->encode(" ") == Ids{29871});
    CHECK(tok->encode(" Hello") == Ids{15043});
    CHECK(tok->encode("   Hello") == Ids{259, 15043});
    CHECK(tok->encode("Hello<s>Hello") == Ids{15043, 1, 10994});  // "first": no prefix after <s>
    CHECK(tok->encode("<s>Hello") == Ids{1, 10994});
    CHECK(tok->decode(Ids{1, 10994}) == "<s>Hello");  // HF decodes special tokens unless told to skip them
}

TEST_CASE("tokenizer.json (Llama-2): the other Metaspace forms give Hugging Face's ids", "[spm][hf-tokenizer]") {
    // Ids from Hugging Face's tokenizers for the same files.
    const auto always = from_json(with_metaspace({{"prepend_scheme", "always"}, {"split", false}}));
    CHECK(always->encode("Hello<s>Hello") == Ids{15043, 1, 15043});
    CHECK(always->encode("Hello<s> Hello") == Ids{15043, 1, 15043});
    CHECK(always->encode("   Hello") == Ids{259, 15043});
    CHECK(always->decode(Ids{15043, 1, 15043}) == "Hello<s> Hello");

    const auto never = from_json(with_metaspace({{"prepend_scheme", "never"}, {"split", false}}));
    CHECK(never->encode("Hello<s>Hello") == Ids{10994, 1, 10994});
    CHECK(never->encode("a  b") == Ids{29874, 29871, 289});

    // Older files: add_prefix_space, and no "split" (which then means true: each word alone).
    const auto old = from_json(with_metaspace({{"add_prefix_space", true}}));
    CHECK(old->encode("   Hello") == Ids{29871, 29871, 15043});
    CHECK(old->encode("Hello<s>Hello") == Ids{15043, 1, 15043});
    CHECK(old->encode("Hello world") == Ids{15043, 3186});
    const auto split_first = from_json(with_metaspace({{"prepend_scheme", "first"}, {"split", true}}));
    CHECK(split_first->encode("   Hello") == Ids{29871, 29871, 15043});
}

TEST_CASE("tokenizer.json (Llama-2): merge ranks decide, and a piece no merge makes is never formed",
          "[spm][hf-tokenizer]") {
    // Older conversions list no merge for "▁▁" (whose SentencePiece score is falsy to Python in
    // some of them): Hugging Face then never forms it, nor "▁▁▁" (which needs it).
    json j = llama2_legacy();
    json& merges = j["model"]["merges"];
    const json space_pair = json::array({kSpace, kSpace});
    merges.erase(std::find(merges.begin(), merges.end(), space_pair));
    const auto no_pair = from_json(j);
    CHECK(no_pair->encode(" ") == Ids{29871, 29871});
    CHECK(no_pair->encode("  ") == Ids{29871, 29871, 29871});
    CHECK(no_pair->encode("Hello world") == Ids{15043, 3186});
    CHECK(no_pair->decode(Ids{29871, 29871, 29871}) == "  ");

    // Merges ordered by the merged piece's id (older conversions) rather than its score: the
    // whitespace pieces, scored -1e9 but with low ids, now come first.
    const json& vocab = j["model"]["vocab"];
    json by_id = llama2_legacy();
    std::vector<json> list(by_id["model"]["merges"].begin(), by_id["model"]["merges"].end());
    auto key = [&](const json& m) {
        return std::tuple(vocab[m[0].get<std::string>() + m[1].get<std::string>()].get<int>(),
                          vocab[m[0].get<std::string>()].get<int>(), vocab[m[1].get<std::string>()].get<int>());
    };
    std::stable_sort(list.begin(), list.end(), [&](const json& a, const json& b) { return key(a) < key(b); });
    by_id["model"]["merges"] = list;
    const auto ranked_by_id = from_json(by_id);
    CHECK(ranked_by_id->encode(" Hello world") == Ids{259, 10994, 3186});  // Hugging Face's ids
    CHECK(from_json(llama2_legacy())->encode(" Hello world") == Ids{29871, 15043, 3186});
}

TEST_CASE("tokenizer.json: unknown characters without byte fallback, fused or not", "[spm][hf-tokenizer]") {
    // Ids from Hugging Face's tokenizers.
    const auto fused = from_json(tiny_tokenizer_json());
    CHECK(fused->encode("ab ab") == Ids{8, 8});
    CHECK(fused->encode("xyz") == Ids{3, 0});
    CHECK(fused->encode("axb") == Ids{6, 0, 5});
    CHECK(fused->encode("ba") == Ids{3, 5, 4});
    CHECK(fused->encode("a<s>b") == Ids{6, 1, 3, 5});
    CHECK(fused->encode("x y") == Ids{3, 0, 3, 0});
    json j = tiny_tokenizer_json();
    j["model"]["fuse_unk"] = false;
    CHECK(from_json(j)->encode("xyz") == Ids{3, 0, 0, 0});
}

TEST_CASE("tokenizer.json: BOS from the post-processor or tokenizer_config.json", "[spm][hf-tokenizer]") {
    TempDir d;
    const std::string file = write_json(d, tiny_tokenizer_json());
    CHECK_FALSE(load_tokenizer_json(file)->add_bos());  // no post-processor: HF adds nothing
    std::ofstream(d / "tokenizer_config.json") << json{{"add_bos_token", true}, {"bos_token", {{"content", "<s>"}}}, {"eos_token", "</s>"}}.dump();
    auto tok = load_tokenizer_json(file);
    CHECK(tok->add_bos());
    CHECK(tok->bos_id() == 1);
    CHECK(tok->eos_id() == 2);
    json with_template = llama2_legacy();
    CHECK(from_json(with_template)->add_bos());
    CHECK_FALSE(from_json(with_template, json{{"add_bos_token", false}})->add_bos());
    std::ofstream(d / "tokenizer_config.json") << "{";
    CHECK_THROWS_WITH(load_tokenizer_json(file), Catch::Contains("tokenizer_config.json") && Catch::Contains("invalid JSON"));
}

TEST_CASE("tokenizer.json: byte-level BPE still goes to the GPT-2 tokenizer", "[spm][hf-tokenizer]") {
    // GPT-2's byte-to-unicode alphabet as the vocabulary, and one merge.
    json vocab = json::object();
    int next = 256;
    for (int b = 0; b < 256; ++b) {
        const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
        const int cp = printable ? b : next++;
        std::string s;
        if (cp < 0x80) s += char(cp);
        else s += {char(0xC0 | (cp >> 6)), char(0x80 | (cp & 0x3F))};
        vocab[s] = b;
    }
    vocab["ab"] = 256;
    TempDir d;
    const json root = {{"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}}},
                       {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", {"a b"}}}}};
    const auto tok = load_tokenizer_json(write_json(d, root));
    CHECK(tok->kind() == "gpt2-bpe");
    CHECK(tok->encode("ab") == Ids{256});
}

TEST_CASE("tokenizer.json: unusable SentencePiece-style files are refused naming the file", "[spm][hf-tokenizer]") {
    TempDir d;
    auto refused = [&](const json& root, const std::string& problem) {
        const std::string file = write_json(d, root, "bad.json");
        try {
            load_tokenizer_json(file);
            FAIL("accepted: " << problem);
        } catch (const ModelError& e) {
            const std::string what = e.what();
            INFO(what);
            CHECK(what.rfind(file + ": ", 0) == 0);
            CHECK(what.find(problem) != std::string::npos);
            CHECK(what.find('\n') == std::string::npos);
        }
    };
    auto with = [](const std::string& ptr, const json& value) {
        json j = tiny_tokenizer_json();
        j[json::json_pointer(ptr)] = value;
        return j;
    };
    auto without = [](const std::string& ptr) {
        json j = tiny_tokenizer_json();
        const json::json_pointer p(ptr);
        j[p.parent_pointer()].erase(p.back());
        return j;
    };
    refused(with("/model/type", "Unigram"), "model type \"Unigram\" is not supported");
    refused(with("/model/type", "WordPiece"), "model type \"WordPiece\" is not supported");
    refused(without("/model"), "has no \"model\"");
    refused(without("/model/vocab"), "model: has no \"vocab\"");
    refused(without("/model/merges"), "model: has no \"merges\"");
    refused(with("/model/vocab/b", -1), "has id -1");
    refused(with("/model/vocab/b", 4294967296), "not an integer in [0, 2^31)");
    refused(with("/model/vocab/b", "5"), "not an integer");
    refused(with("/model/vocab/b", 4), "id 4 is used by both");
    refused(with("/model/merges/1", "a zz"), "\"zz\", which is not in model.vocab");
    refused(with("/model/merges/1", "b a"), "\"ba\", which is not in model.vocab");
    refused(with("/model/merges/1", "ab"), "is not two tokens");
    refused(with("/model/merges/1", 7), "is neither");
    refused(with("/model/merges/0", "<s> a"), "\"<s>a\", which is not in model.vocab");
    refused(with("/model/byte_fallback", "yes"), "\"byte_fallback\" is not a boolean");
    refused(with("/model/dropout", 0.1), "dropout 0.1 is not supported");
    refused(with("/model/unk_token", "<what>"), "unk_token \"<what>\" is not in model.vocab");
    refused(with("/model/vocab", json::object()), "unk_token \"<unk>\" is not in model.vocab");
    refused(with("/added_tokens/1", {{"id", 1}}), "added_tokens[1]: has no \"content\"");
    refused(with("/added_tokens", {{"x", 1}}), "added_tokens: is not an array");
    refused(with("/normalizer/normalizers/0", {{"type", "BertNormalizer"}}),
            "normalizer.normalizers[0]: normalizer type \"BertNormalizer\" is not supported");
    refused(with("/pre_tokenizer", {{"type", "Metaspace"}}), "pre_tokenizer: has no \"replacement\"");
    refused(with("/pre_tokenizer", {{"type", "Metaspace"}, {"replacement", kSpace}, {"prepend_scheme", "sometimes"}}),
            "prepend_scheme \"sometimes\"");
    refused(with("/pre_tokenizer", {{"type", "BertPreTokenizer"}}), "pre_tokenizer type \"BertPreTokenizer\" is not supported");
    refused(with("/pre_tokenizer", {{"type", "Split"}, {"pattern", {{"Regex", "(a"}}}, {"behavior", "Isolated"}}),
            "pre_tokenizer.pattern: invalid regex \"(a\"");
    refused(with("/pre_tokenizer", {{"type", "Split"}, {"pattern", {{"String", "a"}}}, {"behavior", "Sometimes"}}),
            "behavior \"Sometimes\"");
    refused(with("/pre_tokenizer", {{"type", "Sequence"}, {"pretokenizers", {{{"type", "ByteLevel"}}, {{"type", "Digits"}}}}}),
            "pre_tokenizer.pretokenizers[1]: Digits after ByteLevel");
    refused(with("/post_processor", {{"type", "RobertaProcessing"}}), "post_processor type \"RobertaProcessing\" is not supported");
    refused(with("/post_processor", {{"type", "TemplateProcessing"}, {"single", {{{"SpecialToken", {{"id", "<s>"}}}}}},
                                     {"special_tokens", json::object()}}),
            "special token \"<s>\" is not in special_tokens");
    refused(with("/decoder", {{"type", "WordPiece"}}), "decoder: decoder type \"WordPiece\" is not supported");
}

TEST_CASE("tokenizer.json through the CLI: a bad file exits 2 naming it", "[cli][hf-tokenizer]") {
    TempDir d;
    json j = tiny_tokenizer_json();
    j["model"]["merges"][1] = "a zz";
    const std::string file = write_json(d, j);
    auto r = run_journey({"tokenize", "--tokenizer-json", file, "-p", "ab"});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains(file) && Catch::Contains("zz"));

    // The same file as the tokenizer of a Hugging Face llama directory.
    write_stories_hf_dir(d.path);
    r = run_journey({"generate", "-m", d.path.string(), "-p", "Once", "-n", "2"});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains(file) && Catch::Contains("zz"));

    // Each kind of part journey cannot run, and an invalid regex: exit 2, one line on stderr
    // naming the file and the part, nothing on stdout.
    const std::vector<std::pair<json, std::string>> bad_parts = {
        {{{"/normalizer", {{"type", "BertNormalizer"}}}}, "normalizer: normalizer type \"BertNormalizer\""},
        {{{"/pre_tokenizer", {{"type", "UnicodeScripts"}}}}, "pre_tokenizer: pre_tokenizer type \"UnicodeScripts\""},
        {{{"/pre_tokenizer", {{"type", "Split"}, {"pattern", {{"Regex", "[a"}}}, {"behavior", "Isolated"}}}}, "pre_tokenizer.pattern: invalid regex \"[a\""},
        {{{"/model/type", "WordLevel"}}, "model: model type \"WordLevel\""},
        {{{"/post_processor", {{"type", "BertProcessing"}}}}, "post_processor: post_processor type \"BertProcessing\""},
        {{{"/decoder", {{"type", "CTC"}}}}, "decoder: decoder type \"CTC\""},
        {{{"/model/merges/0", "a q"}}, "model.merges[0]: merge \"a q\" names \"q\""},
    };
    for (const auto& [edits, part] : bad_parts) {
        json bad = tiny_tokenizer_json();
        for (const auto& [ptr, value] : edits.items()) bad[json::json_pointer(ptr)] = value;
        const std::string bad_file = write_json(d, bad, "bad-part.json");
        const auto b = run_journey({"tokenize", "--tokenizer-json", bad_file, "-p", "ab"});
        INFO(part << "\n" << b.err);
        CHECK(b.exit_code == 2);
        CHECK(b.out.empty());
        CHECK_THAT(b.err, Catch::StartsWith("journey: " + bad_file + ": " + part) || Catch::Contains(bad_file + ": " + part));
        CHECK(std::count(b.err.begin(), b.err.end(), '\n') == 1);
    }

    std::ofstream(d / "tokenizer.json") << json{{"model", {{"type", "Unigram"}, {"vocab", json::array()}}}}.dump();
    r = run_journey({"tokenize", "-m", d.path.string(), "-p", "ab"});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains(file) && Catch::Contains("Unigram"));
}

TEST_CASE("tokenizer.json from tok512.bin encodes the stories260K prompts as llama2.c does", "[spm][hf-tokenizer][llama]") {
    const auto tok = from_json(stories_tokenizer_json());
    const auto meta = from_json(stories_tokenizer_json(HfSpaces::metaspace));
    const json ref = json::parse(std::ifstream(data_dir() + "/reference/stories260K.expected.json"));
    for (const auto& c : ref["cases"]) {
        Ids ids = tok->encode(c["text"].get<std::string>());
        ids.insert(ids.begin(), *tok->bos_id());
        CHECK(ids == c["ids"].get<Ids>());
        CHECK(meta->encode(c["text"].get<std::string>()) == Ids(ids.begin() + 1, ids.end()));
    }
}

TEST_CASE("generate -m HF llama directory with its own tokenizer.json: llama2.c's greedy text",
          "[cli][hf][llama][reference][hf-tokenizer]") {
    TempDir d;
    write_stories_hf_dir(d.path, /*with_tokenizer=*/true);
    auto r = run_journey({"info", "-m", d.path.string(), "--json"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(json::parse(r.out)["tokenizer"] == "hf-bpe");

    const json ref = json::parse(std::ifstream(data_dir() + "/reference/stories260K.expected.json"));
    for (const auto& c : ref["cases"]) {
        const std::string text = c["text"];
        // run.c's steps count every position from BOS on; the prompt's own fill the first ones.
        const size_t n = ref["steps"].get<size_t>() - c["ids"].size() + 1;
        r = run_journey({"generate", "-m", d.path.string(), "-p", text, "-n", std::to_string(n), "--temp", "0", "--echo"});
        INFO(text << "\n" << r.err);
        REQUIRE(r.exit_code == 0);
        CHECK(r.out == c["runc_greedy_text"].get<std::string>());
    }
}
