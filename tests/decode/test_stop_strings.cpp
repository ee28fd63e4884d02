// Stop strings across token boundaries: show what is safe, never the stop string itself.
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "journey/errors.h"
#include "journey/decode/stop_strings.h"

using namespace journey;

TEST_CASE("scan_stops", "[stop]") {
    const std::vector<std::string> stops{"END", "\n\n"};
    SECTION("nothing like a stop: all safe") {
        const auto s = scan_stops("hello", stops);
        CHECK_FALSE(s.stop_at);
        CHECK(s.safe == 5);
    }
    SECTION("a tail that may start a stop is held") {
        CHECK(scan_stops("helloEN", stops).safe == 5);
        CHECK(scan_stops("hello\n", stops).safe == 5);
        CHECK(scan_stops("helloE", stops).safe == 5);
    }
    SECTION("a stop inside: safe up to it") {
        const auto s = scan_stops("abEND\n\n", stops);
        REQUIRE(s.stop_at);
        CHECK(*s.stop_at == 2);
        CHECK(s.safe == 2);
    }
    SECTION("the earliest stop wins") {
        const std::vector<std::string> two{"bc", "abcd"};
        const auto s = scan_stops("xabcd", two);
        REQUIRE(s.stop_at);
        CHECK(*s.stop_at == 1);
    }
    SECTION("no stops: all safe") {
        CHECK(scan_stops("abc", std::vector<std::string>{}).safe == 3);
    }
}

TEST_CASE("a stop string spanning tokens", "[stop]") {
    StopMatcher m({"END"});
    auto a = m.feed("abcE");
    CHECK(a.emit == "abc");
    CHECK_FALSE(a.stopped);
    auto b = m.feed("N");
    CHECK(b.emit.empty());
    CHECK_FALSE(b.stopped);
    auto c = m.feed("D and more");
    CHECK(c.emit.empty());
    CHECK(c.stopped);
    CHECK(m.stopped());
    // After a stop nothing more comes out.
    CHECK(m.feed("x").emit.empty());
    CHECK(m.flush().empty());
}

TEST_CASE("a stop in the middle of one token: the text before it is emitted", "[stop]") {
    StopMatcher m({"END"});
    const auto s = m.feed("fooENDbar");
    CHECK(s.emit == "foo");
    CHECK(s.stopped);
}

TEST_CASE("a held prefix that does not complete is released", "[stop]") {
    StopMatcher m({"abc"});
    CHECK(m.feed("xab").emit == "x");
    CHECK(m.feed("d").emit == "abd");
    CHECK(m.feed("ab").emit.empty());
    CHECK(m.flush() == "ab");
}

TEST_CASE("overlapping prefixes: aab in aaab", "[stop]") {
    StopMatcher m({"aab"});
    CHECK(m.feed("aa").emit.empty());
    CHECK(m.feed("a").emit == "a");
    const auto s = m.feed("b");
    CHECK(s.emit.empty());
    CHECK(s.stopped);
}

TEST_CASE("several stops, the blank line", "[stop]") {
    StopMatcher m({"\n\n", "User:"});
    CHECK(m.feed("Hello").emit == "Hello");
    CHECK(m.feed("\n").emit.empty());
    CHECK(m.feed("World").emit == "\nWorld");
    CHECK(m.feed("\nUs").emit == "\n");  // "\nU" cannot be "\n\n"; "Us" may be "User:"
    const auto s = m.feed("er: hi");
    CHECK(s.emit.empty());
    CHECK(s.stopped);
}

TEST_CASE("no stop strings: everything passes", "[stop]") {
    StopMatcher m({});
    CHECK(m.feed("anything").emit == "anything");
    CHECK(m.flush().empty());
}

TEST_CASE("an empty stop string is a usage error", "[stop]") {
    CHECK_THROWS_AS(StopMatcher({"ok", ""}), UsageError);
    CHECK_THROWS_WITH(StopMatcher({""}), Catch::Matchers::Contains("--stop"));
}

TEST_CASE("any tokenisation gives the text up to the first stop", "[stop]") {
    const std::vector<std::string> stops{"<|end|>", "###", "\n\n"};
    const std::vector<std::string> texts{
        "plain text with no stop at all",
        "some text <|end|> after",
        "a # and ## but ### here",
        "one\ntwo\n\nthree",
        "<|en <|end <|end|>",
        "###",
    };
    std::mt19937 rng(11);
    for (const auto& text : texts) {
        size_t first = std::string::npos;
        for (const auto& s : stops) first = std::min(first, text.find(s));
        const std::string expected = text.substr(0, first);
        for (int trial = 0; trial < 100; ++trial) {
            StopMatcher m(stops);
            std::string out;
            bool stopped = false;
            for (size_t i = 0; i < text.size() && !stopped;) {
                const size_t n = std::min<size_t>(1 + rng() % 5, text.size() - i);
                const auto step = m.feed(std::string_view(text).substr(i, n));
                out += step.emit;
                stopped = step.stopped;
                i += n;
            }
            if (!stopped) out += m.flush();
            INFO(text);
            REQUIRE(stopped == (first != std::string::npos));
            REQUIRE(out == expected);
        }
    }
}
