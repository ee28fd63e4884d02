// The NFC, NFD, NFKC and NFKD normalizers pass ASCII through and send only the non-ASCII runs
// (each with the ASCII character before it) to utf8proc; on a large generated corpus (fixed
// seed), built from the characters normalization changes, reorders or composes, that gives
// exactly what utf8proc gives for the whole text at once.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <utf8proc.h>

#include "journey/text/hf/normalizer.h"

using namespace journey;

namespace {

const std::vector<std::string> kAlphabet = {
    "a", "e", "E", "o", "A", "n", "u", "s", "K", "1", "2", "f", "i", " ", "  ", "\n", "\t", ".", "'", "-", "\r\n",
    "\xcc\x81",          // U+0301 combining acute (ccc 230)
    "\xcc\x80",          // U+0300 combining grave (230)
    "\xcc\xa7",          // U+0327 combining cedilla (202)
    "\xcc\xa3",          // U+0323 combining dot below (220)
    "\xcc\x9b",          // U+031B combining horn (216)
    "\xcc\x88",          // U+0308 combining diaeresis
    "\xcd\x84",          // U+0344 (decomposes to two marks)
    "\xcc\x8a",          // U+030A combining ring above
    "\xc3\xa9",          // é
    "\xc3\x85",          // Å
    "\xe1\xbb\x87",      // ệ
    "\xe2\x84\xab",      // U+212B angstrom sign (singleton to Å)
    "\xe2\x84\xa6",      // U+2126 ohm sign (singleton to Ω)
    "\xe2\x84\xaa",      // U+212A kelvin sign (singleton to K)
    "\xe1\x84\x80",      // U+1100 Hangul leading jamo
    "\xe1\x85\xa1",      // U+1161 vowel jamo
    "\xe1\x86\xa8",      // U+11A8 trailing jamo
    "\xea\xb0\x80",      // U+AC00 가 (LV syllable)
    "\xea\xb0\x81",      // U+AC01 각 (LVT)
    "\xef\xac\x81",      // U+FB01 ﬁ
    "\xef\xbc\xa5",      // U+FF25 fullwidth E
    "\xef\xbd\x85",      // U+FF45 fullwidth e
    "\xc2\xb2",          // ²
    "\xc2\xbd",          // ½
    "\xe3\x8e\x8f",      // U+338F ㎏
    "\xe0\xa5\x98",      // U+0958 (composition exclusion)
    "\xe0\xa4\x95\xe0\xa4\xbc",  // क + nukta
    "\xe4\xb8\xad",      // 中
    "\xef\xa4\x80",      // U+F900 CJK compatibility ideograph
    "\xf0\x9f\x98\x80",  // 😀
    "\xc2\xa0",          // no-break space (NFKC: space)
    "\xe2\x80\xa8",      // line separator
    "\xcf\x92\xcc\x81",  // ϒ + acute (NFKC composes across a compatibility decomposition)
};

std::string utf8proc_whole(const std::string& text, int options) {
    utf8proc_uint8_t* out = nullptr;
    const auto n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()),
                                static_cast<utf8proc_ssize_t>(text.size()), &out, static_cast<utf8proc_option_t>(options));
    REQUIRE(n >= 0);
    std::string s(reinterpret_cast<const char*>(out), static_cast<size_t>(n));
    std::free(out);
    return s;
}

}  // namespace

TEST_CASE("Unicode normalization forms, run by run, equal utf8proc's on the whole text", "[hf-tokenizer][stages][normalizer]") {
    const std::pair<const char*, int> forms[] = {
        {"NFC", UTF8PROC_STABLE | UTF8PROC_COMPOSE},
        {"NFD", UTF8PROC_STABLE | UTF8PROC_DECOMPOSE},
        {"NFKC", UTF8PROC_STABLE | UTF8PROC_COMPOSE | UTF8PROC_COMPAT},
        {"NFKD", UTF8PROC_STABLE | UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT},
    };
    for (const auto& [type, options] : forms) {
        const auto normalizer = make_normalizer(HfPart{"test.json", "normalizer", nlohmann::json{{"type", type}}});
        std::mt19937 rng(20261203);
        size_t changed = 0;
        for (int i = 0; i < 20000; ++i) {
            std::string text;
            const size_t parts = rng() % 24;
            for (size_t k = 0; k < parts; ++k) text += kAlphabet[rng() % kAlphabet.size()];
            const std::string expected = utf8proc_whole(text, options);
            std::string got = text;
            normalizer->normalize(got);
            INFO(type << " on \"" << text << "\"");
            REQUIRE(got == expected);
            changed += expected != text;
        }
        CHECK(changed > 5000);  // the corpus exercises the normalization, not only the copying
    }
}
