// The next-token table `journey next` prints, shared with `journey trace`.
#pragma once
#include <string>
#include <vector>

#include "journey/decode/distribution.h"
#include "journey/text/tokenizer.h"

namespace journey::cli {

// " rank      prob    logprob     id  token" rows, then "entropy X nats".
std::vector<std::string> distribution_table(const Tokenizer& tok, const Distribution& d);

}  // namespace journey::cli
