// FlatMap and its hashes: every byte of a key counts, and lookups survive growth.
#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <unordered_set>
#include <vector>

#include "journey/text/flat_map.h"

using namespace journey;

TEST_CASE("BytesHash reads every byte of a key, and its length", "[tokenizer][flat_map]") {
    // Every string of up to 13 bytes over two letters (16382 of them): the word reads overlap
    // but must still see each byte, so any byte they skipped would show up as equal hashes.
    std::vector<std::string> keys{""};
    for (size_t begin = 0, n = 1; n <= 13; ++n) {
        const size_t end = keys.size();
        for (size_t i = begin; i < end; ++i)
            for (char c : {'a', 'b'}) keys.push_back(keys[i] + c);
        begin = end;
    }
    std::unordered_set<uint64_t> hashes;
    for (const std::string& k : keys) hashes.insert(BytesHash{}(k));
    CHECK(hashes.size() == keys.size());
    // Zero bytes and the length: "\0", "\0\0", ... all differ.
    CHECK(BytesHash{}(std::string(1, '\0')) != BytesHash{}(std::string(2, '\0')));
    CHECK(BytesHash{}(std::string(7, '\0')) != BytesHash{}(std::string(8, '\0')));
}

TEST_CASE("FlatMap finds what it holds, replaces values, and keeps them as it grows", "[tokenizer][flat_map]") {
    std::vector<std::string> keys;
    for (int i = 0; i < 5000; ++i) keys.push_back("token" + std::to_string(i * 7919));
    FlatMap<std::string_view, int, BytesHash> map;  // starts at 16 slots: grows many times
    for (size_t i = 0; i < keys.size(); ++i) map.insert_or_assign(keys[i], int(i));
    map.insert_or_assign(keys[42], -42);
    CHECK(map.size() == keys.size());
    for (size_t i = 0; i < keys.size(); ++i) {
        const int* v = map.find(keys[i]);
        REQUIRE(v);
        CHECK(*v == (i == 42 ? -42 : int(i)));
    }
    CHECK_FALSE(map.find("token1"));
    CHECK_FALSE(map.find(""));

    FlatMap<uint64_t, int, IntHash> ints(3);
    for (uint64_t k = 0; k < 1000; ++k) ints.insert_or_assign(k << 32 | (k * 3), int(k));
    for (uint64_t k = 0; k < 1000; ++k) CHECK(*ints.find(k << 32 | (k * 3)) == int(k));
    CHECK_FALSE(ints.find(1));
}

TEST_CASE("PairMap holds (left, right) -> two values as std::map does, through growth and replacement", "[tokenizer][flat_map]") {
    PairMap map(3);  // grows many times
    std::map<uint64_t, std::pair<int32_t, int32_t>> expected;
    uint64_t x = 12345;
    for (int i = 0; i < 20000; ++i) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        // Ids from a small range, so that pairs repeat and replace; (0, 0) and the largest ids too.
        const int32_t left = i == 0 ? 0 : i == 1 ? INT32_MAX : int32_t((x >> 33) % 300);
        const int32_t right = i == 0 ? 0 : i == 1 ? INT32_MAX : int32_t((x >> 13) % 300);
        map.insert_or_assign(PairMap::key(left, right), i, -i);
        expected[PairMap::key(left, right)] = {i, -i};
    }
    CHECK(map.size() == expected.size());
    for (int32_t left = 0; left < 300; ++left)
        for (int32_t right = 0; right < 300; ++right) {
            const auto it = expected.find(PairMap::key(left, right));
            const PairMap::Entry* e = map.find(PairMap::key(left, right));
            REQUIRE((e != nullptr) == (it != expected.end()));
            if (e) CHECK((std::pair{e->a, e->b}) == it->second);
        }
    CHECK(map.find(PairMap::key(INT32_MAX, INT32_MAX)));
    CHECK_FALSE(map.find(PairMap::key(INT32_MAX, 0)));
}

TEST_CASE("IdMap finds strings kept outside it, replaces ids, and rehashes them as it grows", "[tokenizer][flat_map]") {
    std::vector<std::string> texts;
    for (int i = 0; i < 5000; ++i) texts.push_back(i % 7 ? "t" + std::to_string(i * 7919) : std::string(size_t(i % 50), 'x') + "y" + std::to_string(i));
    texts.push_back("");  // an empty string is a key like any other
    const auto text_of = [&](int32_t id) { return std::string_view(texts[size_t(id)]); };
    IdMap map(2);  // grows many times
    for (size_t i = 0; i < texts.size(); ++i) map.insert_or_assign(texts[i], int32_t(i), IdMap::hash(texts[i]), text_of);
    CHECK(map.size() == texts.size());
    for (size_t i = 0; i < texts.size(); ++i) {
        const int32_t* id = map.find(texts[i], text_of);
        REQUIRE(id);
        CHECK(*id == int32_t(i));
    }
    texts.push_back(texts[42]);  // the same string under a new id replaces the old id
    map.insert_or_assign(texts[42], int32_t(texts.size() - 1), IdMap::hash(texts[42]), text_of);
    CHECK(map.size() == texts.size() - 1);
    CHECK(*map.find(texts[42], text_of) == int32_t(texts.size() - 1));
    CHECK_FALSE(map.find("t1", text_of));
    CHECK_FALSE(map.find("xy", text_of));
}
