#include <catch2/catch.hpp>

#include "journey/text/token_display.h"

using journey::visible_token;

TEST_CASE("visible_token escapes what a terminal would hide", "[cli][display]") {
    CHECK(visible_token(" the") == "\xE2\x90\xA3the");
    CHECK(visible_token("a\nb\tc\r") == "a\\nb\\tc\\r");
    CHECK(visible_token("back\\slash") == "back\\\\slash");
    CHECK(visible_token(std::string("\x01\x7f", 2)) == "\\x01\\x7F");
    CHECK(visible_token("caf\xC3\xA9") == "caf\xC3\xA9");       // valid UTF-8 kept
    CHECK(visible_token("\xE2\x80") == "\\xE2\\x80");           // a partial character, as bytes
    CHECK(visible_token("") == "");
}
