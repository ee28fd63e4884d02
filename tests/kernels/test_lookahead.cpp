// The one-token products' lookahead (lookahead.h): which product follows which, and the rows a
// worker warms are the rows it takes first.
#include <algorithm>
#include <cstddef>
#include <vector>

#include <catch2/catch.hpp>

#include "journey/kernels/lookahead.h"

using namespace journey;

TEST_CASE("lookahead: a product predicts the one that followed it last time", "[kernels]") {
    // The lookahead is global and keyed by the weights' address: a heap buffer could sit where an
    // earlier test's matrix did (that test's successor then comes back), so this test's
    // matrices live in storage no other test uses.
    alignas(64) static std::byte mem[64];
    const Matrix a{DType::F32, mem, 2, 2}, b{DType::Q8_0, mem + 16, 4, 32}, c{DType::F16, mem + 32, 3, 3};
    note_product(c);  // whatever came before: c -> a from here on
    CHECK(note_product(a) == nullptr);  // nothing has followed a yet
    CHECK(note_product(b) == nullptr);
    const Matrix* after_c = note_product(c);
    REQUIRE(after_c != nullptr);
    CHECK(after_c->data == a.data);
    const Matrix* after_a = note_product(a);  // the second token: a is followed by b
    REQUIRE(after_a != nullptr);
    CHECK(after_a->data == b.data);
    CHECK(after_a->dtype == DType::Q8_0);
    CHECK(after_a->rows == 4);
    // the order changes (a, then c): the next time a comes, c is predicted
    note_product(c);
    const Matrix* again = note_product(a);
    REQUIRE(again != nullptr);
    CHECK(again->data == c.data);
}

TEST_CASE("lookahead: the splits cover every row once", "[kernels]") {
    for (int64_t n : {1, 15, 16, 17, 768, 2304, 50257})
        for (int threads : {1, 2, 3, 4}) {
            INFO(n << " rows, " << threads << " threads");
            std::vector<int> seen(size_t(n), 0);
            for (int i = 0; i < threads; ++i) {
                const auto [r0, r1] = linear_part(n, i, threads);
                CHECK((r0 % 16 == 0 || r0 == n));
                for (int64_t r = r0; r < r1; ++r) ++seen[size_t(r)];
            }
            CHECK(std::count(seen.begin(), seen.end(), 1) == n);
            const int64_t c = quant_chunk(n, threads);
            CHECK(c % 16 == 0);
            CHECK(c * 4 * threads >= n);  // four chunks per thread are enough
        }
}
