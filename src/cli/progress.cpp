#include "progress.h"

#include <cstdio>
#include <memory>
#include <unistd.h>

#include "common.h"

namespace journey::cli {

using Clock = std::chrono::steady_clock;

Progress::Progress(std::string what, std::string unit)
    : what_(std::move(what)), unit_(std::move(unit)), active_(isatty(STDERR_FILENO) && !quiet()),
      start_(Clock::now()), last_(start_) {}

Progress::~Progress() {
    if (drawn_) std::fputs("\r\x1b[K", stderr);  // leave the line as it was
}

void Progress::update(size_t done, size_t total) {
    if (!active_ || total == 0) return;
    const auto now = Clock::now();
    if (done < total && now - last_ < std::chrono::milliseconds(100)) return;  // ~10 redraws a second
    last_ = now;
    const double s = std::chrono::duration<double>(now - start_).count();
    const double rate = s > 0 ? double(done) / s : 0;
    const double eta = rate > 0 ? double(total - done) / rate : 0;
    constexpr int kWidth = 30;
    const int filled = int(double(kWidth) * double(done) / double(total));
    std::string bar(size_t(filled), '#');
    bar.resize(kWidth, '.');
    std::fprintf(stderr, "\r\x1b[K%s [%s] %zu/%zu %.1f %s/s ETA %.0f s", what_.c_str(), bar.c_str(), done, total, rate,
                 unit_.c_str(), eta);
    std::fflush(stderr);
    drawn_ = true;
}

std::function<void(size_t, size_t)> progress_bar(std::string what, std::string unit) {
    auto bar = std::make_shared<std::unique_ptr<Progress>>();
    return [bar, what = std::move(what), unit = std::move(unit)](size_t done, size_t total) {
        if (!*bar) *bar = std::make_unique<Progress>(what, unit);
        (*bar)->update(done, total);
    };
}

}  // namespace journey::cli
