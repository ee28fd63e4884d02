// Each subcommand lives in its own cmd_*.cpp and registers itself on the app.
#pragma once
#include <CLI/CLI.hpp>

namespace journey::cli {

void register_tokenize(CLI::App& app);    // text -> ids
void register_detokenize(CLI::App& app);  // ids -> bytes
void register_next(CLI::App& app);        // prompt -> distribution of the next token
void register_trace(CLI::App& app);       // one token's journey through the layers
void register_patch(CLI::App& app);       // activation patching: clean vs corrupted prompt
void register_generate(CLI::App& app);    // prompt -> sampled continuation
void register_score(CLI::App& app);       // text -> log-probability of each token
void register_info(CLI::App& app);        // what a model is
void register_bench(CLI::App& app);       // how fast a model runs
void register_template(CLI::App& app);    // a chat template rendered, no model
void register_chat(CLI::App& app);        // a conversation in the model's chat template
void register_convert(CLI::App& app);     // a Hugging Face directory -> a GGUF file
void register_quantize(CLI::App& app);    // a GGUF file -> a GGUF file of another type
void register_imatrix(CLI::App& app);     // a text through a model -> an importance matrix

}  // namespace journey::cli
