#include "parse_errors.h"

#include <cstdio>
#include <string_view>
#include <vector>

#include "suggest.h"

namespace journey::cli {

namespace {

std::vector<std::string> subcommand_names(const CLI::App& app) {
    std::vector<std::string> names;
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) names.push_back(sub->get_name());
    return names;
}

std::string join(const std::vector<std::string>& v, std::string_view sep) {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i) s += (i ? std::string(sep) : "") + v[i];
    return s;
}

// Every spelling of every flag of `app` (and of its parent's, which fall through to it).
std::vector<std::string> flag_names(const CLI::App& app) {
    std::vector<std::string> names;
    for (const CLI::App* a = &app; a; a = a->get_parent())
        for (const CLI::Option* o : a->get_options()) {
            for (const std::string& n : o->get_lnames()) names.push_back("--" + n);
            for (const std::string& n : o->get_snames()) names.push_back("-" + n);
        }
    return names;
}

bool is_flag(const std::string& arg) {
    return arg.size() > 1 && arg[0] == '-' && !(std::isdigit(static_cast<unsigned char>(arg[1])) || arg[1] == '.');
}

// The subcommand that was being parsed, or the app itself.
const CLI::App& parsed_command(const CLI::App& app) {
    for (const CLI::App* sub : app.get_subcommands())
        if (sub->parsed()) return *sub;
    return app;
}

std::string unknown_flag(const CLI::App& app, const std::vector<std::string>& extras) {
    const CLI::App& cmd = parsed_command(app);
    const std::string where = &cmd == &app ? "journey" : "journey " + cmd.get_name();
    for (const std::string& arg : extras) {
        if (!is_flag(arg)) continue;
        const std::string flag = arg.substr(0, arg.find('='));
        // Compare without the dashes, so that "--" is not a shared prefix of everything.
        std::vector<std::string> bare;
        const std::vector<std::string> names = flag_names(cmd);
        for (const std::string& n : names) bare.push_back(n.substr(n.find_first_not_of('-')));
        const std::string near = nearest(flag.substr(flag.find_first_not_of('-')), bare);
        std::string msg = flag + ": unknown flag for " + where;
        if (!near.empty())
            for (const std::string& n : names)
                if (n.substr(n.find_first_not_of('-')) == near) {
                    msg += "; did you mean " + n + "?";
                    break;
                }
        return msg + " (" + where + " --help lists its flags)";
    }
    return extras.front() + ": unexpected argument for " + where + " (see " + where + " --help)";
}

}  // namespace

std::optional<Prescan> prescan(CLI::App& app, int argc, char** argv) {
    const std::vector<std::string> subs = subcommand_names(app);
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg.starts_with('-')) continue;  // the app's own flags take no values
        if (arg == "help") {
            if (i + 1 >= argc) {
                std::fputs(app.help().c_str(), stdout);
                return Prescan{0, ""};
            }
            const std::string sub = argv[i + 1];
            for (CLI::App* s : app.get_subcommands([](const CLI::App*) { return true; }))
                if (s->get_name() == sub) {
                    std::fputs(s->help().c_str(), stdout);
                    return Prescan{0, ""};
                }
            return Prescan{1, sub + ": no such subcommand (subcommands: " + join(subs, ", ") + ")"};
        }
        for (const std::string& s : subs)
            if (s == arg) return std::nullopt;
        std::string msg = arg + ": unknown subcommand";
        if (const std::string near = nearest(arg, subs); !near.empty()) msg += "; did you mean " + near + "?";
        return Prescan{1, msg + " (subcommands: " + join(subs, ", ") + "; journey --help)"};
    }
    return std::nullopt;
}

std::string parse_error_message(const CLI::App& app, const CLI::ParseError& e) {
    std::string what = e.what();
    if (what.starts_with(": ")) what.erase(0, 2);  // a hidden option's check names it itself
    // An unknown flag comes first, whatever else went wrong: `--tmep 0.5 -p hi` makes 0.5 look
    // like a positional prompt, but the mistake is --tmep.
    std::vector<std::string> extras = app.remaining();
    for (const CLI::App* sub : app.get_subcommands())
        for (const std::string& a : sub->remaining()) extras.push_back(a);
    for (const std::string& a : extras)
        if (is_flag(a) || dynamic_cast<const CLI::ExtrasError*>(&e)) return unknown_flag(app, extras);
    if (dynamic_cast<const CLI::RequiredError*>(&e) && app.get_subcommands().empty())
        return "no subcommand given (subcommands: " + join(subcommand_names(app), ", ") + "; journey --help)";
    if (dynamic_cast<const CLI::ExcludesError*>(&e) || dynamic_cast<const CLI::RequiresError*>(&e)) {
        // "--prompt excludes --file", "--vocab requires --merges"
        for (const std::string_view verb : {" excludes ", " requires "})
            if (const size_t k = what.find(verb); k != std::string::npos) {
                const std::string other = what.substr(k + verb.size());
                return what.substr(0, k) + (verb == " excludes " ? ": cannot be used with " : ": needs ") + other;
            }
    }
    if (dynamic_cast<const CLI::ArgumentMismatch*>(&e)) {
        // "Expected exactly 1 arguments to --prompt, got 0", "--prompt: 1 required TEXT missing"
        if (const size_t k = what.find(" arguments to "); k != std::string::npos) {
            const std::string rest = what.substr(k + 14);
            return rest.substr(0, rest.find(',')) + ": needs a value";
        }
        if (what.ends_with(" missing") && what.find(": ") != std::string::npos)
            return what.substr(0, what.find(": ")) + ": needs a value";
    }
    if (dynamic_cast<const CLI::ValidationError*>(&e)) {
        // "--max-tokens: must be ..." -> "-n/--max-tokens: must be ...": the spelling typed is there.
        const std::string name = what.substr(0, what.find(": "));
        const CLI::Option* opt = parsed_command(app).get_option_no_throw(name);
        if (opt && !opt->get_snames().empty()) return "-" + opt->get_snames().front() + "/" + what;
    }
    if (dynamic_cast<const CLI::ConversionError*>(&e)) {
        // "Could not convert: --pos = abc", "The value abc is not an allowed value for --pos"
        if (const size_t k = what.find("Could not convert: "); k != std::string::npos) {
            const std::string rest = what.substr(k + 19);
            const size_t eq = rest.find(" = ");
            if (eq != std::string::npos) return rest.substr(0, eq) + ": not a valid value: " + rest.substr(eq + 3);
        }
        if (const size_t k = what.find(" is not an allowed value for "); k != std::string::npos && what.starts_with("The value "))
            return what.substr(k + 29) + ": not a valid value: " + what.substr(10, k - 10);
    }
    return what;
}

}  // namespace journey::cli
