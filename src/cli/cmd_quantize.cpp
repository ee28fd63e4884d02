// journey quantize IN.gguf OUT.gguf TYPE [--imatrix FILE]: what llama-quantize does
// (library code in src/convert/; this file holds the arguments and the progress bar).
#include <memory>

#include "commands.h"
#include "journey/convert/convert.h"
#include "journey/errors.h"
#include "progress.h"

namespace journey::cli {
namespace {

struct QuantizeOptions {
    std::string in, out, type, imatrix;
};

void run(const QuantizeOptions& opt) {
    const QuantTarget* target = find_quant_target(opt.type);
    if (!target)
        throw UsageError("TYPE: unknown type '" + excerpt(opt.type, 40) + "' (journey quantize writes " +
                         quant_target_names() + ")");
    quantize_gguf(opt.in, opt.out, *target, progress_bar("quantize", "tensors"), opt.imatrix);
}

}  // namespace

void register_quantize(CLI::App& app) {
    auto opt = std::make_shared<QuantizeOptions>();
    CLI::App* cmd = app.add_subcommand("quantize", "Quantize a GGUF model to another type, as llama-quantize does");
    cmd->add_option("IN", opt->in, "The GGUF model to read")->required();
    cmd->add_option("OUT", opt->out, "The GGUF file to write (written whole, then renamed into place)")->required();
    cmd->add_option("TYPE", opt->type, "Q4_K_M, Q5_K_M, Q6_K, Q8_0, Q4_0, ... (" + quant_target_names() + ")")
        ->required();
    cmd->add_option("--imatrix", opt->imatrix,
                    "An importance matrix (journey imatrix / llama-imatrix: imatrix.gguf, or a legacy .dat) to weigh "
                    "each column's error by; IQ1_S..IQ2_M, IQ3_XXS and Q2_K_S need one");
    cmd->callback([opt] { run(*opt); });
}

}  // namespace journey::cli
