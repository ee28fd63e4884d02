// Streaming UTF-8: never a character in halves, never a byte lost.
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "journey/text/tokenizer.h"
#include "journey/text/utf8_stream.h"

using namespace journey;

TEST_CASE("ASCII passes straight through", "[utf8]") {
    Utf8Stream s;
    CHECK(s.feed("hello") == "hello");
    CHECK(s.pending().empty());
    CHECK(s.flush().empty());
}

TEST_CASE("a split character waits for its rest", "[utf8]") {
    Utf8Stream s;
    CHECK(s.feed("caf\xC3") == "caf");
    CHECK(s.pending() == "\xC3");
    CHECK(s.feed("\xA9!") == "\xC3\xA9!");
}

TEST_CASE("a 4-byte emoji split every way", "[utf8]") {
    const std::string emoji = "\xF0\x9F\x98\x80";  // U+1F600
    for (size_t cut = 1; cut < 4; ++cut) {
        Utf8Stream s;
        CHECK(s.feed(emoji.substr(0, cut)).empty());
        CHECK(s.feed(emoji.substr(cut) + "x") == emoji + "x");
    }
    Utf8Stream s;  // one byte at a time
    CHECK(s.feed("\xF0").empty());
    CHECK(s.feed("\x9F").empty());
    CHECK(s.feed("\x98").empty());
    CHECK(s.feed("\x80") == emoji);
}

TEST_CASE("invalid bytes are flushed as soon as they cannot become valid", "[utf8]") {
    Utf8Stream s;
    SECTION("a stray continuation byte") { CHECK(s.feed("\x80" "abc") == "\x80" "abc"); }
    SECTION("a lead byte followed by ASCII") { CHECK(s.feed("\xC3(") == "\xC3("); }
    SECTION("overlong C0 / C1") { CHECK(s.feed("\xC0\xAF") == "\xC0\xAF"); }
    SECTION("overlong E0 80") { CHECK(s.feed("\xE0\x80") == "\xE0\x80"); }
    SECTION("a surrogate ED A0") { CHECK(s.feed("\xED\xA0") == "\xED\xA0"); }
    SECTION("above U+10FFFF: F4 90 and F5") {
        CHECK(s.feed("\xF4\x90") == "\xF4\x90");
        CHECK(s.feed("\xF5") == "\xF5");
    }
    SECTION("a truncated 3-byte sequence, then a valid character") {
        CHECK(s.feed("\xE2\x82") == "");
        CHECK(s.feed("\xC3\xA9") == "\xE2\x82\xC3\xA9");
    }
    CHECK(s.pending().empty());
}

TEST_CASE("flush returns the incomplete tail as-is", "[utf8]") {
    Utf8Stream s;
    CHECK(s.feed("a\xE2\x82") == "a");
    CHECK(s.pending() == "\xE2\x82");
    CHECK(s.flush() == "\xE2\x82");
    CHECK(s.pending().empty());
    CHECK(s.flush().empty());
}

TEST_CASE("utf8_complete_prefix", "[utf8]") {
    CHECK(utf8_complete_prefix("") == 0);
    CHECK(utf8_complete_prefix("ab") == 2);
    CHECK(utf8_complete_prefix("ab\xF0\x9F\x98") == 2);
    CHECK(utf8_complete_prefix("\xE2\x82\xAC") == 3);  // the euro sign
    CHECK(utf8_complete_prefix("\xFF\xE2") == 1);
}

TEST_CASE("any split loses no byte and cuts no valid character", "[utf8]") {
    // Valid text of every width, with invalid bytes mixed in.
    const std::string text = "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80" "b\x80\xC3(\xE0\x80\xED\xA0\xF4\x90z\xE4\xB8\xAD";
    std::mt19937 rng(3);
    for (int trial = 0; trial < 500; ++trial) {
        Utf8Stream s;
        std::string out;
        for (size_t i = 0; i < text.size();) {
            const size_t n = std::min<size_t>(1 + rng() % 4, text.size() - i);
            const std::string chunk = s.feed(text.substr(i, n));
            // What comes out never ends inside a valid character.
            CHECK(utf8_complete_prefix(chunk) == chunk.size());
            out += chunk;
            i += n;
        }
        out += s.flush();
        REQUIRE(out == text);
    }
}

TEST_CASE("valid UTF-8 fed in pieces comes out in valid pieces", "[utf8]") {
    const std::string text = "Grüße, 世界! \xF0\x9F\x91\x8B";
    std::mt19937 rng(5);
    for (int trial = 0; trial < 200; ++trial) {
        Utf8Stream s;
        for (size_t i = 0; i < text.size();) {
            const size_t n = std::min<size_t>(1 + rng() % 3, text.size() - i);
            const std::string chunk = s.feed(text.substr(i, n));
            CHECK(valid_utf8(chunk) == chunk);
            i += n;
        }
        CHECK(s.flush().empty());
    }
}
