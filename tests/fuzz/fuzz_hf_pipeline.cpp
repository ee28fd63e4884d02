// Hugging Face tokenizer.json pipelines with real vocabularies (tests/data/tokenizers: Llama 3,
// Qwen2, Mistral v0.3, GPT-NeoX, StarCoder; Phi-3's file there holds no vocabulary of its own)
// on any text: the first byte picks the tokenizer, the rest is the text. Ids stay in the vocabulary; invalid UTF-8 is refused
// (InputError); for the byte-level pipelines without a normalizer (Llama 3, StarCoder),
// encode -> decode gives back exactly the text whose every byte has a token of its own (StarCoder's
// vocabulary lacks 0xC0, 0xC1, 0xF1, 0xF5..0xFF; HF's BPE drops such a byte, and so do we).
#include <algorithm>
#include <array>

#include "fuzz_common.h"
#include "journey/text/tokenizer_loader.h"
#include "journey/text/unicode.h"

namespace {

struct Entry {
    std::unique_ptr<journey::Tokenizer> tok;
    bool round_trip;
    std::array<bool, 256> has_byte{};  // a token whose bytes are this one byte
};
std::array<Entry, 5> toks;

}  // namespace

// Loading the five vocabularies takes seconds under the sanitizers: before the first input, outside
// libFuzzer's per-input -timeout.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
    const char* names[] = {"llama3", "qwen2", "mistral-v0.3", "gptneox", "starcoder"};
    for (size_t i = 0; i < toks.size(); ++i) {
        toks[i].tok = journey::load_tokenizer_json(std::string(JOURNEY_FUZZ_DATA "/tokenizers/") + names[i] + "/tokenizer.json");
        toks[i].round_trip = i == 0 || i == 4;
        for (journey::TokenId id = 0; id < toks[i].tok->n_vocab(); ++id)
            if (const std::string b = toks[i].tok->token_bytes(id); b.size() == 1) toks[i].has_byte[uint8_t(b[0])] = true;
    }
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace journey;
    if (size == 0) return 0;
    const Entry& e = toks[data[0] % toks.size()];
    const std::string_view text = fuzz::as_text(data + 1, size - 1);
    for (bool special : {false, true}) {
        fuzz::refusal_ok([&] {
            const auto ids = e.tok->encode(text, special);
            fuzz::require(unicode::is_valid_utf8(text), "only valid UTF-8 is encoded");
            for (TokenId id : ids) fuzz::require(id >= 0 && id < e.tok->n_vocab(), "ids are inside the vocabulary");
            const std::string back = e.tok->decode(ids);
            const bool covered = std::all_of(text.begin(), text.end(), [&](char c) { return e.has_byte[uint8_t(c)]; });
            if (e.round_trip && covered && !special) fuzz::require(back == text, "encode -> decode gives the text back");
        });
    }
    return 0;
}
