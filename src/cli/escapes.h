// -p TEXT's escapes, processed as llama-cli processes them (common.cpp string_process_escapes),
// so that `-p "Q: ...\nA:"` means a newline there too.
#pragma once
#include <string>
#include <string_view>

namespace journey::cli {

// \n \r \t \' \" \\ and \xNN (two hex digits) become the byte they name; any other backslash
// sequence (and a lone trailing backslash) is kept as written.
std::string process_escapes(std::string_view text);

}  // namespace journey::cli
