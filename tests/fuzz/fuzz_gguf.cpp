// GGUF: header, metadata, tensor table; then the configuration, the tokenizer in the metadata and
// the weight binding (Model::load), as `journey -m file.gguf` reads them.
#include "fuzz_common.h"
#include "journey/formats/gguf_reader.h"
#include "journey/model/model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace journey;
    const auto path = fuzz::write_scratch("model.gguf", fuzz::as_text(data, size));
    fuzz::refusal_ok([&] { Model::load(path, LoadOptions{.tokenizer = true}); });
    return 0;
}
