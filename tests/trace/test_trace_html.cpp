// journey trace --html: the page is self-contained, escapes token text, and renders in a real
// browser (headless Chromium) without a single console message.
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_run.h"
#include "files.h"
#include "journey/trace/trace_html.h"

using namespace journey::test;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

const std::string kChromium = "/usr/bin/chromium";

// Runs headless Chromium on `page` with `mode` (--screenshot=... or --dump-dom); returns stderr
// (its log, where every console message appears as a CONSOLE line) and writes stdout to `out`.
std::string chromium(const fs::path& dir, const fs::path& page, const std::string& mode, const fs::path& out) {
    const fs::path err = dir / "chromium.err";
    const std::string cmd = "timeout 60 " + kChromium +
                            " --headless --no-sandbox --disable-gpu --disable-quic --no-first-run"
                            " --disable-background-networking --disable-component-update --disable-sync"
                            " --user-data-dir=" + (dir / "profile").string() +
                            " --enable-logging=stderr --v=0 --window-size=1200,2000 " + mode + " file://" +
                            page.string() + " >" + out.string() + " 2>" + err.string();
    const int rc = std::system(cmd.c_str());
    INFO(cmd);
    CHECK(rc == 0);
    return slurp(err);
}

}  // namespace

TEST_CASE("trace html: escaping of markup and of JSON inside a script", "[trace][html]") {
    CHECK(journey::html_escape("<b a=\"x\">&'") == "&lt;b a=&#34;x&#34;&gt;&amp;&#39;");
    const std::string s = journey::script_safe_json({{"t", "</script><!--&"}});
    CHECK(s.find('<') == std::string::npos);
    CHECK(nlohmann::json::parse(s)["t"] == "</script><!--&");
}

TEST_CASE("trace --html: a self-contained page that renders without console errors", "[trace][html][chromium]") {
    char tmpl[] = "/tmp/journey-html-XXXXXX";
    const fs::path dir = mkdtemp(tmpl);
    const fs::path page = dir / "trace.html";
    // Token text that would break naive HTML or JSON embedding.
    auto r = run_journey({"trace", "-m", data_dir() + "/reference/gpt2-tiny", "-p",
                          "</script><script>alert(1)</script> & \"quotes\" The capital of France is",
                          "--html", page.string(), "--format", "json"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const std::string html = slurp(page);
    REQUIRE(!html.empty());
    CHECK(html.find("alert(1)</script>") == std::string::npos);
    for (const char* fetch : {"src=", "href=", "<link", "@import", "url(", "fetch(", "XMLHttpRequest"}) {
        INFO(fetch);
        CHECK(html.find(fetch) == std::string::npos);  // nothing that could reach the network
    }
    CHECK_THAT(html, Contains("full_pattern"));
    CHECK(nlohmann::json::parse(r.out).count("layers") == 1);  // stdout still carries the JSON

    if (!fs::exists(kChromium)) {
        WARN("skipped the browser check: " << kChromium << " is missing (Debian package chromium)");
        fs::remove_all(dir);
        return;
    }
    const fs::path png = dir / "trace.png";
    const std::string log = chromium(dir, page, "--screenshot=" + png.string(), dir / "shot.out");
    INFO(log);
    CHECK(log.find("CONSOLE") == std::string::npos);
    REQUIRE(fs::exists(png));
    CHECK(fs::file_size(png) > 10000);

    const fs::path dom = dir / "dom.html";
    const std::string log2 = chromium(dir, page, "--dump-dom", dom);
    INFO(log2);
    CHECK(log2.find("CONSOLE") == std::string::npos);
    const std::string rendered = slurp(dom);
    CHECK_THAT(rendered, Contains("data-status=\"rendered\""));
    CHECK(rendered.find("<pre id=\"js-errors\"") == std::string::npos);
    CHECK_THAT(rendered, Contains("Logit lens"));
    // The attribution table: each cell's hover text carries the JSON's value (--html attributes).
    CHECK_THAT(rendered, Contains("Direct logit attribution"));
    const nlohmann::json attr = nlohmann::json::parse(r.out).at("attribution");
    for (const auto& l : attr["layers"]) {
        const std::string key = "layer " + std::to_string(l["layer"].get<int>()) + " MLP: ";
        const size_t at = rendered.find(key);
        REQUIRE(at != std::string::npos);
        CHECK(std::abs(std::stod(rendered.substr(at + key.size(), 40)) - l["mlp"].get<double>()) < 1e-12);
    }
    if (const char* keep = std::getenv("JOURNEY_KEEP_HTML")) {
        fs::copy_file(page, fs::path(keep) / "trace.html", fs::copy_options::overwrite_existing);
        fs::copy_file(png, fs::path(keep) / "trace.png", fs::copy_options::overwrite_existing);
    }
    fs::remove_all(dir);
}
