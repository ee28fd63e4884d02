// gpt2-tiny, the reference checkpoint of tests/data/reference that the model, decode and trace
// tests run: where it is, what the float64 reference computed for it, and the model itself.
#pragma once
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_run.h"
#include "journey/model/model.h"

namespace journey::test {

inline const std::string ref_dir = data_dir() + "/reference";

// gpt2-tiny.expected.json (tests/data/README.md), read once.
inline const nlohmann::json& gpt2_tiny_expected() {
    static const nlohmann::json j = nlohmann::json::parse(std::ifstream(ref_dir + "/gpt2-tiny.expected.json"));
    return j;
}

// The model with its tokenizer, and its weights alone; each loaded once.
inline const Model& gpt2_tiny() {
    static const auto m = Model::load(ref_dir + "/gpt2-tiny");
    return *m;
}
inline const Model& gpt2_tiny_weights() {
    static const auto m = Model::load(ref_dir + "/gpt2-tiny", LoadOptions{.tokenizer = false});
    return *m;
}

}  // namespace journey::test
