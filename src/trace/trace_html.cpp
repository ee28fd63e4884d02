// The trace page: markup and data here; its style and script in trace_html_assets.cpp.
#include "journey/trace/trace_html.h"
#include "journey/text/html_escape.h"

namespace journey {

extern const char* const kTraceCss;
extern const char* const kTraceJs;
extern const char* const kTracePanelsCss;  // trace_html_panels.cpp
extern const char* const kTracePanelsJs;

std::string script_safe_json(const nlohmann::json& doc) {
    // Outside strings JSON never uses these characters, so escaping them everywhere is exact.
    const std::string s = doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    std::string out;
    out.reserve(s.size());
    for (char c : s) {
        switch (c) {
            case '<': out += "\\u003c"; break;
            case '>': out += "\\u003e"; break;
            case '&': out += "\\u0026"; break;
            default: out += c;
        }
    }
    return out;
}

// The page's shell: the CSP, the style, the data as JSON, then `script` (which draws it).
std::string html_page(const nlohmann::json& doc, const std::string& title, const std::string& script) {
    std::string page;
    page += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
    page += "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
            "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n";
    page += "<title>" + html_escape(title) + "</title>\n<style>" + kTraceCss + kTracePanelsCss + "</style>\n</head>\n";
    page += "<body data-status=\"loading\">\n<header><h1>" + html_escape(title) + "</h1></header>\n";
    page += "<main id=\"app\"><noscript>This page draws the trace with JavaScript.</noscript></main>\n";
    page += "<script type=\"application/json\" id=\"trace-data\">" + script_safe_json(doc) + "</script>\n";
    page += "<script>" + std::string(kTraceJs) + kTracePanelsJs + script + "\n</script>\n</body>\n</html>\n";
    return page;
}

std::string trace_html(const nlohmann::json& doc, const std::string& title) { return html_page(doc, title, "main();"); }

}  // namespace journey
