// Streaming text output: byte-level tokens often carry half a UTF-8 character (an emoji split
// over two tokens). Utf8Stream holds such a tail back until the character is complete, so a
// terminal never sees a character in halves. Bytes that can no longer become valid UTF-8
// (a stray continuation byte, an overlong or surrogate form, a truncated sequence followed by
// something else) are passed through as they are, as soon as that is certain.
#pragma once
#include <string>
#include <string_view>

namespace journey {

class Utf8Stream {
public:
    // Append bytes; return the longest prefix of everything pending that ends on a character
    // boundary (or after an invalid sequence). At most 3 bytes stay pending.
    std::string feed(std::string_view bytes);
    // End of stream: return whatever is still pending (an incomplete character, as-is).
    std::string flush();
    // Bytes held back, waiting for the rest of a character.
    const std::string& pending() const { return pending_; }

private:
    std::string pending_;
};

// How many bytes at the start of `s` can be emitted now: whole characters and invalid
// sequences, stopping before a trailing prefix of a valid character that may still complete.
size_t utf8_complete_prefix(std::string_view s);

}  // namespace journey
