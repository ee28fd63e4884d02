// The ids a model-running command feeds the model for a prompt: its text through the model's
// tokenizer, or --ids as given.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common.h"
#include "journey/model/model.h"

namespace journey::cli {

// What the user gave, read before the model loads (so a bad prompt fails fast): the text, or
// the ids of --ids (syntax checked here, range checked against the model by prompt_ids).
struct PromptInput {
    std::string text;
    std::optional<std::vector<TokenId>> ids;
};
PromptInput read_prompt_input(const PromptSource& src);

// "1 2 3", "1,2,3" or a JSON array "[1, 2, 3]" -> ids. Throws InputError naming `flag` for a
// word that is not a non-negative integer.
std::vector<TokenId> parse_id_list(std::string_view text, std::string_view flag);
// Throws InputError naming `flag` for an id outside [0, n_vocab).
void check_ids(const std::vector<TokenId>& ids, int32_t n_vocab, std::string_view flag);

// The prompt's ids: --ids exactly, or the text encoded (BOS, or <|endoftext|> when empty).
// A prompt longer than `limit` (the context in use; default the model's context) is an InputError, or with
// `truncate` cut to its last `limit` ids.
std::vector<TokenId> prompt_ids(const Model& m, const PromptInput& in, bool truncate, size_t limit = 0);

}  // namespace journey::cli
