// Writing an output file without destroying anything (convert, quantize): the bytes go to a
// temporary file with an unpredictable name (mkstemp) in the destination's directory, which is
// fsync'd and renamed over the destination only when complete. On an error, on SIGINT, SIGTERM
// or SIGHUP, and on a file-size limit (SIGXFSZ is ignored while writing, so the write fails
// with EFBIG) the temporary file is removed and an existing destination is left as it was.
#pragma once
#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace journey {

// Refuses (UsageError naming the output) a destination that is a directory, a FIFO, a device
// or a socket, one in a directory that does not exist, and one that is the same file (device
// and inode) as any of `inputs` (a directory's regular files are compared, not the directory).
void check_output_path(const std::filesystem::path& dest, const std::vector<std::filesystem::path>& inputs = {});

class OutputFile {
public:
    // Checks dest (check_output_path without inputs) and creates the temporary file.
    explicit OutputFile(const std::filesystem::path& dest);
    ~OutputFile();  // removes the temporary file unless committed
    OutputFile(const OutputFile&) = delete;
    OutputFile& operator=(const OutputFile&) = delete;

    // Throws InputError naming the destination when the write fails (disk full, EFBIG).
    void write(const void* p, size_t n);
    // Flushes, fsyncs and renames the temporary file over the destination. `check`, when given,
    // first reads the complete temporary file (its path): throwing refuses the output.
    void commit(const std::function<void(const std::filesystem::path&)>& check = {});

private:
    [[noreturn]] void fail(const char* what, int err) const;
    std::filesystem::path dest_, tmp_;
    int fd_ = -1;
    bool committed_ = false;
    std::string buf_;  // writes are gathered into 1 MiB blocks
    void flush();
};

}  // namespace journey
