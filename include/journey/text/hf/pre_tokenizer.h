// tokenizer.json's "pre_tokenizer": cuts each stretch of normalized text into the pieces the
// model tokenizes one by one, as Hugging Face tokenizers does: ByteLevel, Split (a string or an
// Oniguruma regex, every behavior, invert), Digits, Metaspace, Whitespace, WhitespaceSplit,
// Punctuation, and a Sequence of them. Other types are refused.
//
// Pieces stream: a stage hands each piece it makes to the next stage (or to the model) through a
// callback, so nothing is collected for a long text. Empty pieces are dropped, as HF drops them.
// ByteLevel maps every byte to a printable character in HF; here the pieces stay raw bytes and
// the model reads its byte-level vocabulary as raw bytes instead (the same tokens, without the
// mapping and back), so ByteLevel must be the last stage.
#pragma once
#include <memory>
#include <string_view>

#include "journey/text/hf/part.h"

namespace journey {

// at_start: the piece starts at offset 0 of the original text (Metaspace's prepend_scheme
// "first" prepends only there).
using PieceSink = FunctionRef<void(std::string_view piece, bool at_start)>;

class PreTokenizer {
public:
    virtual ~PreTokenizer() = default;
    virtual void split(std::string_view piece, bool at_start, PieceSink emit) const = 0;
    // Whether the model sees raw bytes (a ByteLevel stage) rather than characters.
    virtual bool byte_level() const { return false; }
};

// The pre-tokenizer a tokenizer.json part describes; nullptr for null. ModelError for an
// unknown type, a missing field, an invalid regex, or a ByteLevel stage that is not the last.
std::unique_ptr<PreTokenizer> make_pre_tokenizer(const HfPart& part);

}  // namespace journey
