#include "interrupt.h"

#include <csignal>
#include <unistd.h>

namespace journey::cli {

namespace {

std::atomic<bool> g_flag{false};
std::atomic<int> g_signal{0};
static_assert(std::atomic<bool>::is_always_lock_free && std::atomic<int>::is_always_lock_free,
              "used from a signal handler");

void on_signal(int sig) {
    if (g_signal.exchange(sig) != 0) _exit(128 + sig);  // the second one: no more waiting
    g_flag.store(true);
}

}  // namespace

void install_interrupt_handlers() {
    struct sigaction sa = {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;  // a write in progress completes, so lines stay whole
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
}

const std::atomic<bool>& interrupt_flag() { return g_flag; }
int interrupt_signal() { return g_signal.load(); }

}  // namespace journey::cli
