// Reading memory as fast as the machine allows, for `journey bench --bandwidth`: the yardstick a
// one-token step (which reads every weight once) is measured against.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

namespace journey {

// Reads every byte of `ranges` once with the pool's threads and returns the sum of the bytes
// (mod 2^64; a result that needs every byte, so no read is left out). Thread i of n reads the
// i-th n-th of the bytes, the ranges taken end to end: each thread one long stream, the best
// case for the hardware, without the per-matrix hand-overs of a token's step.
uint64_t read_all(std::span<const std::span<const std::byte>> ranges);

}  // namespace journey
