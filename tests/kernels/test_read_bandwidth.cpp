// read_all, the yardstick of `journey bench --bandwidth`: it must read every byte of every range
// exactly once, however the ranges fall against the threads' shares and the 256-byte steps.
#include <cstddef>
#include <numeric>
#include <random>
#include <span>
#include <vector>

#include <catch2/catch.hpp>

#include "journey/kernels/kernels.h"
#include "journey/kernels/read_bandwidth.h"

using namespace journey;

TEST_CASE("read_all: the sum of every byte of every range, on any number of threads", "[kernels]") {
    std::mt19937 rng(7);
    std::vector<std::byte> buf(300000);
    for (auto& b : buf) b = std::byte(rng());
    // Ranges starting anywhere in a line, of lengths around the 256-byte step (and empty ones).
    std::vector<std::span<const std::byte>> ranges;
    uint64_t expect = 0;
    size_t at = 3;
    for (size_t len : {size_t(0), size_t(1), size_t(255), size_t(256), size_t(257), size_t(1000), size_t(4099),
                       size_t(65536 + 13), size_t(100003), size_t(0), size_t(77)}) {
        ranges.emplace_back(buf.data() + at, len);
        for (size_t i = at; i < at + len; ++i) expect += uint64_t(buf[i]);
        at += len + 5;
    }
    for (int threads : {1, 2, 3}) {
        set_num_threads(threads);
        INFO(threads << " threads");
        CHECK(read_all(ranges) == expect);
        CHECK(read_all(std::span(ranges).subspan(2, 1)) == uint64_t(std::accumulate(
                  buf.begin() + std::ptrdiff_t(ranges[2].data() - buf.data()),
                  buf.begin() + std::ptrdiff_t(ranges[2].data() - buf.data() + 255), uint64_t(0),
                  [](uint64_t s, std::byte b) { return s + uint64_t(b); })));
        CHECK(read_all({}) == 0);
    }
    set_num_threads(1);
}
