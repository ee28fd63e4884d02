// The one place that decides which model runs when the user does not say.
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "journey/model/model.h"

namespace journey {
namespace fs = std::filesystem;

fs::path default_model_path() {
    if (const char* env = std::getenv("JOURNEY_MODEL"); env && *env) return env;
    // An installed binary (<prefix>/bin/journey) uses the model installed beside it
    // (<prefix>/share/journey/models/default) before any source tree compiled in.
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) {
        const fs::path installed = exe.parent_path().parent_path() / JOURNEY_INSTALL_DATADIR / "models" / "default";
        if (fs::exists(installed, ec)) return installed;
    }
    const fs::path in_source = fs::path(JOURNEY_SOURCE_DIR) / "models" / "default";
    if (fs::exists(in_source, ec)) return in_source;
    return {};
}

}  // namespace journey
