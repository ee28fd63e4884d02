#include "file_kind.h"

#include <cstdint>
#include <cstring>
#include <fstream>
#include <system_error>

namespace journey::cli {

namespace fs = std::filesystem;

FileKind sniff(const fs::path& path) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) return FileKind::directory;
    if (!fs::exists(path, ec)) return FileKind::missing;
    const uintmax_t size = fs::file_size(path, ec);
    std::ifstream in(path, std::ios::binary);
    char head[64] = {};
    in.read(head, sizeof head);
    const size_t n = size_t(in.gcount());
    if (n >= 4 && std::memcmp(head, "GGUF", 4) == 0) return FileKind::gguf;
    if (n >= 9 && !ec) {
        uint64_t header = 0;
        std::memcpy(&header, head, 8);  // little-endian, as safetensors stores it
        if (head[8] == '{' && header <= size - 8) return FileKind::safetensors;
    }
    for (size_t i = 0; i < n; ++i) {
        if (head[i] == ' ' || head[i] == '\n' || head[i] == '\r' || head[i] == '\t') continue;
        if (head[i] == '{' || head[i] == '[') return FileKind::json;
        break;
    }
    return FileKind::other;
}

const char* describe(FileKind k) {
    switch (k) {
        case FileKind::missing: return "no such file or directory";
        case FileKind::directory: return "a directory";
        case FileKind::gguf: return "a GGUF model file";
        case FileKind::safetensors: return "a safetensors weights file";
        case FileKind::json: return "a JSON file";
        case FileKind::other: return "a file of unknown kind";
    }
    return "?";
}

}  // namespace journey::cli
