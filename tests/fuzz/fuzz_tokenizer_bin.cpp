// llama2.c's tokenizer.bin, then a short text through the tokenizer it makes.
#include "fuzz_common.h"
#include "journey/text/spm_tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace journey;
    const auto path = fuzz::write_scratch("tokenizer.bin", fuzz::as_text(data, size));
    fuzz::refusal_ok([&] {
        const auto tok = SpmTokenizer::from_llama2c(path);
        for (TokenId id : tok->encode("Once upon a time <s> \xe2\x96\x81 \xff"))
            fuzz::require(id >= 0 && id < tok->n_vocab(), "ids are inside the vocabulary");
    });
    return 0;
}
