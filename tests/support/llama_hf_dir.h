// A tiny Hugging Face llama directory made from the stories260K llama2.c checkpoint, the way
// HF's convert_llama_weights_to_hf.py makes one from Meta's weights: same tensors under HF names,
// with the rows of q_proj and k_proj permuted per head so that rotary pair (2i, 2i+1) becomes
// (i, i + D/2) — the rotate_half convention. Loading it must give the same logits as the .bin.
#pragma once
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_run.h"
#include "hf_tokenizer_json.h"
#include "journey/formats/llama2c_reader.h"
#include "journey/text/spm_tokenizer.h"
#include "safetensors_writer.h"

namespace journey::test {

inline std::string stories_bin() { return data_dir() + "/models/stories260K/stories260K.bin"; }
inline std::string stories_tok() { return data_dir() + "/models/stories260K/tok512.bin"; }

// F32 values of a tensor, with rows permuted for rotary heads when n_heads > 0:
// HF row h*D + j takes original row h*D + 2j for j < D/2, and h*D + 2(j - D/2) + 1 after.
inline std::vector<float> hf_values(const TensorInfo& t, int n_heads) {
    const int64_t rows = t.shape.at(0), cols = t.numel() / rows;
    std::vector<float> out(static_cast<size_t>(t.numel()));
    const auto* src = reinterpret_cast<const float*>(t.data);
    for (int64_t r = 0; r < rows; ++r) {
        int64_t from = r;
        if (n_heads > 0) {
            const int64_t D = rows / n_heads, h = r / D, j = r % D;
            from = h * D + (j < D / 2 ? 2 * j : 2 * (j - D / 2) + 1);
        }
        std::memcpy(out.data() + r * cols, src + from * cols, static_cast<size_t>(cols) * 4);
    }
    return out;
}

// tok512.bin as the tokenizer.json LlamaConverter would make from its tokenizer.model (where
// BOS and EOS are "<s>" and "</s>"; llama2.c's export wrote them as "\n<s>\n" and "\n</s>\n").
inline nlohmann::json stories_tokenizer_json(HfSpaces spaces = HfSpaces::legacy) {
    const auto tok = SpmTokenizer::from_llama2c(stories_tok());
    std::vector<std::string> pieces;
    std::vector<float> scores;
    for (TokenId i = 0; i < tok->n_vocab(); ++i) {
        pieces.push_back(tok->token_text(i));
        scores.push_back(tok->score(i));
    }
    pieces[1] = "<s>";
    pieces[2] = "</s>";
    return llama_tokenizer_json(pieces, scores, spaces);
}

// Writes config.json and model.safetensors into dir, and tokenizer.json when asked (else pass
// tok512.bin with --tokenizer).
inline void write_stories_hf_dir(const std::filesystem::path& dir, bool with_tokenizer = false) {
    if (with_tokenizer) std::ofstream(dir / "tokenizer.json") << stories_tokenizer_json().dump();
    const ModelFile mf = read_llama2c(stories_bin());
    const auto& m = mf.metadata;
    const int H = m["llama.attention.head_count"], Hkv = m["llama.attention.head_count_kv"];
    std::vector<FakeTensor> ts;
    auto add = [&](const std::string& hf, const std::string& gguf, int heads = 0) {
        const TensorInfo& t = mf.tensors.at(gguf);
        ts.push_back({hf, "F32", t.shape, hf_values(t, heads), ""});
    };
    add("model.embed_tokens.weight", "token_embd.weight");
    add("model.norm.weight", "output_norm.weight");
    const int L = m["llama.block_count"];
    for (int l = 0; l < L; ++l) {
        const std::string hf = "model.layers." + std::to_string(l) + ".", g = "blk." + std::to_string(l) + ".";
        add(hf + "input_layernorm.weight", g + "attn_norm.weight");
        add(hf + "self_attn.q_proj.weight", g + "attn_q.weight", H);
        add(hf + "self_attn.k_proj.weight", g + "attn_k.weight", Hkv);
        add(hf + "self_attn.v_proj.weight", g + "attn_v.weight");
        add(hf + "self_attn.o_proj.weight", g + "attn_output.weight");
        add(hf + "post_attention_layernorm.weight", g + "ffn_norm.weight");
        add(hf + "mlp.gate_proj.weight", g + "ffn_gate.weight");
        add(hf + "mlp.up_proj.weight", g + "ffn_up.weight");
        add(hf + "mlp.down_proj.weight", g + "ffn_down.weight");
    }
    const bool tied = !mf.tensors.count("output.weight");
    if (!tied) add("lm_head.weight", "output.weight");
    write_safetensors(dir / "model.safetensors", ts);
    const nlohmann::json config = {
        {"model_type", "llama"},
        {"architectures", {"LlamaForCausalLM"}},
        {"hidden_size", m["llama.embedding_length"]},
        {"intermediate_size", m["llama.feed_forward_length"]},
        {"num_hidden_layers", L},
        {"num_attention_heads", H},
        {"num_key_value_heads", Hkv},
        {"max_position_embeddings", m["llama.context_length"]},
        {"vocab_size", m["llama.vocab_size"]},
        {"rms_norm_eps", 1e-5},
        {"rope_theta", 10000.0},
        {"hidden_act", "silu"},
        {"tie_word_embeddings", tied},
    };
    std::ofstream(dir / "config.json") << config.dump(1);
}

}  // namespace journey::test
