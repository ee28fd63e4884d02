#include "provenance_json.h"

#include <cerrno>
#include <chrono>
#include <fstream>
#include <ctime>

#include "common.h"
#include "journey/errors.h"
#include "journey/formats/tensor.h"
#include "journey/model/arch.h"
#include "journey/trace/provenance.h"

namespace journey::cli {

nlohmann::json provenance_json(const Model& m) {
    const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm utc{};
    gmtime_r(&now, &utc);
    char date[32];
    std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &utc);
    return {{"journey", version_text()},
            {"model", m.source().string()},
            {"files", model_files_json(m.source())},
            {"architecture", std::string(arch_name(m.config().arch))},
            {"dtype", std::string(dtype_name(m.weight_dtype()))},
            {"command", command_line()},
            {"date", date}};
}

void write_html_page(const std::string& path, const std::string& page) {
    std::ofstream f(path, std::ios::binary);
    if (!f) throw InputError("--html " + path + ": cannot write: " + why(errno));
    if (!(f << page) || !f.flush()) throw InputError("--html " + path + ": cannot write: " + why(errno));
}

}  // namespace journey::cli
