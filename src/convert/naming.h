// gguf-py's Metadata heuristics for general.* names (naming.cpp).
#pragma once
#include <cstdint>
#include <string>

namespace journey {

// A model id ("org/Name-1.7B-Instruct") split as gguf-py does.
struct IdParts {
    std::string full, basename, finetune, version, size_label;
};
IdParts model_id_parts(const std::string& model_id, int64_t total_params);
// Python's str.title() of an id's words, versions kept ("smollm2-135m" -> "Smollm2 135m").
std::string id_to_title(const std::string& s);
// The parameter count in 2 significant digits at least ("541K", "1.7M").
std::string size_label(int64_t n);

}  // namespace journey
