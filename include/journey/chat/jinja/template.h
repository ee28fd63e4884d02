// A chat template: Jinja source read once, rendered with a conversation as transformers'
// apply_chat_template renders it (ImmutableSandboxedEnvironment, trim_blocks, lstrip_blocks,
// loopcontrols, {% generation %}, raise_exception, strftime_now, tojson with ensure_ascii off).
#pragma once
#include <cstdint>
#include <ctime>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "journey/errors.h"

namespace journey::jinja {

struct Node;

// A template that cannot be read or rendered, or that called raise_exception:
// "FILE:LINE:COL: what" (exit code 2, a bad model/template file).
class TemplateError : public ModelError {
public:
    using ModelError::ModelError;
};

struct RenderOptions {
    // The clock strftime_now() reads, as local broken-down time; unset: the current local time.
    std::optional<std::tm> now;
    // Templates are untrusted: these bound the work and memory one render may take.
    size_t max_output_bytes = 32u << 20;   // everything written, including macro and set bodies
    uint64_t max_steps = 5'000'000;        // statements and expressions evaluated (~2 s)
    int max_depth = 400;                   // nested expressions, statements and macro calls
};

// "2025-01-15T10:30:00" (or with a space, or a date alone) as broken-down time; nullopt if malformed.
std::optional<std::tm> parse_iso8601(const std::string& text);

class Template {
public:
    // name is what errors show ("tokenizer_config.json:chat_template", a file path). Throws TemplateError.
    Template(const std::string& source, std::string name);
    ~Template();
    Template(Template&&) noexcept;

    // vars: a JSON object of the template's variables (messages, add_generation_prompt,
    // bos_token, ...). Throws TemplateError.
    std::string render(const nlohmann::ordered_json& vars, const RenderOptions& options = {}) const;

    const std::string& name() const { return name_; }

private:
    std::string name_;
    std::unique_ptr<std::vector<std::unique_ptr<Node>>> body_;
};

}  // namespace journey::jinja
