// Install-facing behaviour: journey help, --version, the completions, and an installed binary
// finding the default model next to itself.
#include <cstdio>
#include <filesystem>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_run.h"

using namespace journey::test;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace fs = std::filesystem;

namespace {

// stdout of a shell command line (the paths used here have no spaces).
std::string shell(const std::string& cmd) {
    std::string out;
    if (FILE* p = popen(cmd.c_str(), "r")) {
        char buf[4096];
        for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
        pclose(p);
    }
    return out;
}

}  // namespace

TEST_CASE("journey help [SUB] and --version", "[cli][install]") {
    const auto all = run_journey({"help"});
    CHECK(all.exit_code == 0);
    CHECK_THAT(all.out, Contains("Subcommands:") && Contains("generate"));
    const auto sub = run_journey({"help", "generate"});
    CHECK(sub.exit_code == 0);
    CHECK(sub.out == run_journey({"generate", "--help"}).out);
    const auto bad = run_journey({"help", "gen"});
    CHECK(bad.exit_code == 1);
    CHECK_THAT(bad.err, StartsWith("journey: gen: no such subcommand"));
    const auto v = run_journey({"--version"});
    CHECK(v.exit_code == 0);
    CHECK_THAT(v.out, StartsWith("journey ") && Contains(" (git "));
}

TEST_CASE("bash completion lists subcommands and a subcommand's flags", "[cli][install]") {
    const std::string dir = fs::path(JOURNEY_BIN).parent_path().string();
    const std::string script = JOURNEY_SOURCE_DIR "/install/completions/journey.bash";
    auto complete = [&](const std::string& words, int cword) {
        return shell("PATH=" + dir + ":$PATH bash -c 'source " + script + "; COMP_WORDS=(" + words +
                     "); COMP_CWORD=" + std::to_string(cword) + "; _journey; echo ${COMPREPLY[@]}'");
    };
    CHECK(complete("journey gen", 1) == "generate\n");
    CHECK_THAT(complete("journey generate --max", 2), Contains("--max-tokens") && Contains("--max-new-tokens"));
}

TEST_CASE("an installed binary uses the default model installed next to it", "[cli][install]") {
    char tmpl[] = "/tmp/journey-install-XXXXXX";
    const fs::path prefix = mkdtemp(tmpl);
    fs::create_directories(prefix / "bin");
    fs::create_directories(prefix / "share/journey/models");
    fs::copy_file(JOURNEY_BIN, prefix / "bin/journey");
    fs::create_directory_symlink(std::string(JOURNEY_TEST_DATA) + "/cli/gpt2", prefix / "share/journey/models/default");
    const std::string out = shell("env -u JOURNEY_MODEL " + (prefix / "bin/journey").string() + " info --json");
    fs::remove_all(prefix);
    const auto j = nlohmann::json::parse(out, nullptr, false);
    REQUIRE(!j.is_discarded());
    CHECK(j["model"] == (prefix / "share/journey/models/default").string());
    CHECK(j["n_vocab"] == 501);  // the stand-in, not the source tree's models/default
}
