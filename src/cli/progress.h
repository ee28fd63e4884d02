// A one-line progress bar on stderr, redrawn in place, with rate and ETA: only when stderr is a
// terminal (and not -q), so logs and pipes never see it.
#pragma once
#include <chrono>
#include <cstddef>
#include <functional>
#include <string>

namespace journey::cli {

class Progress {
public:
    // `what` labels the bar ("score"), `unit` the rate ("tok").
    Progress(std::string what, std::string unit);
    ~Progress();  // clears the line
    Progress(const Progress&) = delete;
    Progress& operator=(const Progress&) = delete;

    void update(size_t done, size_t total);
    bool active() const { return active_; }

private:
    std::string what_, unit_;
    bool active_;
    bool drawn_ = false;
    std::chrono::steady_clock::time_point start_, last_;
};

// A (done, total) callback for the library's long jobs (journey convert / quantize): the bar
// starts at the first call, so its rate counts the work reported, and is cleared with the callback.
std::function<void(size_t done, size_t total)> progress_bar(std::string what, std::string unit);

}  // namespace journey::cli
