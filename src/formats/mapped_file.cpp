#include "journey/formats/mapped_file.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "journey/errors.h"

namespace journey {

const char* special_file_kind(mode_t mode) {
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
    if (S_ISSOCK(mode)) return "a socket";
    return "a special file";
}

MappedFile::MappedFile(const std::filesystem::path& path) : path_(path) {
    // O_NONBLOCK: opening a FIFO would otherwise wait forever for a writer; it is refused below.
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) throw ModelError(path.string() + ": cannot open: " + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        const char* kind = special_file_kind(st.st_mode);
        ::close(fd);
        throw ModelError(path.string() + ": " + kind + ", not a regular file");
    }
    size_ = static_cast<size_t>(st.st_size);
    if (size_ > 0) {
        void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            int e = errno;
            ::close(fd);
            throw ModelError(path.string() + ": cannot map: " + std::strerror(e));
        }
        data_ = static_cast<const std::byte*>(p);
    }
    fd_ = fd;
}

MappedFile::~MappedFile() {
    if (data_) ::munmap(const_cast<std::byte*>(data_), size_);
    if (fd_ >= 0) ::close(fd_);
}

bool MappedFile::read(size_t offset, std::byte* dst, size_t n) const {
    if (offset > size_ || n > size_ - offset) return false;
    while (n > 0) {
        const ssize_t got = ::pread(fd_, dst, n, static_cast<off_t>(offset));
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return false;
        dst += got, offset += size_t(got), n -= size_t(got);
    }
    return true;
}

}  // namespace journey
