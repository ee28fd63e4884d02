// config.json: depth-limited JSON, then the Hugging Face configuration (GPT-2 or Llama).
#include "fuzz_common.h"
#include "journey/formats/json_file.h"
#include "journey/model/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace journey;
    fuzz::refusal_ok([&] {
        const nlohmann::json j = parse_json(fuzz::as_text(data, size), "config.json");
        const ModelConfig c = config_from_hf(j, "config.json");
        fuzz::require(c.n_layer > 0 && c.n_head > 0 && c.head_dim > 0 && c.n_kv_head > 0 && c.n_head % c.n_kv_head == 0 &&
                          c.n_ff > 0 && c.n_vocab > 0 && c.n_ctx > 0 && c.norm_eps > 0.0f && c.norm_eps < 1.0f,
                      "a validated config is sane");
    });
    return 0;
}
