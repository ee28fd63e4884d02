// config.json: depth-limited JSON, then the Hugging Face configuration (GPT-2 or Llama).
#include "fuzz_common.h"
#include "journey/formats/json_file.h"
#include "journey/model/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace journey;
    fuzz::refusal_ok([&] {
        const nlohmann::json j = parse_json(fuzz::as_text(data, size), "config.json");
        const ModelConfig c = config_from_hf(j, "config.json");
        fuzz::require(c.n_layer > 0 && c.n_head > 0 && c.n_embd % c.n_head == 0, "a validated config is sane");
    });
    return 0;
}
