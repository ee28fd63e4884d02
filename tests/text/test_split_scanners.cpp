// The hand-written scanners for GPT-2's, Llama 3's and Qwen2's Split patterns cut text exactly
// as Oniguruma (the engine Hugging Face tokenizers runs those patterns with) does, on a large
// generated corpus (fixed seed) built from the characters these patterns tell apart.
#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <vector>

#include "journey/text/onig_regex.h"
#include "journey/text/split_scanners.h"

using namespace journey;

namespace {

// Pieces that matter to the patterns: each class of character, in ASCII and beyond, contractions
// in both cases (and with "ſ", which (?i) folds to "s"), runs of digits, every kind of space.
const std::vector<std::string> kScannerAlphabet = {
    "a", "Z", "word", "The", "0", "7", "12", "2024", "123456", " ", " ", "  ", "\t", "\n", "\r\n", "\r", "\n\n",
    "\x0b", "\x0c", "'", "'s", "'S", "'t", "'T", "'re", "'RE", "'Ve", "'m", "'M", "'ll", "'LL", "'d", "'D", "'x",
    "'\xc5\xbf", "\"", ".", ",", "!", "?", "...", "-", "_", "(", ")", "$", "#", "@", "/", "\\",
    "\xc3\xa9",          // é
    "e\xcc\x81",         // e + combining acute (a mark: neither letter nor number)
    "\xc3\x9f",          // ß
    "\xd0\x96\xd0\xb8",  // Жи
    "\xe4\xb8\xad\xe6\x96\x87",  // 中文
    "\xd9\xa3",          // ٣ Arabic-Indic three (Nd)
    "\xc2\xb2",          // ² (No)
    "\xe2\x85\xab",      // Ⅻ (Nl)
    "\xc2\xa0",          // no-break space
    "\xe3\x80\x80",      // ideographic space
    "\xe2\x80\xa8",      // line separator
    "\xc2\x85",          // next line (U+0085: white space)
    "\xef\xbb\xbf",      // U+FEFF (not white space)
    "\xe2\x80\x8b",      // zero-width space (not white space)
    "\xf0\x9f\x98\x80",  // 😀
    "\xf0\x9f\x91\x8d\xf0\x9f\x8f\xbd",  // 👍🏽
    "\xe2\x82\xac",      // €
};

std::vector<std::string> corpus(size_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::vector<std::string> texts;
    for (size_t i = 0; i < n; ++i) {
        std::string t;
        const size_t parts = rng() % 24;
        for (size_t k = 0; k < parts; ++k) t += kScannerAlphabet[rng() % kScannerAlphabet.size()];
        texts.push_back(std::move(t));
    }
    return texts;
}

std::vector<std::pair<size_t, size_t>> scanned(PieceScanner scan, std::string_view text) {
    std::vector<std::pair<size_t, size_t>> pieces;
    for (size_t pos = 0; pos < text.size();) {
        const size_t end = scan(text, pos);
        REQUIRE(end > pos);
        pieces.emplace_back(pos, end);
        pos = end;
    }
    return pieces;
}

}  // namespace

TEST_CASE("the Split scanners cut exactly as Oniguruma on a generated corpus", "[hf-tokenizer][scanners]") {
    const auto texts = corpus(30000, 20240515);
    for (const auto pattern : {kGpt2Pattern, kLlama3Pattern, kQwen2Pattern, kLlama3CppPattern, kQwen2CppPattern}) {
        const PieceScanner scan = scanner_for_pattern(pattern);
        REQUIRE(scan != nullptr);
        const OnigRegex regex(pattern);
        size_t differ = 0, pieces = 0;
        for (const std::string& text : texts) {
            std::vector<std::pair<size_t, size_t>> expected;
            regex.find_all(text, expected);
            const auto got = scanned(scan, text);
            pieces += got.size();
            if (got != expected && ++differ <= 3) {
                INFO("pattern " << pattern << "\ntext \"" << text << "\"");
                CHECK(got == expected);
            }
        }
        INFO("pattern " << pattern << ": " << differ << " of " << texts.size() << " texts differ");
        CHECK(differ == 0);
        CHECK(pieces > 100000);
    }
}

TEST_CASE("a pattern that differs by one character gets no scanner", "[hf-tokenizer][scanners]") {
    std::string almost(kLlama3Pattern);
    almost.back() = '*';
    CHECK(scanner_for_pattern(almost) == nullptr);
    CHECK(scanner_for_pattern(kQwen2Pattern) != scanner_for_pattern(kLlama3Pattern));
}
