// The convert stage's one-place facts: every tensor a family reads has one GGUF name, every
// "<arch>." key one name, every family that converts a hook; and the one quantization planner
// keeps the stored bytes of a tensor whose type stays, re-encodes one whose type changes.
#include <set>
#include <string>

#include <catch2/catch.hpp>

#include "journey/convert/quantize_plan.h"
#include "journey/errors.h"
#include "journey/model/arch.h"
#include "journey/model/gguf_keys.h"

using namespace journey;

TEST_CASE("tables: each tensor of every row has a GGUF name, each name one tensor role", "[convert]") {
    for (const ArchTraits& t : arch_table()) {
        // gpt-oss's and Qwen's fused gate|up experts are Hugging Face's layouts only: GGUF stores them as two.
        auto hf_only = [](Tensor x) {
            return x == Tensor::ffn_gate_up_exps || x == Tensor::ffn_gate_up_exps_b || x == Tensor::ffn_gate_up_exps_cat;
        };
        for (Tensor x : t.tensors) CHECK((hf_only(x) ? find_gguf_tensor(x) == nullptr : find_gguf_tensor(x) != nullptr));
        for (const HfName& n : t.hf_names)
            CHECK((hf_only(n.tensor) ? find_gguf_tensor(n.tensor) == nullptr : find_gguf_tensor(n.tensor) != nullptr));
    }
    CHECK(gguf_tensor_name(Tensor::attn_q, 3) == "blk.3.attn_q.weight");
    CHECK(gguf_tensor_name(Tensor::tok_embd) == "token_embd.weight");
    // Phi-3's fused gate|up is stored under ffn_up's name: the only name two roles share.
    CHECK(gguf_tensor_name(Tensor::ffn_gate_up, 0) == gguf_tensor_name(Tensor::ffn_up, 0));
}

TEST_CASE("tables: each GGUF key has one name and is found by it", "[convert]") {
    std::set<std::string> names;
    for (Key k : {Key::context_length, Key::embedding_length, Key::block_count, Key::head_count, Key::head_count_kv,
                  Key::layer_norm_rms_epsilon, Key::rope_freq_base, Key::rope_dimension_count, Key::sliding_window,
                  Key::attn_logit_softcapping, Key::final_logit_softcapping, Key::yarn_beta_fast}) {
        const std::string n(key_name(k));
        CHECK(names.insert(n).second);
        REQUIRE(find_key(n));
        CHECK(find_key(n)->key == k);
    }
    CHECK(key_of("llama", Key::head_count_kv) == "llama.attention.head_count_kv");
    REQUIRE(find_key("expert_count"));  // read only for mixture-of-experts families (config_gguf.cpp)
    CHECK(find_key("expert_count")->key == Key::expert_count);
    CHECK(find_key("expert_gating_func") == nullptr);
}

TEST_CASE("quantize plan: one planner; stored bytes kept where the type stays", "[convert]") {
    const std::byte bytes[64] = {};
    auto tensor = [&](std::string name, std::vector<int64_t> shape) {
        return OutTensor{std::move(name), std::move(shape), DType::F32, bytes, [](int64_t, float*) {}};
    };
    const std::vector<OutTensor> in = {tensor("blk.1.ffn_down.weight", {32, 64}), tensor("blk.0.attn_norm.weight", {64}),
                                       tensor("token_embd.weight", {100, 64}), tensor("blk.0.ffn_down.weight", {32, 64})};
    const QuantTarget* q8 = find_quant_target("q8_0");
    REQUIRE(q8);
    const std::vector<OutTensor> out = plan_quantized(in, *q8, {"llama", 2, 4, 4});
    REQUIRE(out.size() == 4);
    // llama-quantize's order: outside the blocks first, then block by block, by name.
    CHECK(out[0].name == "token_embd.weight");
    CHECK(out[1].name == "blk.0.attn_norm.weight");
    CHECK(out[2].name == "blk.0.ffn_down.weight");
    CHECK(out[3].name == "blk.1.ffn_down.weight");
    CHECK(out[1].type == DType::F32);
    CHECK(out[1].raw == bytes);  // a norm stays F32: copied as stored
    CHECK(out[2].type == DType::Q8_0);
    CHECK(out[2].raw == nullptr);  // re-encoded from its rows
}
