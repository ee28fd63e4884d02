// GPT-2's byte-level BPE on any bytes: encode -> decode gives back exactly the input, with special
// tokens matched or not.
#include "fuzz_common.h"
#include "journey/text/tokenizer_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace journey;
    static const auto tok = load_tokenizer_dir(JOURNEY_SOURCE_DIR "/models/gpt2-tokenizer");
    const std::string_view text = fuzz::as_text(data, size);
    for (bool special : {false, true}) {
        const auto ids = tok->encode(text, special);
        for (TokenId id : ids) fuzz::require(id >= 0 && id < tok->n_vocab(), "ids are inside the vocabulary");
        fuzz::require(tok->decode(ids) == text, "encode -> decode gives the bytes back");
    }
    return 0;
}
