// Showing token bytes to a human (visible escapes) and to JSON (exact bytes).
#pragma once
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "journey/text/tokenizer.h"

namespace journey {

// Bytes with visible escapes: space -> "␣", \n \t \r as escapes, other control bytes and
// invalid UTF-8 as \xNN, backslash as "\\". Valid non-ASCII UTF-8 is kept.
std::string visible_token(std::string_view bytes);

// The exact bytes as a JSON array of integers 0..255 (byte-level pieces may be partial UTF-8).
nlohmann::json bytes_json(std::string_view bytes);

// {"id", "token" (valid UTF-8, U+FFFD for a partial character), "bytes" (exact)}, plus
// "special": true for the tokenizer's BOS and EOS.
nlohmann::ordered_json token_json(const Tokenizer& tok, TokenId id);

}  // namespace journey
