// What the block-type kernel tests share: forcing the portable kernels for a scope, blocks
// given as hex, and a DType by its GGML name.
#pragma once
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "journey/formats/ggml_types.h"
#include "journey/kernels/gemv.h"

namespace journey::test {

// Forces the portable kernels (gemv.h) for a scope when `on`, then restores the automatic choice.
struct PortableScope {
    explicit PortableScope(bool on) { force_portable_kernels(on); }
    ~PortableScope() { force_portable_kernels(false); }
};

// The bytes of a string of hex digits.
inline std::vector<unsigned char> from_hex(const std::string& hex) {
    std::vector<unsigned char> out(hex.size() / 2);
    for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<unsigned char>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
    return out;
}

// The DType of the GGML type called `name` (the test fails when there is none).
inline DType dtype_named(const std::string& name) {
    for (uint32_t id = 0; const GgmlType* g = ggml_type(id); ++id)
        if (g->name == name && g->dtype) return *g->dtype;
    FAIL("no DType for " << name);
    return DType::F32;
}

}  // namespace journey::test
