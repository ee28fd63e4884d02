// GPT-2's byte-to-unicode map: each of the 256 byte values as a printable character, so that
// vocab.json and merges.txt can hold arbitrary bytes as text ("Ġ" is the space byte 0x20).
#pragma once
#include <string>
#include <string_view>

namespace journey {

// Raw bytes -> their byte-to-unicode form (UTF-8).
std::string bytes_to_unicode(std::string_view bytes);
// Byte-to-unicode form -> raw bytes. A character outside the map keeps its own UTF-8 bytes,
// as Hugging Face's ByteLevel decoder does.
std::string unicode_to_bytes(std::string_view text);
// The same, written to `out`, which has room for text.size() bytes (the raw bytes are never
// longer); returns the end of what it wrote.
char* unicode_to_bytes(std::string_view text, char* out);
// The same for text whose every character is in the map (text bytes_to_unicode() can give);
// nullptr, with `out` partly written, for any other text.
char* byte_level_to_bytes(std::string_view text, char* out);

}  // namespace journey
