#include "batch.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"
#include "interrupt.h"
#include "journey/errors.h"
#include "journey/formats/json_file.h"
#include "journey/model/weights.h"
#include "journey/text/tokenizer.h"

namespace journey::cli {

namespace {

using Clock = std::chrono::steady_clock;

// The prompt of one batch line; throws InputError when the line is unusable. Its answer goes out
// as JSON, which holds only UTF-8, so a line that is not UTF-8 is refused here, alone.
std::string prompt_of(const std::string& line) {
    if (valid_utf8(line) != line) throw InputError("the line is not valid UTF-8: \"" + excerpt(line, 40) + "\"");
    if (!line.starts_with('{')) return line;
    if (!json_depth_ok(line)) throw InputError("JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception& e) {  // a syntax error, or a number too large (1e400)
        throw InputError(std::string("invalid JSON: ") + excerpt(e.what(), 160));
    }
    if (!j.is_object() || !j.contains("prompt") || !j["prompt"].is_string())
        throw InputError("a JSON line needs a string \"prompt\"");
    return j["prompt"].get<std::string>();
}

// "K/N" with 1 <= K <= N.
void parse_shard(const std::string& s, size_t& k, size_t& n) {
    const auto slash = s.find('/');
    auto num = [&](std::string_view v, size_t& out) {
        const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
        return ec == std::errc() && p == v.data() + v.size() && !v.empty();
    };
    if (slash == std::string::npos || !num(std::string_view(s).substr(0, slash), k) ||
        !num(std::string_view(s).substr(slash + 1), n) || n == 0 || k == 0 || k > n || n > 1000000)
        throw UsageError("--shard: must be K/N with 1 <= K <= N <= 1000000 (e.g. 2/8), got '" + excerpt(s, 40) + "'");
}

// --resume: the records already complete in the output file, and the bytes they take. A last
// line without its newline is what a killed run left half written: it is cut off (by run_batch,
// once the model has loaded). Any complete line that is not a record of a batch run
// ({"line": N, ...}) makes the file not ours to append to.
std::set<size_t> complete_records(const std::string& path, long& good) {
    std::set<size_t> done;
    std::ifstream f(path, std::ios::binary);
    if (!f) throw InputError("-o " + path + ": cannot read it to resume: " + std::strerror(errno));
    std::string line;
    size_t n = 0;
    good = 0;
    while (std::getline(f, line)) {
        if (f.eof()) break;  // no newline after it: a half-written line
        ++n;
        nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
        if (j.is_discarded() || !j.is_object() || !j.contains("line") || !j["line"].is_number_unsigned())
            throw UsageError("--resume: " + path + ": line " + std::to_string(n) +
                             " is not a record of a --batch run (no \"line\" index); give a fresh -o file");
        done.insert(j["line"].get<size_t>());
        good += long(line.size() + 1);
    }
    return done;
}

// How many tokens a record's answer evaluated: generate's usage, next's prompt, score's tokens.
size_t tokens_of(const nlohmann::ordered_json& j) {
    if (j.contains("usage") && j["usage"].contains("total_tokens")) return j["usage"]["total_tokens"].get<size_t>();
    if (j.contains("prompt_tokens") && j["prompt_tokens"].is_array()) return j["prompt_tokens"].size();
    if (j.contains("tokens") && j["tokens"].is_array()) return j["tokens"].size();
    return 0;
}

// The progress line: records done of the shard's total (when the input is a file), tokens per
// second and the time left. Redrawn in place on a terminal; with --progress on anything else, a
// line every 5 seconds.
class BatchProgress {
public:
    BatchProgress(bool forced) : tty_(isatty(STDERR_FILENO) != 0), on_(!quiet() && (tty_ || forced)) {}
    ~BatchProgress() {
        if (drawn_) std::fputs("\r\x1b[K", stderr);
    }
    void update(size_t done, size_t total, size_t tokens) {
        if (!on_) return;
        const auto now = Clock::now();
        if (now - last_ < (tty_ ? std::chrono::milliseconds(100) : std::chrono::milliseconds(5000))) return;
        last_ = now;
        const double s = std::chrono::duration<double>(now - start_).count();
        const double tok_s = s > 0 ? double(tokens) / s : 0;
        std::string line = "batch: " + std::to_string(done) + (total ? "/" + std::to_string(total) : "") + " records, ";
        char buf[96];
        std::snprintf(buf, sizeof buf, "%.1f tok/s", tok_s);
        line += buf;
        if (total && done > 0 && done <= total) {
            std::snprintf(buf, sizeof buf, ", ETA %.0f s", s / double(done) * double(total - done));
            line += buf;
        }
        if (tty_) {
            std::fprintf(stderr, "\r\x1b[K%s", line.c_str());
            drawn_ = true;
        } else {
            std::fprintf(stderr, "%s\n", line.c_str());
        }
        std::fflush(stderr);
    }

private:
    bool tty_, on_, drawn_ = false;
    Clock::time_point start_ = Clock::now(), last_ = start_;
};

void write_all(int fd, const std::string& s, const std::string& path) {
    for (size_t off = 0; off < s.size();) {
        const ssize_t w = ::write(fd, s.data() + off, s.size() - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) throw InputError("-o " + path + ": cannot write: " + std::strerror(errno));
        off += size_t(w);
    }
}

}  // namespace

void add_batch_option(CLI::App* cmd, BatchOptions& o) {
    cmd->add_option("--batch", o.file,
                    "Run every line of FILE ('-' = stdin) as a prompt: plain text, or JSON {\"prompt\": ...}; "
                    "one JSON line out per prompt, with its \"line\" index");
    cmd->add_option("--shard", o.shard,
                    "With --batch: run only the records n with (n - 1) mod N == K - 1 (K/N, 1 <= K <= N), so N jobs "
                    "split a file; their outputs sorted by \"line\" are one job's output");
    cmd->add_option("-o,--output", o.output, "With --batch: write the records to FILE instead of stdout");
    cmd->add_flag("--resume", o.resume,
                  "With --batch -o FILE: keep the complete records already in FILE and run only the others");
    cmd->add_flag("--progress", o.progress,
                  "With --batch: a progress line on stderr even when it is not a terminal (every 5 s)");
    cmd->add_flag("--no-timings", o.no_timings,
                  "With --batch: leave out each record's \"timings\", so a run's output repeats byte for byte "
                  "(shards merged, resumed runs)");
}

void add_parallel_option(CLI::App* cmd, BatchOptions& o) {
    cmd->add_option("--parallel", o.parallel,
                    "With --batch (-np N as in llama.cpp): N records together (continuous batching: each weight is read once per "
                    "step for all N sequences' next tokens, and for several short prompts); the output is exactly the one-at-a-time output")
        ->check(CLI::Range(1, 256));
}

BatchInput open_batch(const BatchOptions& opts) {
    BatchInput in;
    in.opts = opts;
    if (opts.file.empty()) {
        const char* flag = !opts.shard.empty()    ? "--shard"
                           : !opts.output.empty() ? "--output"
                           : opts.resume          ? "--resume"
                           : opts.progress        ? "--progress"
                           : opts.no_timings      ? "--no-timings"
                           : opts.parallel > 1    ? "--parallel"
                                                  : nullptr;
        if (flag) throw UsageError(std::string(flag) + ": only with --batch FILE");
        return in;
    }
    if (opts.resume && opts.output.empty()) throw UsageError("--resume: needs -o FILE (the output to resume)");
    if (!opts.shard.empty()) parse_shard(opts.shard, in.shard_k, in.shard_n);
    if (opts.file != "-") in.contents = read_file(opts.file, "--batch");
    if (!opts.output.empty()) {
        struct stat out_st{};
        if (::stat(opts.output.c_str(), &out_st) == 0) {
            if (!S_ISREG(out_st.st_mode)) throw UsageError("-o " + opts.output + ": not a regular file");
            struct stat in_st{};
            if (opts.file != "-" && ::stat(opts.file.c_str(), &in_st) == 0 && in_st.st_dev == out_st.st_dev &&
                in_st.st_ino == out_st.st_ino)
                throw UsageError("-o " + opts.output + ": is the --batch input itself");
        }
        if (opts.resume && ::access(opts.output.c_str(), F_OK) == 0) in.done = complete_records(opts.output, in.resume_at);
    }
    return in;
}

void run_batch(BatchInput& input, const BatchRecord& one, Batcher* batcher) {
    const std::string& file = input.opts.file;
    const std::string& contents = input.contents;
    std::istringstream in_file(contents);
    std::istream& in = file == "-" ? std::cin : in_file;
    const size_t lines = size_t(std::count(contents.begin(), contents.end(), '\n')) +
                         (contents.empty() || contents.ends_with('\n') ? 0 : 1);  // 0 for stdin: unknown
    auto mine = [&](size_t n) { return (n - 1) % input.shard_n == input.shard_k - 1; };
    size_t total = 0;  // the records this run will do, when known
    for (size_t n = 1; n <= lines; ++n) total += mine(n) && !input.done.contains(n);
    if (!input.opts.output.empty()) {  // opened now that the model has loaded: a failed load leaves it as it was
        const std::string& path = input.opts.output;
        input.out_fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | (input.opts.resume ? 0 : O_TRUNC), 0644);
        if (input.out_fd < 0) throw InputError("-o " + path + ": cannot open: " + std::strerror(errno));
        if (input.opts.resume && ftruncate(input.out_fd, input.resume_at) != 0)
            throw InputError("-o " + path + ": cannot cut off the partial last line: " + std::strerror(errno));
        if (::lseek(input.out_fd, 0, SEEK_END) < 0)
            throw InputError("-o " + path + ": cannot seek: " + std::strerror(errno));
    }
    BatchProgress bar(input.opts.progress);
    const auto start = Clock::now();
    size_t failed = 0, ran = 0, skipped = 0, tokens = 0, n = 0;

    // The next record of this run: its index and line; false at the end (or after Ctrl-C, when
    // no new one starts). With a batcher, only one worker at a time runs (batcher.h), so the
    // state below needs no lock.
    bool input_done = false;
    auto next_record = [&](size_t& index, std::string& line) {
        for (;;) {
            if (input_done || interrupt_flag().load()) return false;
            bool got;
            {
                Batcher::Away away(file == "-" ? batcher : nullptr);  // stdin may block: not holding up the others
                got = static_cast<bool>(std::getline(in, line));
            }
            if (!got) {
                input_done = true;
                return false;
            }
            index = ++n;
            if (!mine(index)) continue;
            if (input.done.contains(index)) {
                ++skipped;
                continue;
            }
            if (line.ends_with('\r')) line.pop_back();
            return true;
        }
    };
    auto record = [&](size_t index, const std::string& line, int worker) {
        nlohmann::ordered_json j;
        try {
            j = one(prompt_of(line), worker);
            tokens += tokens_of(j);
            if (input.opts.no_timings) j.erase("timings");
        } catch (const InputError& e) {
            j = {{"error", e.what()}};
            ++failed;
        }
        nlohmann::ordered_json row = {{"line", index}};
        row.update(j);
        return json_text(row);
    };
    auto write = [&](const std::string& row) {
        if (input.out_fd >= 0)
            write_all(input.out_fd, row + '\n', input.opts.output);  // one write: a whole line or none
        else
            out_line(row);
        ++ran;
        bar.update(ran, total, tokens);
    };

    const int parallel = batcher ? std::max(1, input.opts.parallel) : 1;
    if (parallel == 1) {
        size_t index = 0;
        std::string line;
        while (next_record(index, line)) write(record(index, line, 0));
    } else {
        // Records are numbered as they start; each is written once all before it are.
        size_t started = 0, written = 0;
        std::map<size_t, std::string> finished;
        bool stop = false;  // a worker failed beyond its record (a closed pipe): no new record starts
        batcher->run(parallel, [&](int worker) {
            size_t index = 0;
            std::string line;
            while (!stop && next_record(index, line)) {
                const size_t k = started++;
                try {
                    finished[k] = record(index, line, worker);
                    for (auto it = finished.begin(); it != finished.end() && it->first == written; it = finished.erase(it)) {
                        write(it->second);
                        ++written;
                    }
                } catch (...) {
                    stop = true;
                    throw;
                }
            }
        });
    }
    if (input.out_fd >= 0) {
        ::close(input.out_fd);
        input.out_fd = -1;
    }
    const double s = std::chrono::duration<double>(Clock::now() - start).count();
    if (!quiet()) {
        std::string skip = skipped ? ", " + std::to_string(skipped) + " already in " + input.opts.output : "";
        std::fprintf(stderr, "batch: %zu records (%zu failed%s), %zu tokens in %.2f s, %.1f tok/s\n", ran, failed,
                     skip.c_str(), tokens, s, s > 0 ? double(tokens) / s : 0.0);
    }
    if (failed > 0)
        throw InputError("--batch " + file + ": " + std::to_string(failed) + " of " + std::to_string(ran) +
                         " prompts failed (see their \"error\" lines)");
}

std::vector<std::unique_ptr<Session>> batch_sessions(const Model& model, const SessionOptions& opts, int parallel,
                                                     Batcher& batcher) {
    std::vector<std::unique_ptr<Session>> sessions;
    sessions.push_back(std::make_unique<Session>(model, opts));
    if (parallel <= 1) return sessions;
    const Session& one = *sessions[0];
    const double mib = double(one.kv_bytes_per_token()) * double(one.n_ctx()) / (1024.0 * 1024.0);
    const double need = mib * (parallel - 1);
    const double avail = double(available_memory()) / (1024.0 * 1024.0);
    if (avail > 0 && need > avail * 0.9)
        throw UsageError("--parallel " + std::to_string(parallel) + ": " + std::to_string(parallel) + " caches of " +
                         std::to_string(one.n_ctx()) + " positions take " + std::to_string(long(mib * parallel)) +
                         " MiB, more than the " + std::to_string(long(avail)) +
                         " MiB the machine has free; a smaller -c or --parallel fits");
    if (!quiet())
        std::fprintf(stderr, "parallel: %d sequences x %d positions, KV cache %d x %.1f MiB = %.1f MiB\n", parallel,
                     one.n_ctx(), parallel, mib, mib * parallel);
    for (int i = 1; i < parallel; ++i) sessions.push_back(std::make_unique<Session>(model, opts));
    for (auto& s : sessions) s->set_batcher(&batcher);
    return sessions;
}

}  // namespace journey::cli
