// Text -> the ids a model is run on. One rule for next, generate and score:
//   - the tokenizer's special_prefix() comes first (BOS for Llama/SPM, a tokenizer.json
//     template's leading tokens); a template's trailing tokens (EOS) are not added to a prompt;
//   - an empty text for a tokenizer without BOS (GPT-2) is conditioned on its end-of-text
//     token (<|endoftext|>), the separator GPT-2 saw between documents in training.
#pragma once
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "journey/text/tokenizer.h"

namespace journey {

// The token that marks "start of a text" for this tokenizer: bos_id() when it has one,
// else eos_id() (GPT-2's <|endoftext|> serves both). nullopt when it has neither.
std::optional<TokenId> start_token(const Tokenizer& tok);

// Throws InputError when the text is empty and there is no start token to condition on.
std::vector<TokenId> encode_prompt(const Tokenizer& tok, std::string_view text, bool parse_special = true);

// llama2.c's rule for showing a continuation: after a lone BOS the text starts, and the
// SentencePiece space prefix of the first generated piece ("▁Once" -> "Once") is dropped.
// True when `prompt` is just BOS of a tokenizer that adds one.
bool drops_first_space(const Tokenizer& tok, std::span<const TokenId> prompt);

}  // namespace journey
