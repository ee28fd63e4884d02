// Which tokenizer a GGUF file describes: tokenizer.ggml.model names the algorithm. "llama" is
// SentencePiece (SpmTokenizer); "gpt2" is byte-level BPE, whose pre-tokenizer llama.cpp chooses
// by tokenizer.ggml.pre: here that choice becomes a tokenizer.json pipeline (a Split per regex
// of llama.cpp's set for the value, then ByteLevel) run by HfTokenizer.
#include <string_view>
#include <unordered_set>

#include "journey/errors.h"
#include "journey/formats/json_file.h"
#include "journey/text/gguf_pre.h"
#include "journey/text/hf/tokenizer.h"
#include "journey/text/llama_vocab_rules.h"
#include "journey/text/spm_tokenizer.h"
#include "journey/text/split_scanners.h"

namespace journey {

namespace {

using json = nlohmann::json;

// llama.cpp's pre-tokenizer for each tokenizer.ggml.pre value, as its llama-vocab.cpp (v0.5.0,
// de3ff81) maps them: the value's type (llama_vocab_pre_type), the regexes llm_tokenizer_bpe runs
// for that type, each on the pieces of the one before (the strings llama.cpp runs, not the
// tokenizer.json originals it keeps in comments: where they differ, e.g. (?i:'s) against
// '[sS], it is llama.cpp's behaviour that a GGUF file is read with), and the flags the value sets.
// Types whose words llama.cpp does not byte-encode, or splits with hand-written code of its own
// rather than its regexes, are refused with the reason.
struct PreTokenizerSet {
    std::vector<std::string_view> names;
    std::string_view type;
    std::vector<std::string_view> regexes;
    bool ignore_merges = false;
    bool add_bos = false;  // llama.cpp's default when the file does not say
    bool no_bos = false;   // llama.cpp forgets the BOS id (chatglm)
    std::string_view refused;
};

const std::vector<PreTokenizerSet>& pre_tokenizer_sets() {
    static const std::vector<PreTokenizerSet> sets = {
        {{"default"}, "DEFAULT",
         {"[\\p{P}\\$\\+<=>\\^~\\|]+",
          "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
          "\\p{N}+",
          "[0-9][0-9][0-9]"},
         false, false, false, {}},
        {{"minicpm5"}, "MINICPM5",
         {"\\p{N}{1,3}",
          "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}+| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},
         true, false, false, {}},
        {{"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2", "jina-v5-nano"}, "LLAMA3",
         {"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},
         true, true, false, {}},
        {{"deepseek-llm"}, "DEEPSEEK_LLM",
         {"[\r\n]",
          "\\s?[A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝὟ-ώᾀ-ᾴᾶ-ᾼιῂ-ῄῆ-ῌῐ-ΐῖ-Ίῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤΩℨK-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄⰀ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-ｚ𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃]+",
          "\\s?[!-/:-~！-／：-～‘-‟　-。]+",
          "\\s+$",
          "[一-龥ࠀ-一가-퟿]+",
          "\\p{N}+"},
         false, false, false, {}},
        {{"deepseek-coder"}, "DEEPSEEK_CODER",
         {"[\r\n]",
          "\\s?\\p{L}+",
          "\\s?\\p{P}+",
          "[一-龥ࠀ-一가-퟿]+",
          "\\p{N}"},
         false, false, false, {}},
        {{"deepseek-v3"}, "DEEPSEEK3_LLM",
         {"\\p{N}{1,3}",
          "[一-龥぀-ゟ゠-ヿ]+",
          "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+"},
         false, false, false, {}},
        {{"spark2_5"}, "SPARK2_5",
         {"\\p{N}{1,3}",
          "[一-龥぀-ゟ゠-ヿ]+",
          "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+|[\r\n]|\\s+(?!\\S)|\\s+",
          "\\p{N}"},
         false, false, false, {}},
        {{"youtu"}, "YOUTU",
         {"[가-힣ㄱ-ㆎ]+|[！…“”‘’—：；，、-〿︰-﹏]+|[ㄅ-ㄯ]+|[一-龥぀-ゟ゠-ヿ]+",
          "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},
         true, false, false, {}},
        {{"falcon"}, "FALCON",
         {"[\\p{P}\\$\\+<=>\\^~\\|`]+",
          "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
          "[0-9][0-9][0-9]"},
         false, false, false, {}},
        {{"mpt"}, "MPT",
         {"'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"},
         false, false, false, {}},
        {{"starcoder"}, "STARCODER",
         {"\\p{N}",
          "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"},
         false, false, false, {}},
        {{"gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de", "a.x-4.0", "mellum", "modern-bert"}, "GPT2",
         {"'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"},
         false, false, false, {}},
        {{"jais-2"}, "JAIS2",
         {"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s{512}(?!\\S)|\\s{256}(?!\\S)|\\s{128}(?!\\S)|\\s{64}(?!\\S)|\\s{32}(?!\\S)|\\s{16}(?!\\S)|\\s{8}(?!\\S)|\\s{4}(?!\\S)|\\s{1,2}(?!\\S)|\\s{1}"},
         false, false, false, {}},
        {{"gemma4", "granite-embed-multi-311m"}, "GEMMA4",
         {}, false, false, false, "spaces become U+2581 and the bytes are not byte-level-encoded (Gemma 4 GGUFs say tokenizer.ggml.model gemma4)"},
        {{"sarvam-moe"}, "SARVAM_MOE",
         {}, false, false, false, "spaces become U+2581 and the bytes are not byte-level-encoded"},
        {{"jina-v1-en", "jina-v2-code", "roberta-bpe"}, "GPT2",
         {"'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"},
         false, false, false, {}},
        {{"whitespace"}, "WHITESPACE",
         {}, false, false, false, "its words are not byte-level-encoded"},
        {{"refact"}, "REFACT",
         {"\\p{N}",
          "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"},
         false, false, false, {}},
        {{"command-r"}, "COMMAND_R",
         {"\\p{N}",
          "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"},
         false, false, false, {}},
        {{"qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2"}, "QWEN2",
         {"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},
         false, false, false, {}},
        {{"qwen35"}, "QWEN35",
         {"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},
         false, false, false, {}},
        {{"stablelm2"}, "STABLELM2",
         {"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},
         false, false, false, {}},
        {{"olmo"}, "OLMO",
         {"'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"},
         false, false, false, {}},
        {{"dbrx"}, "DBRX",
         {"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},
         false, false, false, {}},
        {{"smaug-bpe"}, "SMAUG",
         {"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},
         false, false, false, {}},
        {{"poro-chat"}, "PORO",
         {" ?[^(\\s|.,!?…。，、।۔،)]+"},
         false, false, false, {}},
        {{"glm4", "chatglm-bpe"}, "CHATGLM4",
         {"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},
         false, false, true, {}},
        {{"viking"}, "VIKING",
         {" ?[^(\\s|.,!?…。，、।۔،)]+",
          "\\p{N}"},
         false, false, false, {}},
        {{"jais"}, "JAIS",
         {"'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"},
         false, false, false, {}},
        {{"tekken"}, "TEKKEN",
         {"[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},
         true, true, false, {}},
        {{"smollm"}, "SMOLLM",
         {"\\p{N}",
          "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"},
         false, false, false, {}},
        {{"codeshell"}, "CODESHELL",
         {"\\p{N}",
          "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"},
         false, false, false, {}},
        {{"bloom"}, "BLOOM",
         {" ?[^(\\s|.,!?…。，、।۔،)]+"},
         false, false, false, {}},
        {{"gpt3-finnish"}, "GPT3_FINNISH",
         {" ?[^(\\s|.,!?…。，、।۔،)]+"},
         false, false, false, {}},
        {{"exaone"}, "EXAONE",
         {"\\p{N}",
          "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"},
         false, false, false, {}},
        {{"exaone4"}, "GPT2",
         {"'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"},
         false, false, false, {}},
        {{"exaone-moe"}, "EXAONE_MOE",
         {"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?(?:\\p{L}\\p{M}*(?: \\p{L}\\p{M}*)*)+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]?|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+"},
         false, false, false, {}},
        {{"chameleon"}, "CHAMELEON",
         {"<sentinel:[0-9]+>",
          "(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z",
          "([\\t\\n]|    |  )",
          "\\p{N}",
          "[\\p{P}!-/:-@\\[-`{-~]",
          "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"},
         false, true, false, {}},
        {{"minerva-7b"}, "MINERVA",
         {"\\p{N}",
          "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"},
         false, false, false, {}},
        {{"megrez"}, "QWEN2",
         {"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},
         false, false, false, {}},
        {{"gpt-4o", "llama4", "kanana2", "talkie"}, "GPT4O",
         {"[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},
         false, false, false, {}},
        {{"granite-embed-multi-97m"}, "GRANITE_EMB_MULTI",
         {"[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}\\p{M}])([^a-z]))*((?=[\\p{L}\\p{M}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}\\p{M}])([^a-z]))+((?=[\\p{L}\\p{M}])([^A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},
         true, false, false, {}},
        {{"tiny_aya", "cohere2moe"}, "TINY_AYA",
         {}, false, false, false, "llama.cpp groups its digits with a hand-written splitter of its own"},
        {{"superbpe"}, "SUPERBPE",
         {}, false, false, false, "its split is by an empty-match lookahead that llama.cpp's std::regex loop treats its own way"},
        {{"trillion"}, "TRILLION",
         {"'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"},
         false, false, false, {}},
        {{"granite-docling"}, "GRANITE_DOCLING",
         {"'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"},
         false, false, false, {}},
        {{"bailingmoe", "bailingmoe2", "llada-moe"}, "BAILINGMOE",
         {"'(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+"},
         false, false, false, {}},
        {{"seed-coder"}, "SEED_CODER",
         {"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1}| ?[^\\s\\p{L}\\p{N}\\r\\n]+|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},
         false, false, false, {}},
        {{"hunyuan"}, "HUNYUAN",
         {"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},
         false, false, false, {}},
        {{"hunyuan-dense"}, "HUNYUAN_DENSE",
         {"\\p{N}{1,3}",
          "[一-龥぀-ゟ゠-ヿ]+",
          "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+"},
         false, false, false, {}},
        {{"hy_v4"}, "HY_V4",
         {"\\p{N}{1,3}",
          "[一-龥぀-ゟ゠-ヿ]+",
          "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+"},
         false, false, false, {}},
        {{"joyai-llm"}, "JOYAI_LLM",
         {"\\p{N}{1,3}",
          "[一-龥぀-ゟ゠-ヿ]+",
          "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+"},
         false, false, false, {}},
        {{"kimi-k2"}, "KIMI_K2",
         {}, false, false, false, "llama.cpp splits it with a hand-written splitter of its own (Han runs)"},
        {{"ufakzeka"}, "UFAKZEKA",
         {"[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},
         false, false, false, {}},
        {{"grok-2"}, "GROK_2",
         {"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},
         false, false, false, {}},
        {{"afmoe"}, "AFMOE",
         {}, false, false, false, "llama.cpp groups its digits with a hand-written splitter of its own"},
        {{"laguna"}, "LAGUNA",
         {"[^\\n]+|[\\n]+",
          "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},
         false, false, false, {}},
        {{"minimax-m2"}, "MINIMAX_M2",
         {"[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},
         false, false, false, {}},
        {{"solar-open"}, "SOLAR_OPEN",
         {"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},
         false, false, false, {}},
        {{"mellum2"}, "MELLUM2",
         {"\\p{N}",
          "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"},
         false, false, false, {}},
    };
    return sets;
}

const PreTokenizerSet& pre_tokenizer_set(const std::string& pre, const std::string& file) {
    for (const PreTokenizerSet& s : pre_tokenizer_sets())
        for (std::string_view name : s.names)
            if (name == pre) {
                if (!s.refused.empty())
                    throw ModelError(file + ": tokenizer.ggml.pre \"" + pre + "\" is not supported: " + std::string(s.refused));
                return s;
            }
    throw ModelError(file + ": tokenizer.ggml.pre \"" + excerpt(pre, 40) + "\" is not a pre-tokenizer journey knows");
}

// GPT-2 byte-level BPE from tokenizer.ggml.tokens (byte-to-unicode form, index = id),
// tokenizer.ggml.merges ("left right", index = rank) and the token types, as a tokenizer.json.
// gemma4 (tokenizer.ggml.model "gemma4", llama.cpp's LLAMA_VOCAB_TYPE_BPE with the GEMMA4 pre-type):
// the pipeline of Gemma 4's tokenizer.json: spaces become U+2581, split after each, byte-fallback
// BPE over the tokens as stored (no byte-level encoding).
std::unique_ptr<Tokenizer> gpt2_from_gguf(const ModelFile& mf, bool gemma4 = false) {
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
    const PreTokenizerSet& pre = pre_tokenizer_set(gemma4 ? "default" : pre_value ? pre_value->get<std::string>() : "default", file);

    // The vocabulary and merges go to the model as tables (no JSON tree of 100k+ entries). A text
    // held by two ids is the later id's, as llama.cpp's token_to_id keeps the last.
    BpeTables tables;
    tables.read = true;
    json added = json::array();
    std::unordered_set<std::string_view> seen;
    std::vector<bool> in_vocab(tokens.size(), false);
    for (size_t i = tokens.size(); i-- > 0;) {
        if (!tokens[i].is_string()) throw ModelError(file + ": tokenizer.ggml.tokens holds a non-string");
        in_vocab[i] = seen.insert(tokens[i].get_ref<const std::string&>()).second;
    }
    for (size_t i = 0; i < tokens.size(); ++i) {
        const std::string& text = tokens[i].get_ref<const std::string&>();
        auto type = types && (*types)[i].is_number_integer() ? TokenType((*types)[i].get<int32_t>()) : TokenType::Normal;
        if (llama_cpp_forces_control(text)) type = TokenType::Control;
        if (llama_cpp_forces_user_defined(text)) type = TokenType::UserDefined;
        if (in_vocab[i] && !tables.add_token(text, TokenId(i)))
            throw ModelError(file + ": tokenizer.ggml.tokens holds more than 4 GiB of text");
        // Control tokens are recognised in text when special tokens are parsed; user-defined
        // ones always (llama.cpp's tokenizer_st_partition).
        if (type == TokenType::Control || type == TokenType::UserDefined)
            added.push_back({{"id", i}, {"content", text}, {"special", type == TokenType::Control}, {"normalized", false}});
    }
    // "left right", split at the first space after the first byte, as llama.cpp splits them.
    // A repeated merge keeps its first rank (llama.cpp's bpe_ranks.emplace).
    tables.merge_ends.reserve(2 * merges.size());
    std::unordered_set<std::string_view> seen_merges;
    seen_merges.reserve(merges.size());
    for (const json& m : merges) {
        if (!m.is_string()) throw ModelError(file + ": tokenizer.ggml.merges holds a non-string");
        const std::string& word = m.get_ref<const std::string&>();
        if (!seen_merges.insert(word).second) continue;
        const size_t space = word.find(' ', 1);
        if (space == std::string::npos) continue;  // llama.cpp ranks ("", ""), which never applies
        const std::string_view w(word);
        if (!tables.add_merge(w.substr(0, space), w.substr(space + 1)))
            throw ModelError(file + ": tokenizer.ggml.merges holds more than 4 GiB of text");
    }
    json splits = json::array();
    for (std::string_view regex : pre.regexes)
        splits.push_back({{"type", "Split"}, {"pattern", {{"Regex", regex}}}, {"behavior", "Isolated"}, {"invert", false}});
    splits.push_back({{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}});
    json root = {
        {"added_tokens", added},
        {"normalizer", nullptr},
        {"pre_tokenizer", {{"type", "Sequence"}, {"pretokenizers", splits}}},
        {"post_processor", nullptr},
        {"decoder", {{"type", "ByteLevel"}}},
        {"model", {{"type", "BPE"}, {"ignore_merges", pre.ignore_merges}}},
    };
    if (gemma4) {
        root["normalizer"] = {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "\xe2\x96\x81"}};
        root["pre_tokenizer"] = {{"type", "Split"}, {"pattern", {{"String", " "}}}, {"behavior", "MergedWithPrevious"}, {"invert", false}};
        root["decoder"] = {{"type", "Sequence"},
                           {"decoders", json::array({{{"type", "Replace"}, {"pattern", {{"String", "\xe2\x96\x81"}}}, {"content", " "}},
                                                     {{"type", "ByteFallback"}},
                                                     {{"type", "Fuse"}}})}};
        root["model"]["byte_fallback"] = true;
        root["model"]["fuse_unk"] = true;
        if (const json* unk = find("tokenizer.ggml.unknown_token_id");
            unk && unk->is_number_integer() && unk->get<int64_t>() >= 0 && unk->get<uint64_t>() < tokens.size())
            root["model"]["unk_token"] = tokens[unk->get<size_t>()];
    }
    // BOS/EOS and whether a text gets them, as tokenizer_config.json would say.
    // BOS/EOS as llama.cpp sets them: its defaults for a "gpt2" vocabulary (id 11 for both; no BOS
    // for chatglm), then the file's ids; add_bos by the pre-tokenizer type unless the file says.
    auto token_id = [&](const char* key, std::optional<TokenId> fallback) -> std::optional<TokenId> {
        const json* v = find(key);
        if (!v) return fallback;
        if (!v->is_number_integer() || v->get<int64_t>() < 0 || v->get<uint64_t>() >= tokens.size())
            throw ModelError(file + ": " + key + " " + json_excerpt(*v, 40) + " is not a token id (" +
                             std::to_string(tokens.size()) + " tokens)");
        return TokenId(v->get<int64_t>());
    };
    auto flag = [&](const char* key, bool fallback) {
        const json* v = find(key);
        if (!v) return fallback;
        if (!v->is_boolean()) throw ModelError(file + ": " + key + " is not a bool");
        return v->get<bool>();
    };
    const std::optional<TokenId> default_bos = pre.no_bos || tokens.size() <= 11 ? std::nullopt : std::optional<TokenId>(11);
    const std::optional<TokenId> default_eos = tokens.size() <= 11 ? std::nullopt : std::optional<TokenId>(11);
    const auto bos = token_id("tokenizer.ggml.bos_token_id", default_bos);
    const auto eos = token_id("tokenizer.ggml.eos_token_id", default_eos);
    const bool add_bos = flag("tokenizer.ggml.add_bos_token", pre.add_bos);
    const bool add_eos = flag("tokenizer.ggml.add_eos_token", false);
    if (add_bos && !bos) throw ModelError(file + ": tokenizer.ggml.add_bos_token is set but the file has no BOS token");
    if (add_eos && !eos) throw ModelError(file + ": tokenizer.ggml.add_eos_token is set but the file has no EOS token");
    auto tok = std::make_unique<HfTokenizer>(root, json(), file + " (tokenizer.ggml.*)", &tables);
    tok->set_special_tokens(bos, eos, add_bos ? std::vector<TokenId>{*bos} : std::vector<TokenId>{},
                            add_eos ? std::vector<TokenId>{*eos} : std::vector<TokenId>{});
    return tok;
}

// The Hugging Face pipelines journey recognises, each with its value of the table above.
struct HfPreSignature {
    std::string_view pre;                         // tokenizer.ggml.pre
    std::vector<std::string_view> contains;        // in the pre_tokenizer's JSON text
    std::vector<std::string_view> families;        // only for these model_types (empty: any)
};
const HfPreSignature hf_pre_signatures[] = {
    {"smollm", {"\"Digits\"", "\"individual_digits\":true", "\"ByteLevel\""}, {}},
    {"llama-bpe", {"\\\\p{N}{1,3}", "(?i:'s|'t|'re|'ve|'m|'ll|'d)"}, {}},
    // Qwen3.5: letters with their combining marks ([\p{L}\p{M}]+), llama.cpp's "qwen35"
    {"qwen35", {"[\\\\p{L}\\\\p{M}]+", "(?i:'s|'t|'re|'ve|'m|'ll|'d)"}, {"qwen3_5", "qwen3_5_moe"}},
    {"qwen2", {"\\\\p{N}", "(?i:'s|'t|'re|'ve|'m|'ll|'d)"}, {"qwen2", "qwen3", "qwen3_moe", "qwen3_next"}},
    // o200k (gpt-oss's o200k_harmony, Phi-4-mini's o200k_base): case-split words with their contractions, digits by three.
    {"gpt-4o", {"\\\\p{Lu}\\\\p{Lt}\\\\p{Lm}\\\\p{Lo}\\\\p{M}", "'s|'S|'t|'T|'re|'rE|'Re|'RE", "\\\\p{N}{1,3}"}, {"gpt_oss", "phi3"}},
};

}  // namespace

std::string gguf_pre_of_tokenizer_json(const json& tj, std::string_view family, const std::string& file) {
    const json pre = tj.value("pre_tokenizer", json());
    std::string found;
    // GPT-2's plain ByteLevel (also a GPT-NeoX/Pythia directory's: the same regex)
    if ((family == "gpt2" || family == "gpt_neox") && pre.value("type", "") == "ByteLevel") found = "gpt-2";
    // OLMoE's GPT-NeoX-style vocabulary: llama.cpp's converter names it "olmo" (GPT-2's regex)
    if (family == "olmoe" && pre.value("type", "") == "ByteLevel") found = "olmo";
    const std::string dump = pre.dump();
    for (const HfPreSignature& s : hf_pre_signatures) {
        if (!found.empty()) break;
        bool all = true;
        for (std::string_view part : s.contains) all = all && dump.find(part) != std::string::npos;
        bool family_ok = s.families.empty();
        for (std::string_view f : s.families) family_ok = family_ok || f == family;
        if (all && family_ok) found = s.pre;
    }
    if (found.empty())
        throw ModelError(file + ": its BPE pre-tokenizer is not one journey recognises (journey converts GPT-2, Llama 3, Qwen2/3, Qwen3.5, SmolLM and gpt-oss (o200k) ones)");
    pre_tokenizer_set(found, file);  // a value the reader knows
    return found;
}

std::unique_ptr<Tokenizer> load_tokenizer_from_gguf(const ModelFile& mf) {
    auto it = mf.metadata.find("tokenizer.ggml.model");
    if (it == mf.metadata.end() || !it->is_string())
        throw ModelError(mf.path.string() + ": no tokenizer in the file (tokenizer.ggml.model is missing)");
    const std::string model = it->get<std::string>();
    if (model == "llama") return SpmTokenizer::from_gguf(mf);
    if (model == "gpt2") return gpt2_from_gguf(mf);
    if (model == "gemma4") return gpt2_from_gguf(mf, true);
    throw ModelError(mf.path.string() + ": unsupported tokenizer model '" + excerpt(model, 40) + "' (journey knows llama, gpt2, gemma4)");
}

}  // namespace journey
