// A sharded checkpoint's model.safetensors.index.json, beside one valid shard.
#include "fuzz_common.h"
#include "journey/formats/safetensors_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace journey;
    static const bool shard = [] {
        // One F32 tensor "a" of shape [2]: header {"a": ...} padded to 8 bytes, then 8 bytes of data.
        std::string h = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
        while (h.size() % 8) h += ' ';
        std::string file(8, '\0');
        for (int i = 0; i < 8; ++i) file[size_t(i)] = char((h.size() >> (8 * i)) & 0xff);
        fuzz::write_scratch("model-00001-of-00001.safetensors", file + h + std::string(8, '\0'));
        return true;
    }();
    (void)shard;
    const auto path = fuzz::write_scratch("model.safetensors.index.json", fuzz::as_text(data, size));
    fuzz::refusal_ok([&] { read_safetensors(path); });
    return 0;
}
