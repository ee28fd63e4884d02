// Reading a tokenizer.json fast: one SAX pass builds the JSON tree of everything except
// model.vocab and model.merges (nine tenths of a big file: 128k tokens, 280k merges), which go
// straight into flat tables; building the tree of them and walking it again cost most of the
// load time. Anything those two parts hold that the tables cannot (an id that is not an integer,
// a merge that is neither "a b" nor ["a", "b"]) and any invalid JSON: the whole file is read the
// plain way instead, so that the errors are the same.
#pragma once
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "journey/text/hf/bpe_model.h"

namespace journey {

struct TokenizerJson {
    nlohmann::json root;  // model.vocab / model.merges left out when `tables.read`
    BpeTables tables;
};

// `text` read from `file` (named in errors: ModelError as parse_json gives).
TokenizerJson parse_tokenizer_json(std::string_view text, const std::string& file);
TokenizerJson read_tokenizer_json(const std::string& file);

}  // namespace journey
