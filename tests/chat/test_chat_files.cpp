// The one reader of a directory's chat files: which template wins, named templates, special
// tokens, generation_config's end tokens, and the files it refuses.
#include <fstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "journey/chat/chat_files.h"
#include "files.h"
#include "journey/errors.h"
#include "safetensors_writer.h"

using journey::ChatFiles;
using journey::read_chat_files;
using journey::test::write_file;
using nlohmann::json;

TEST_CASE("read_chat_files: chat_template.jinja, then tokenizer_config.json, then chat_template.json", "[chat][files]") {
    journey::test::TempDir d;
    CHECK_FALSE(read_chat_files(d.path).chat_template);  // nothing: no template, no error

    write_file(d / "chat_template.json", json{{"chat_template", "processor"}}.dump());
    ChatFiles f = read_chat_files(d.path);
    REQUIRE(f.chat_template);
    CHECK(*f.chat_template == "processor");
    CHECK(f.template_source == (d / "chat_template.json").string() + ": chat_template");

    write_file(d / "tokenizer_config.json",
          json{{"chat_template", "config"}, {"bos_token", "<s>"}, {"eos_token", {{"content", "</s>"}}}}.dump());
    f = read_chat_files(d.path);
    CHECK(*f.chat_template == "config");
    CHECK(f.special_token("bos") == "<s>");
    CHECK(f.special_token("eos") == "</s>");
    CHECK_FALSE(f.special_token("pad"));

    write_file(d / "chat_template.jinja", "jinja file");
    f = read_chat_files(d.path);
    CHECK(*f.chat_template == "jinja file");
    CHECK(f.template_source == (d / "chat_template.jinja").string());
}

TEST_CASE("read_chat_files: named templates and generation_config's end tokens", "[chat][files]") {
    journey::test::TempDir d;
    write_file(d / "tokenizer_config.json",
          json{{"chat_template", json::array({{{"name", "tool_use"}, {"template", "T"}}, {{"name", "default"}, {"template", "D"}}})}}.dump());
    write_file(d / "generation_config.json", json{{"eos_token_id", {2, 7}}}.dump());
    ChatFiles f = read_chat_files(d.path);
    CHECK(*f.chat_template == "D");
    CHECK(f.named_templates == std::vector<std::pair<std::string, std::string>>{{"tool_use", "T"}});
    CHECK(f.eos_token_ids == std::vector<int64_t>{2, 7});

    write_file(d / "tokenizer_config.json", json{{"chat_template", json::array({{{"name", "tool_use"}, {"template", "T"}}})}}.dump());
    CHECK_THROWS_WITH(read_chat_files(d.path), Catch::Contains("no template named \"default\"") && Catch::Contains("tool_use"));
    write_file(d / "tokenizer_config.json", json{{"chat_template", 3}}.dump());
    CHECK_THROWS_AS(read_chat_files(d.path), journey::ModelError);
    write_file(d / "tokenizer_config.json", "{");
    CHECK_THROWS_WITH(read_chat_files(d.path), Catch::Contains("tokenizer_config.json"));
    write_file(d / "tokenizer_config.json", "{}");
    write_file(d / "generation_config.json", json{{"eos_token_id", "x"}}.dump());
    CHECK_THROWS_WITH(read_chat_files(d.path), Catch::Contains("generation_config.json") && Catch::Contains("eos_token_id"));
}
