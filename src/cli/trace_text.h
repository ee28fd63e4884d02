// `journey trace` for a terminal: a compact view of a Trace, every line within 100 columns.
#pragma once
#include <string>
#include <vector>

#include "journey/trace/trace.h"

namespace journey::cli {

std::vector<std::string> trace_text(const Trace& tr, const Tokenizer& tok);

}  // namespace journey::cli
