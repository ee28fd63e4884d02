// Hugging Face's tokenizer.json (byte-level BPE, or SentencePiece-style BPE), then a short text.
#include "fuzz_common.h"
#include "journey/text/tokenizer_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace journey;
    const auto path = fuzz::write_scratch("tokenizer.json", fuzz::as_text(data, size));
    fuzz::refusal_ok([&] {
        const auto tok = load_tokenizer_json(path.string());
        for (TokenId id : tok->encode("Hello world <s> <|endoftext|> \xe2\x96\x81x \xff"))
            fuzz::require(id >= 0 && id < tok->n_vocab(), "ids are inside the vocabulary");
    });
    return 0;
}
