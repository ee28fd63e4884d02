// GPT-2's vocab.json + merges.txt: the input is both files, split at its first NUL byte.
#include "fuzz_common.h"
#include "journey/text/tokenizer_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace journey;
    const std::string_view in = fuzz::as_text(data, size);
    const size_t nul = std::min(in.find('\0'), in.size());
    const auto vocab = fuzz::write_scratch("vocab.json", in.substr(0, nul));
    const auto merges = fuzz::write_scratch("merges.txt", nul < in.size() ? in.substr(nul + 1) : std::string_view());
    fuzz::refusal_ok([&] {
        const auto tok = load_bpe_from_files(vocab.string(), merges.string());
        const std::string text = "Hello world, it's 2024! <|endoftext|> \xff\xfe";
        fuzz::require(tok->decode(tok->encode(text, false)) == text, "encode -> decode gives the bytes back");
    });
    return 0;
}
