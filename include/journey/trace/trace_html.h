// A trace as one self-contained HTML page: inline CSS and JavaScript, no network access
// (a Content-Security-Policy forbids it), the data embedded as JSON.
//   - the prompt, with the traced token and the target marked;
//   - residual norms through the layers (with the attention and MLP output norms);
//   - the logit lens grid: layers x top tokens, coloured by probability, the target marked;
//   - attention at the traced position: per layer, heads x keys;
//   - every head's whole [T, T] pattern, when the trace kept them (full_pattern).
// Token text reaches the page only as JSON and is inserted as text, never as markup.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "journey/text/html_escape.h"

namespace journey {

// `doc` is trace_json(...) (ideally with full patterns); `title` is plain text.
std::string trace_html(const nlohmann::json& doc, const std::string& title);

// journey patch --html: `doc` is patch's JSON document (docs/json.md), plus "provenance".
std::string patch_html(const nlohmann::json& doc, const std::string& title);

// JSON that can sit inside <script type="application/json">: '<', '>' and '&' as \u escapes.
std::string script_safe_json(const nlohmann::json& doc);

}  // namespace journey
