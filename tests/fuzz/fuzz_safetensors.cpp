// safetensors: 8-byte header length, JSON header, data (read_safetensors).
#include "fuzz_common.h"
#include "journey/formats/safetensors_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace journey;
    const auto path = fuzz::write_scratch("model.safetensors", fuzz::as_text(data, size));
    fuzz::refusal_ok([&] {
        const ModelFile mf = read_safetensors(path);
        for (const auto& [name, t] : mf.tensors)  // every tensor the reader accepts lies inside the file
            fuzz::require(t.nbytes == dtype_bytes(t.dtype, uint64_t(t.numel())), "tensor bytes match its shape");
    });
    return 0;
}
