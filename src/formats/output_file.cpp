#include "journey/formats/output_file.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "journey/errors.h"
#include "journey/formats/mapped_file.h"

namespace journey {
namespace fs = std::filesystem;

namespace {

// The temporary file a signal handler removes (one output is written at a time).
char g_tmp_path[PATH_MAX + 1];
volatile sig_atomic_t g_tmp_set = 0;
constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
struct sigaction g_old[3];
struct sigaction g_old_xfsz;

extern "C" void on_fatal_signal(int sig) {
    if (g_tmp_set) ::unlink(g_tmp_path);
    g_tmp_set = 0;
    ::signal(sig, SIG_DFL);
    ::raise(sig);
}

// The handler is in place before the file exists: mkostemps writes the name it tries into
// g_tmp_path itself, so a signal at any moment after the file is created finds its name (a signal
// before that unlinks a name not yet created). Armed only after creating, a SIGTERM in the
// microseconds between the two left the file behind (seen on a loaded machine).
void arm(const std::string& templ) {
    std::strncpy(g_tmp_path, templ.c_str(), PATH_MAX);
    g_tmp_path[PATH_MAX] = '\0';
    struct sigaction sa = {};
    sa.sa_handler = on_fatal_signal;
    sigemptyset(&sa.sa_mask);
    g_tmp_set = 1;
    for (size_t i = 0; i < 3; ++i) sigaction(kSignals[i], &sa, &g_old[i]);
    struct sigaction ign = {};
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGXFSZ, &ign, &g_old_xfsz);  // a file-size limit makes write() fail instead
}

void disarm() {
    g_tmp_set = 0;
    for (size_t i = 0; i < 3; ++i) sigaction(kSignals[i], &g_old[i], nullptr);
    sigaction(SIGXFSZ, &g_old_xfsz, nullptr);
}

std::string quoted(const fs::path& p) { return "'" + p.string() + "'"; }

}  // namespace

void check_output_path(const fs::path& dest, const std::vector<fs::path>& inputs) {
    if (dest.empty()) throw UsageError("the output file name is empty");
    struct stat st {};
    if (::stat(dest.c_str(), &st) == 0) {
        if (!S_ISREG(st.st_mode))
            throw UsageError("output " + quoted(dest) + " is " + special_file_kind(st.st_mode) + ", not a regular file (nothing written)");
        for (const fs::path& in : inputs) {
            std::vector<fs::path> files = {in};
            std::error_code ec;
            if (fs::is_directory(in, ec)) {
                files.clear();
                for (const auto& e : fs::directory_iterator(in, ec)) files.push_back(e.path());
            }
            for (const fs::path& f : files) {
                struct stat si {};
                if (::stat(f.c_str(), &si) == 0 && si.st_dev == st.st_dev && si.st_ino == st.st_ino)
                    throw UsageError("output " + quoted(dest) + " is the input " + quoted(f) + " (it would be destroyed)");
            }
        }
    }
    const fs::path parent = dest.has_parent_path() ? dest.parent_path() : fs::path(".");
    struct stat pd {};
    if (::stat(parent.c_str(), &pd) != 0 || !S_ISDIR(pd.st_mode))
        throw UsageError("cannot write " + quoted(dest) + ": its directory " + quoted(parent) + " does not exist");
}

OutputFile::OutputFile(const fs::path& dest) : dest_(dest) {
    check_output_path(dest);
    const fs::path parent = dest.has_parent_path() ? dest.parent_path() : fs::path(".");
    std::string templ = (parent / ("." + dest.filename().string())).string();
    if (templ.size() > 200) templ.resize(200);  // a long name stays within NAME_MAX with the suffix
    // The destination's extension last (".model.gguf.tmp.a8Xk2p.gguf"): a reader that goes by the
    // name (convert's check that journey loads what it wrote) reads it as what it will be.
    std::string ext = dest.extension().string();
    if (ext.size() > 16) ext.clear();
    templ += ".tmp.XXXXXX" + ext;
    if (templ.size() > PATH_MAX) throw InputError("cannot write " + quoted(dest) + ": the name is too long");
    arm(templ);
    fd_ = ::mkostemps(g_tmp_path, int(ext.size()), O_CLOEXEC);
    if (fd_ < 0) {
        const int err = errno;
        disarm();
        throw InputError("cannot write " + quoted(dest) + ": " + std::strerror(err));
    }
    tmp_ = std::string(g_tmp_path);
    // mkstemp makes 0600; an output gets what a new file would (0666 less the umask).
    const mode_t mask = ::umask(0);
    ::umask(mask);
    ::fchmod(fd_, 0666 & ~mask);
}

OutputFile::~OutputFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) ::unlink(tmp_.c_str());
    disarm();
}

void OutputFile::fail(const char* what, int err) const {
    throw InputError(std::string(what) + " " + quoted(dest_) + " failed: " + std::strerror(err));
}

void OutputFile::flush() {
    const char* p = buf_.data();
    size_t n = buf_.size();
    while (n > 0) {
        const ssize_t w = ::write(fd_, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) fail("writing", w < 0 ? errno : ENOSPC);
        p += w, n -= size_t(w);
    }
    buf_.clear();
}

void OutputFile::write(const void* p, size_t n) {
    constexpr size_t kBlock = 1u << 20;
    const char* c = static_cast<const char*>(p);
    while (n > 0) {
        const size_t take = std::min(n, kBlock - buf_.size());
        buf_.append(c, take);
        c += take, n -= take;
        if (buf_.size() == kBlock) flush();
    }
}

void OutputFile::commit(const std::function<void(const std::filesystem::path&)>& check) {
    flush();
    if (::fsync(fd_) != 0) fail("writing", errno);
    const int rc = ::close(fd_);
    fd_ = -1;
    if (rc != 0) fail("writing", errno);
    if (check) check(tmp_);
    check_output_path(dest_);  // still not a directory, FIFO or device
    if (::rename(tmp_.c_str(), dest_.c_str()) != 0) fail("renaming the output to", errno);
    committed_ = true;
}

}  // namespace journey
