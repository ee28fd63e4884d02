// A file mapped read-only into memory (RAII). Weights are used in place from the mapping.
#pragma once
#include <cstddef>
#include <filesystem>
#include <span>
#include <sys/types.h>

namespace journey {

// What a file of st_mode `mode` that is not a regular file is, for an error: "a directory", "a
// FIFO", "a device", "a socket" or "a special file".
const char* special_file_kind(mode_t mode);

class MappedFile {
public:
    // Throws ModelError naming the file when it cannot be opened or mapped.
    explicit MappedFile(const std::filesystem::path& path);
    ~MappedFile();
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    const std::byte* data() const { return data_; }
    size_t size() const { return size_; }
    std::span<const std::byte> bytes() const { return {data_, size_}; }
    const std::filesystem::path& path() const { return path_; }
    // Reads n bytes at `offset` of the file into dst with pread, not through the mapping (whose
    // pages are not touched); false if the file no longer holds them (truncated since) or the
    // read fails.
    bool read(size_t offset, std::byte* dst, size_t n) const;

private:
    std::filesystem::path path_;
    const std::byte* data_ = nullptr;
    size_t size_ = 0;
    int fd_ = -1;
};

}  // namespace journey
