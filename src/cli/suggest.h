// "Did you mean": the nearest of a set of names, by edit distance.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace journey::cli {

// The candidate nearest to `word` (Levenshtein distance; a candidate that starts with `word`
// counts as near), or "" when none is within about a third of the word's length.
std::string nearest(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace journey::cli
