// tokenizer.json's "normalizer": rewrites each stretch of text between added tokens before it is
// pre-tokenized, as Hugging Face tokenizers does: NFC, NFD, NFKC, NFKD (utf8proc), Lowercase,
// Strip, StripAccents, Replace, Prepend, and a Sequence of them. Other types are refused.
#pragma once
#include <memory>
#include <string>

#include "journey/text/hf/part.h"

namespace journey {

class Normalizer {
public:
    virtual ~Normalizer() = default;
    // text is valid UTF-8, and stays so.
    virtual void normalize(std::string& text) const = 0;
};

// The normalizer a tokenizer.json part describes; nullptr for null. ModelError for an unknown
// type, a missing field or an invalid regex.
std::unique_ptr<Normalizer> make_normalizer(const HfPart& part);

class OnigRegex;
// The "pattern" of a Replace normalizer or a Split pre-tokenizer: {"String": s} gives the literal
// s (not empty), {"Regex": r} sets regex and gives "". ModelError for an invalid regex.
std::string read_pattern(const HfPart& part, std::unique_ptr<OnigRegex>& regex);

}  // namespace journey
