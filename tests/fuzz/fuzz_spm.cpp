// SentencePiece-style BPE (llama2.c's 512-token tokenizer of stories260K) on any bytes: never
// crashes, and every id it gives is in the vocabulary.
#include "fuzz_common.h"
#include "journey/text/spm_tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace journey;
    static const auto tok = SpmTokenizer::from_llama2c(JOURNEY_SOURCE_DIR "/tests/data/models/stories260K/tok512.bin");
    const std::string_view text = fuzz::as_text(data, size);
    for (bool special : {false, true}) {
        const auto ids = tok->encode(text, special);
        for (TokenId id : ids) fuzz::require(id >= 0 && id < tok->n_vocab(), "ids are inside the vocabulary");
        tok->decode(ids);
    }
    return 0;
}
