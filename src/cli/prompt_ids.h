// The ids a model-running command feeds the model for a prompt.
#pragma once
#include <string>
#include <vector>

#include "journey/model/model.h"

namespace journey::cli {

// The prompt's ids; <|endoftext|> (or BOS) for an empty prompt; the last n_ctx ids (the
// context in use) with `truncate`. Throws InputError when the prompt is too long and truncate is off.
std::vector<TokenId> prompt_ids(const Model& m, const std::string& text, bool truncate, int n_ctx);

}  // namespace journey::cli
