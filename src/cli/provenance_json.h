// The provenance block of the trace and patch pages (trace_html_panels.cpp renders it).
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "journey/model/model.h"

namespace journey::cli {

// {journey, model, files: [{name, bytes, sha256}], architecture, dtype, command, date (UTC)}.
nlohmann::json provenance_json(const Model& m);

// Writes a page to --html PATH; InputError naming the flag and the reason when it cannot.
void write_html_page(const std::string& path, const std::string& page);

}  // namespace journey::cli
