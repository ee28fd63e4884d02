// ggml's tensor types (ggml.h, enum ggml_type; block structs in ggml-common.h). Numbers are never
// reused: removed types keep their row so that an old file is refused by name.
#include "journey/formats/ggml_types.h"

#include <array>
#include <stdexcept>

namespace journey {
namespace {

constexpr std::string_view kFp4 = "not supported (an FP4 type journey does not implement); requantize to Q4_K_M";
constexpr std::string_view kActivation =
    "not a weight type (ggml uses it for activations only); requantize to Q4_K_M";
constexpr std::string_view kInteger = "not a weight type journey reads (integer or double data); convert to F32";
constexpr std::string_view kRemoved =
    "removed from ggml (repacked layouts are no longer stored in files); requantize to Q4_K_M";

// id, name, elements per block, bytes per block (the block struct's size), DType if read.
constexpr std::array kTypes = {
    GgmlType{0, "F32", 1, 4, DType::F32, {}},
    GgmlType{1, "F16", 1, 2, DType::F16, {}},
    GgmlType{2, "Q4_0", 32, 18, DType::Q4_0, {}},      // f16 d, 16 B nibbles
    GgmlType{3, "Q4_1", 32, 20, DType::Q4_1, {}},      // f16 d, f16 m, 16 B nibbles
    GgmlType{4, "Q4_2", 16, 10, std::nullopt, kRemoved},
    GgmlType{5, "Q4_3", 16, 12, std::nullopt, kRemoved},
    GgmlType{6, "Q5_0", 32, 22, DType::Q5_0, {}},      // f16 d, 4 B high bits, 16 B nibbles
    GgmlType{7, "Q5_1", 32, 24, DType::Q5_1, {}},      // f16 d, f16 m, 4 B high bits, 16 B nibbles
    GgmlType{8, "Q8_0", 32, 34, DType::Q8_0, {}},      // f16 d, 32 x int8
    GgmlType{9, "Q8_1", 32, 36, std::nullopt, kActivation},
    GgmlType{10, "Q2_K", 256, 84, DType::Q2_K, {}},    // 16 B scales, 64 B quants, f16 d, f16 dmin
    GgmlType{11, "Q3_K", 256, 110, DType::Q3_K, {}},   // 32 B hmask, 64 B quants, 12 B scales, f16 d
    GgmlType{12, "Q4_K", 256, 144, DType::Q4_K, {}},   // f16 d, f16 dmin, 12 B scales, 128 B nibbles
    GgmlType{13, "Q5_K", 256, 176, DType::Q5_K, {}},   // f16 d, f16 dmin, 12 B scales, 32 B qh, 128 B
    GgmlType{14, "Q6_K", 256, 210, DType::Q6_K, {}},   // 128 B ql, 64 B qh, 16 x int8 scales, f16 d
    GgmlType{15, "Q8_K", 256, 292, std::nullopt, kActivation},
    GgmlType{16, "IQ2_XXS", 256, 66, DType::IQ2_XXS, {}},  // f16 d, 32 x u16: per 32 4 grid bytes + 4x7 sign bits + 4-bit scale
    GgmlType{17, "IQ2_XS", 256, 74, DType::IQ2_XS, {}},    // f16 d, 32 x u16 (9-bit grid, 7 sign bits), 8 B scales
    GgmlType{18, "IQ3_XXS", 256, 98, DType::IQ3_XXS, {}},  // f16 d, 64 B grid, 32 B signs + scales
    GgmlType{19, "IQ1_S", 256, 50, DType::IQ1_S, {}},      // f16 d, 32 B grid low bits, 8 x u16 (high bits, scale, delta sign)
    GgmlType{20, "IQ4_NL", 32, 18, DType::IQ4_NL, {}}, // f16 d, 16 B nibbles into a 16-value table
    GgmlType{21, "IQ3_S", 256, 110, DType::IQ3_S, {}},     // f16 d, 64 B grid, 8 B high bits, 32 B signs, 4 B scales
    GgmlType{22, "IQ2_S", 256, 82, DType::IQ2_S, {}},      // f16 d, 32 B grid, 32 B signs, 8 B high bits, 8 B scales
    GgmlType{23, "IQ4_XS", 256, 136, DType::IQ4_XS, {}},  // f16 d, u16 + 4 B scales, 128 B nibbles
    GgmlType{24, "I8", 1, 1, std::nullopt, kInteger},
    GgmlType{25, "I16", 1, 2, std::nullopt, kInteger},
    GgmlType{26, "I32", 1, 4, std::nullopt, kInteger},
    GgmlType{27, "I64", 1, 8, std::nullopt, kInteger},
    GgmlType{28, "F64", 1, 8, std::nullopt, kInteger},
    GgmlType{29, "IQ1_M", 256, 56, DType::IQ1_M, {}},      // 32 B grid low bits, 16 B high bits + delta signs, 8 B scales (and d)
    GgmlType{30, "BF16", 1, 2, DType::BF16, {}},
    GgmlType{31, "Q4_0_4_4", 32, 18, std::nullopt, kRemoved},
    GgmlType{32, "Q4_0_4_8", 32, 18, std::nullopt, kRemoved},
    GgmlType{33, "Q4_0_8_8", 32, 18, std::nullopt, kRemoved},
    GgmlType{34, "TQ1_0", 256, 54, DType::TQ1_0, {}},      // 48 B of 5 trits, 4 B of 4 trits, f16 d
    GgmlType{35, "TQ2_0", 256, 66, DType::TQ2_0, {}},      // 64 B of 2-bit trits, f16 d
    GgmlType{36, "IQ4_NL_4_4", 32, 18, std::nullopt, kRemoved},
    GgmlType{37, "IQ4_NL_4_8", 32, 18, std::nullopt, kRemoved},
    GgmlType{38, "IQ4_NL_8_8", 32, 18, std::nullopt, kRemoved},
    GgmlType{39, "MXFP4", 32, 17, DType::MXFP4, {}},   // e8m0 scale, 16 B of e2m1 pairs
    GgmlType{40, "NVFP4", 64, 36, std::nullopt, kFp4},    // 4 e4m3 scales, 32 B of e2m1 pairs
};

constexpr bool ids_in_order() {
    for (size_t i = 0; i < kTypes.size(); ++i)
        if (kTypes[i].id != i) return false;
    return true;
}
static_assert(ids_in_order(), "kTypes is indexed by type number");

// The type number of each DType, in the enum's order.
constexpr std::array<uint32_t, 25> kIds = {0, 1, 30, 8, 2, 3, 6, 7, 10, 11, 12, 13, 14, 20, 23,
                                          16, 17, 22, 18, 21, 19, 29, 34, 35, 39};

constexpr bool dtypes_round_trip() {  // every read type's row and kIds agree both ways
    size_t n = 0;
    for (const GgmlType& g : kTypes)
        if (g.dtype && (++n, size_t(*g.dtype) >= kIds.size() || kIds[size_t(*g.dtype)] != g.id)) return false;
    return n == kIds.size();
}
static_assert(dtypes_round_trip(), "kIds lists the type number of every DType");

}  // namespace

const GgmlType* ggml_type(uint32_t id) { return id < kTypes.size() ? &kTypes[id] : nullptr; }

const GgmlType& ggml_type_of(DType t) {
    const auto i = size_t(t);
    if (i >= kIds.size()) throw std::logic_error("ggml_type_of: a DType without a ggml row");
    return kTypes[kIds[i]];
}

}  // namespace journey
