// tokenizer.json's "decoder": token strings back to text, as Hugging Face tokenizers decodes:
// ByteLevel, Metaspace, ByteFallback, Fuse, Strip, Replace, and a Sequence of them, each a step
// over the list of token strings. Unlike the library, bytes stay exact: ByteLevel and
// ByteFallback give the raw bytes, with no U+FFFD put in for invalid UTF-8.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "journey/text/hf/part.h"

namespace journey {

class Decoder {
public:
    virtual ~Decoder() = default;
    // continuation: the tokens continue a text decoded before (one token of a stream), so what
    // the library does only at the start of a text (Metaspace dropping the first token's "▁",
    // Strip after Fuse) is not done.
    virtual void decode_chain(std::vector<std::string>& tokens, bool continuation) const = 0;
    // Whether the step joins the tokens into one (what follows then sees the whole text).
    virtual bool fuses() const { return false; }
};

// The decoder a tokenizer.json part describes; nullptr for null (tokens are then joined as
// they are). ModelError for an unknown type or a missing field.
std::unique_ptr<Decoder> make_decoder(const HfPart& part);

}  // namespace journey
