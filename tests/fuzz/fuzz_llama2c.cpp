// llama2.c checkpoint: the 7-int header and the tensors it implies; then config and binding.
#include "fuzz_common.h"
#include "journey/model/model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace journey;
    const auto path = fuzz::write_scratch("model.bin", fuzz::as_text(data, size));
    fuzz::refusal_ok([&] { Model::load(path, LoadOptions{.tokenizer = false}); });
    return 0;
}
