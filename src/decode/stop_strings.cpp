// Stop strings over a stream of bytes: hold back only what could still become a stop string.
#include "journey/decode/stop_strings.h"

#include <algorithm>

#include "journey/errors.h"

namespace journey {

StopScan scan_stops(std::string_view text, std::span<const std::string> stops) {
    StopScan scan;
    for (const auto& s : stops) {
        if (s.empty()) continue;  // matches everywhere; StopMatcher rejects it up front
        const size_t at = text.find(s);
        if (at != std::string_view::npos && (!scan.stop_at || at < *scan.stop_at)) scan.stop_at = at;
    }
    if (scan.stop_at) {
        scan.safe = *scan.stop_at;
        return scan;
    }
    // No stop inside: hold back the longest tail of text that a stop string begins with.
    size_t held = 0;
    for (const auto& s : stops) {
        if (s.empty()) continue;
        for (size_t len = std::min(s.size() - 1, text.size()); len > held; --len) {
            if (text.ends_with(std::string_view(s).substr(0, len))) {
                held = len;
                break;
            }
        }
    }
    scan.safe = text.size() - held;
    return scan;
}

StopMatcher::StopMatcher(std::vector<std::string> stops) : stops_(std::move(stops)) {
    for (const auto& s : stops_)
        if (s.empty()) throw UsageError("--stop: a stop string must not be empty");
}

StopMatcher::Step StopMatcher::feed(std::string_view bytes) {
    Step step;
    if (stopped_) return step;
    // Everything emitted earlier was proven not to start a stop string, so a new match
    // can only begin inside held_ + bytes.
    held_.append(bytes);
    const StopScan scan = scan_stops(held_, stops_);
    step.emit = held_.substr(0, scan.safe);
    if (scan.stop_at) {
        stopped_ = step.stopped = true;
        held_.clear();
    } else {
        held_.erase(0, scan.safe);
    }
    return step;
}

std::string StopMatcher::flush() {
    std::string rest;
    if (!stopped_) rest.swap(held_);
    return rest;
}

}  // namespace journey
