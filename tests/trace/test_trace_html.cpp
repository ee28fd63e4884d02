// journey trace --html: the page is self-contained, escapes token text, and renders in a real
// browser (headless Chromium) without a single console message.
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_run.h"
#include "family_fixtures.h"
#include "files.h"
#include "journey/trace/provenance.h"
#include "journey/trace/trace_html.h"

using namespace journey::test;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

const std::string kChromium = "/usr/bin/chromium";

// Runs headless Chromium on `page` with `mode` (--screenshot=... or --dump-dom); returns stderr
// (its log, where every console message appears as a CONSOLE line) and writes stdout to `out`.
std::string chromium(const fs::path& dir, const fs::path& page, const std::string& mode, const fs::path& out,
                     const std::string& fragment = "") {
    const fs::path err = dir / "chromium.err";
    const std::string cmd = "timeout 60 " + kChromium +
                            " --headless --no-sandbox --disable-gpu --disable-quic --no-first-run"
                            " --disable-background-networking --disable-component-update --disable-sync"
                            " --user-data-dir=" + (dir / "profile").string() +
                            " --enable-logging=stderr --v=0 --window-size=1200,2000 " + mode + " 'file://" +
                            page.string() + fragment + "' >" + out.string() + " 2>" + err.string();
    const int rc = std::system(cmd.c_str());
    INFO(cmd);
    CHECK(rc == 0);
    return slurp(err);
}

// Where no Chromium is installed: a warning, `dir` removed, true (the test ends there).
bool skip_without_chromium(const fs::path& dir) {
    if (fs::exists(kChromium)) return false;
    WARN("skipped the browser check: " << kChromium << " is missing (Debian package chromium)");
    fs::remove_all(dir);
    return true;
}

// The page (with `fragment`) as Chromium rendered it (--dump-dom into `dom`), checked for console
// messages and script errors.
std::string dump_dom(const fs::path& dir, const fs::path& page, const fs::path& dom, const std::string& fragment = "") {
    const std::string log = chromium(dir, page, "--dump-dom", dom, fragment);
    INFO(log);
    CHECK(log.find("CONSOLE") == std::string::npos);
    std::string rendered = slurp(dom);
    CHECK(rendered.find("<pre id=\"js-errors\"") == std::string::npos);
    return rendered;
}

// dump_dom's page with the rendered status checked; empty where no Chromium is installed.
std::string rendered_dom(const fs::path& dir, const fs::path& page) {
    if (skip_without_chromium(dir)) return {};
    std::string rendered = dump_dom(dir, page, dir / "dom.html");
    CHECK_THAT(rendered, Contains("data-status=\"rendered\""));
    return rendered;
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

    if (skip_without_chromium(dir)) return;
    const fs::path png = dir / "trace.png";
    const std::string log = chromium(dir, page, "--screenshot=" + png.string(), dir / "shot.out");
    INFO(log);
    CHECK(log.find("CONSOLE") == std::string::npos);
    REQUIRE(fs::exists(png));
    CHECK(fs::file_size(png) > 10000);

    const std::string rendered = dump_dom(dir, page, dir / "dom.html");
    CHECK_THAT(rendered, Contains("data-status=\"rendered\""));
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

namespace {

struct PageCandidates {
    bool exact = false;
    int count = -1;
    std::vector<std::pair<int, double>> rows;  // (id, p) as the page shows them, best first
};

// The sampling panel's table in a dumped DOM: <table ... data-exact=... data-count=...> and one
// <tr data-id=... data-p=...> per shown candidate.
PageCandidates page_candidates(const std::string& dom) {
    PageCandidates c;
    const size_t at = dom.find("id=\"sampler-out\"");
    REQUIRE(at != std::string::npos);
    const size_t open = dom.rfind("<table", at), end = dom.find("</table>", at);
    const std::string table = dom.substr(open, end - open);
    std::smatch m;
    REQUIRE(std::regex_search(table, m, std::regex("data-exact=\"(true|false)\"")));
    c.exact = m[1] == "true";
    REQUIRE(std::regex_search(table, m, std::regex("data-count=\"(-?[0-9]+)\"")));
    c.count = std::stoi(m[1]);
    const std::regex row("<tr data-id=\"([0-9]+)\" data-p=\"([^\"]+)\"");
    for (auto it = std::sregex_iterator(table.begin(), table.end(), row); it != std::sregex_iterator(); ++it)
        c.rows.emplace_back(std::stoi((*it)[1]), std::stod((*it)[2]));
    return c;
}

}  // namespace

// The sampling panel recomputes generate's sampler chain in the page; `journey next --sampler`
// runs the sampler itself (Sampler::candidates) on the same logits. Each setting is applied by
// the page's own slider handlers (the URL fragment sets a slider and fires its input event).
TEST_CASE("trace --html: the sampling panel matches generate's sampler in Chromium", "[trace][html][chromium]") {
    char tmpl[] = "/tmp/journey-samp-XXXXXX";
    const fs::path dir = mkdtemp(tmpl);
    const fs::path page = dir / "trace.html";
    const std::string model = data_dir() + "/reference/gpt2-tiny";
    const std::string prompt = "The capital of France is";
    auto r = run_journey({"trace", "-m", model, "-p", prompt, "--html", page.string(), "--format", "json"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const std::string html = slurp(page);
    CHECK_THAT(html, Contains("\"sampling\""));
    CHECK_THAT(html, Contains("\"provenance\""));
    if (skip_without_chromium(dir)) return;
    struct Setting {
        std::string temp, top_k, top_p, min_p;
        bool exact;  // whether the survivors lie among the 256 logits the page holds
    };
    const std::vector<Setting> settings = {
        {"0.8", "40", "0.95", "0.05", true},   // generate's defaults (no fragment)
        {"1.37", "0", "0.2", "0", true},      // top-p over the whole vocabulary (the tail's sum), hot
        {"0.6", "0", "1", "0.2", true},       // min-p over the whole vocabulary (the tail's max)
        {"0", "0", "1", "0", true},           // greedy
        {"1", "0", "1", "0", false},          // everything survives: beyond what the page holds
    };
    for (size_t i = 0; i < settings.size(); ++i) {
        const Setting& s = settings[i];
        INFO("setting " << i << ": --temp " << s.temp << " --top-k " << s.top_k << " --top-p " << s.top_p
                        << " --min-p " << s.min_p);
        const std::string fragment = i == 0 ? "" : "#temp=" + s.temp + "&top_k=" + s.top_k + "&top_p=" + s.top_p +
                                                       "&min_p=" + s.min_p + (i == 1 ? "&measure=out" : "");
        const fs::path dom = dir / ("dom" + std::to_string(i) + ".html");
        const std::string rendered = dump_dom(dir, page, dom, fragment);
        if (i == 0) {  // the provenance block: the weights named by their SHA-256 (FIPS-checked below)
            CHECK_THAT(rendered, Contains("data-key=\"architecture\">gpt2<"));
            CHECK_THAT(rendered, Contains("data-key=\"weights dtype\">F32<"));
            CHECK_THAT(rendered, Contains("sha256 " + journey::sha256_file(model + "/model.safetensors").substr(0, 16)));
            CHECK_THAT(rendered, Contains("--html " + page.string()));
        }
        if (i == 1) {  // the layer x head grid, switched to |out| by its select: the JSON's out_norm
            const size_t grid = rendered.find("id=\"head-grid\"");
            REQUIRE(grid != std::string::npos);
            const std::string table = rendered.substr(grid, rendered.find("</table>", grid) - grid);
            CHECK_THAT(table, Contains("data-measure=\"out\""));
            std::vector<double> cells;
            const std::regex cell("data-value=\"([^\"]+)\"");
            for (auto it = std::sregex_iterator(table.begin(), table.end(), cell); it != std::sregex_iterator(); ++it)
                cells.push_back(std::stod((*it)[1]));
            std::vector<double> expect;
            const nlohmann::json traced = nlohmann::json::parse(r.out);
            for (const auto& l : traced["layers"])
                for (const auto& h : l["attn"]["heads"]) expect.push_back(h["out_norm"].get<double>());
            REQUIRE(cells.size() == expect.size());
            for (size_t k = 0; k < cells.size(); ++k) CHECK(std::abs(cells[k] - expect[k]) <= 1e-12 * std::abs(expect[k]));
        }
        const PageCandidates got = page_candidates(rendered);
        CHECK(got.exact == s.exact);
        auto cli = run_journey({"next", "-m", model, "-p", prompt, "--sampler", "--json", "--temp", s.temp, "--top-k",
                                s.top_k, "--top-p", s.top_p, "--min-p", s.min_p});
        INFO(cli.err);
        REQUIRE(cli.exit_code == 0);
        const nlohmann::json want = nlohmann::json::parse(cli.out).at("sampler").at("candidates");
        if (!s.exact) {
            CHECK(want.size() > 256);  // the CLI keeps more than the page holds: the page says so
            CHECK(got.rows.empty());
            continue;
        }
        CHECK(got.count == static_cast<int>(want.size()));
        REQUIRE(!got.rows.empty());
        REQUIRE(got.rows.size() == std::min<size_t>(want.size(), 40));
        for (size_t k = 0; k < got.rows.size(); ++k) {
            INFO("candidate " << k);
            CHECK(got.rows[k].first == want[k]["id"].get<int>());
            // The page rounds to float where the sampler does; exp() may differ in the last bit.
            CHECK(std::abs(got.rows[k].second - want[k]["p"].get<double>()) <= 1e-6 * want[k]["p"].get<double>() + 1e-12);
        }
    }
    fs::remove_all(dir);
}

TEST_CASE("trace --html: the provenance block names the model file by its SHA-256", "[trace][html]") {
    CHECK(journey::sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    CHECK(journey::sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    CHECK(journey::sha256_hex(std::string(1000000, 'a')) ==
          "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    // FIPS 180-2 examples: one block, two blocks (56 bytes: the length spills over), a million.
    CHECK(journey::sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
          "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

// --pos all: one pass keeps every position; a click on a token (the page's own click handler,
// fired from the URL fragment) shows that position, whose numbers match `trace --pos N` and
// whose sampling panel matches `next --sampler` on the prompt cut after that token.
TEST_CASE("trace --pos all --html: a click on a token traces it, as trace --pos N does", "[trace][html][chromium]") {
    char tmpl[] = "/tmp/journey-posall-XXXXXX";
    const fs::path dir = mkdtemp(tmpl);
    const fs::path page = dir / "trace.html";
    const std::string model = data_dir() + "/reference/gpt2-tiny";
    const std::string prompt = "The capital of France is";
    auto r = run_journey({"trace", "-m", model, "-p", prompt, "--pos", "all", "--html", page.string(), "--format", "json"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const nlohmann::json doc = nlohmann::json::parse(r.out);
    const int T = static_cast<int>(doc["tokens"].size());
    REQUIRE(T >= 4);
    CHECK_THAT(slurp(page), Contains("\"positions\""));
    auto bad = run_journey({"trace", "-m", model, "-p", prompt, "--pos", "all"});
    CHECK(bad.exit_code != 0);
    CHECK_THAT(bad.err, Contains("--pos all"));
    if (skip_without_chromium(dir)) return;
    for (int pos : {1, T - 2}) {
        INFO("position " << pos);
        const fs::path dom = dir / ("dom" + std::to_string(pos) + ".html");
        auto want = run_journey({"trace", "-m", model, "-p", prompt, "--pos", std::to_string(pos), "--format", "json"});
        REQUIRE(want.exit_code == 0);
        const nlohmann::json w = nlohmann::json::parse(want.out);
        const int second = w["final"]["top"][1]["id"].get<int>();  // the lens follows it after a click
        const std::string rendered = dump_dom(dir, page, dom,
                                              "#pos=" + std::to_string(pos) + "&lens=" + std::to_string(second) +
                                                  "&measure=entropy&top_k=5");
        CHECK_THAT(rendered, Contains("data-position=\"" + std::to_string(pos) + "\""));
        // The lens now follows the final top-2: its final row says rank 2.
        CHECK_THAT(rendered, Contains("data-target=\"" + std::to_string(second) + "\""));
        {
            const size_t at = rendered.find("<th>final</th>", rendered.find("id=\"lens\""));
            REQUIRE(at != std::string::npos);
            CHECK(rendered.substr(at, rendered.find("</tr>", at) - at).find("<td class=\"num\">2</td>") != std::string::npos);
        }
        // The layer x head grid, coloured by entropy: every head's value (kept in milli-nats).
        const size_t grid = rendered.find("id=\"head-grid\"");
        REQUIRE(grid != std::string::npos);
        const std::string table = rendered.substr(grid, rendered.find("</table>", grid) - grid);
        CHECK_THAT(table, Contains("data-measure=\"entropy\""));
        std::vector<double> got;
        const std::regex cell("data-value=\"([^\"]+)\"");
        for (auto it = std::sregex_iterator(table.begin(), table.end(), cell); it != std::sregex_iterator(); ++it)
            got.push_back(std::stod((*it)[1]));
        std::vector<double> expect;
        for (const auto& l : w["layers"])
            for (const auto& h : l["attn"]["heads"]) expect.push_back(h["entropy"].get<double>());
        REQUIRE(got.size() == expect.size());
        for (size_t i = 0; i < got.size(); ++i) CHECK(std::abs(got[i] - expect[i]) <= 5.01e-4);
        // The logit lens's rank of the followed token, where it is among a layer's top cells.
        for (const auto& l : w["layers"]) {
            int rank = 0;
            for (size_t i = 0; i < l["lens"]["top"].size() && i < 3; ++i)
                if (l["lens"]["top"][i]["id"].get<int>() == second) rank = static_cast<int>(i) + 1;
            if (rank == 0) continue;
            const std::string row = "<th>L" + std::to_string(l["layer"].get<int>()) + "</th>";
            const size_t at = rendered.find(row, rendered.find("Logit lens"));
            REQUIRE(at != std::string::npos);
            const size_t end = rendered.find("</tr>", at);
            CHECK(rendered.substr(at, end - at).find("<td class=\"num\">" + std::to_string(rank) + "</td>") !=
                  std::string::npos);
        }
        // The sampling panel at this position: generate's sampler after the prompt's first pos+1 tokens.
        std::string cut;
        for (int i = 0; i <= pos; ++i) cut += (i ? " " : "") + std::to_string(doc["tokens"][size_t(i)]["id"].get<int>());
        auto cli = run_journey({"next", "-m", model, "--ids", cut, "--sampler", "--json", "--top-k", "5"});
        INFO(cli.err);
        REQUIRE(cli.exit_code == 0);
        const nlohmann::json cands = nlohmann::json::parse(cli.out).at("sampler").at("candidates");
        const PageCandidates pc = page_candidates(rendered);
        CHECK(pc.exact);
        REQUIRE(pc.rows.size() == cands.size());
        for (size_t k = 0; k < pc.rows.size(); ++k) {
            CHECK(pc.rows[k].first == cands[k]["id"].get<int>());
            // --pos all computes every position's logits as one [T, V] product, next the last row
            // alone: the kernels' float sums may round apart (measured ~1e-6 relative in p).
            CHECK(std::abs(pc.rows[k].second - cands[k]["p"].get<double>()) <= 1e-5 * cands[k]["p"].get<double>() + 1e-12);
        }
    }
    fs::remove_all(dir);
}

// journey patch --html: the grid in a page; every cell carries the JSON's restored fraction.
TEST_CASE("patch --html: the grid as a page, each cell the JSON's value", "[trace][html][chromium][patch]") {
    char tmpl[] = "/tmp/journey-patchhtml-XXXXXX";
    const fs::path dir = mkdtemp(tmpl);
    const fs::path page = dir / "patch.html";
    auto r = run_journey({"patch", "-m", data_dir() + "/reference/gpt2-tiny", "--clean", "The capital of France is",
                          "--corrupted", "The capital of Spain is", "--json", "--html", page.string()});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const nlohmann::json doc = nlohmann::json::parse(r.out);
    CHECK(doc.count("provenance") == 0);  // the page's only
    const std::string html = slurp(page);
    CHECK_THAT(html, Contains("\"provenance\""));
    for (const char* fetch : {"src=", "href=", "<link", "@import", "url(", "fetch(", "XMLHttpRequest"}) {
        INFO(fetch);
        CHECK(html.find(fetch) == std::string::npos);
    }
    const std::string rendered = rendered_dom(dir, page);
    if (rendered.empty()) return;
    const size_t grid = rendered.find("id=\"patch-grid\"");
    REQUIRE(grid != std::string::npos);
    const std::string table = rendered.substr(grid, rendered.find("</table>", grid) - grid);
    std::vector<double> cells;
    const std::regex cell("data-value=\"([^\"]+)\"");
    for (auto it = std::sregex_iterator(table.begin(), table.end(), cell); it != std::sregex_iterator(); ++it)
        cells.push_back(std::stod((*it)[1]));
    std::vector<double> expect;
    for (const auto& row : doc["rows"])
        for (const auto& v : row["restored"]) expect.push_back(v.get<double>());
    REQUIRE(cells.size() == expect.size());
    REQUIRE(!cells.empty());
    for (size_t i = 0; i < cells.size(); ++i) CHECK(std::abs(cells[i] - expect[i]) <= 1e-12 * (1 + std::abs(expect[i])));
    fs::remove_all(dir);
}

// The attribution view of families with parts of their own: Gemma 4's per-layer-input branch
// (a `ple` column) and Qwen3.5-MoE's shared expert (a `shared expert` column beside the routed
// experts); every such cell, rendered by Chromium, carries the JSON's part.
TEST_CASE("trace --attribute --html: Gemma 4's per-layer inputs and Qwen3.5-MoE's shared expert in the page",
          "[trace][html][chromium][attribution]") {
    struct Family {
        const char* name;
        const char* field;   // the JSON's part, per layer
        const char* column;  // the table's header
        const char* title;   // each cell's hover text: "layer L <title>: value"
    };
    for (const Family f : {Family{"gemma4", "ple", "ple", "per-layer input"},
                           Family{"qwen35moe", "shared_expert", "shared expert", "shared expert"}}) {
        INFO(f.name);
        const std::vector<std::string> paths = fixture_paths(f.name);
        REQUIRE(!paths.empty());
        const auto expect = nlohmann::json::parse(std::ifstream(fixture_dir(f.name) + "/expect.json"));
        std::string ids;
        for (const auto& id : expect["cases"][0]["ids"]) ids += (ids.empty() ? "" : ",") + std::to_string(id.get<int>());
        char tmpl[] = "/tmp/journey-attrhtml-XXXXXX";
        const fs::path dir = mkdtemp(tmpl);
        const fs::path page = dir / "trace.html";
        auto r = run_journey({"trace", "-m", paths.back(), "--ids", ids, "--attribute", "--format", "json", "-t", "1",
                              "--html", page.string()});
        INFO(r.err);
        REQUIRE(r.exit_code == 0);
        const nlohmann::json layers = nlohmann::json::parse(r.out).at("attribution").at("layers");
        size_t parts = 0;
        for (const auto& l : layers) parts += !l[f.field].is_null();
        REQUIRE(parts > 0);  // the family has the part at all
        const std::string rendered = rendered_dom(dir, page);
        if (rendered.empty()) return;
        CHECK_THAT(rendered, Contains(std::string("<th>") + f.column + "</th>"));
        size_t seen = 0;
        for (const auto& l : layers) {
            if (l[f.field].is_null()) continue;
            const std::string key = "layer " + std::to_string(l["layer"].get<int>()) + " " + f.title + ": ";
            const size_t at = rendered.find(key);
            INFO(key);
            REQUIRE(at != std::string::npos);
            const double v = l[f.field].get<double>();
            CHECK(std::abs(std::stod(rendered.substr(at + key.size(), 40)) - v) <= 1e-12 * (1 + std::abs(v)));
            ++seen;
        }
        CHECK(seen == parts);
        fs::remove_all(dir);
    }
}
