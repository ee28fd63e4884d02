#include "journey/convert/model_writer.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <thread>
#include <stdexcept>

#include "journey/errors.h"
#include "journey/kernels/blocks/quantize.h"
#include "journey/model/model.h"

namespace journey {

void write_model(GgufWriter& w, const std::vector<OutTensor>& tensors, const std::filesystem::path& out,
                 const WriteProgress& progress) {
    size_t total = 0;
    for (const OutTensor& t : tensors) {
        w.add_tensor(t.name, t.type, t.shape);
        total += 1;
    }
    std::vector<float> row;
    w.write(
        out,
        [&](size_t i, std::byte* dst, size_t nbytes) {
            const OutTensor& t = tensors[i];
            if (t.raw) {
                std::memcpy(dst, t.raw, nbytes);
                return;
            }
            const int64_t cols = t.shape.back();
            int64_t rows = 1;
            for (size_t d = 0; d + 1 < t.shape.size(); ++d) rows *= t.shape[d];
            const size_t row_bytes = dtype_bytes(t.type, uint64_t(cols));
            if (row_bytes * size_t(rows) != nbytes) throw std::logic_error("write_model: row size mismatch");
            const int64_t n_mat = int64_t(t.imatrix.size()) / cols;
            auto encode = [&](int64_t r0, int64_t r1, std::vector<float>& buf) {
                buf.resize(size_t(cols));
                for (int64_t r = r0; r < r1; ++r) {
                    t.row(r, buf.data());
                    const float* w = n_mat > 0 ? t.imatrix.data() + (r / (rows / n_mat)) * cols : nullptr;
                    quantize_row(t.type, buf.data(), dst + size_t(r) * row_bytes, cols, w);
                }
            };
            const int64_t n_threads = t.rows_in_parallel ? std::min<int64_t>(rows / 16, std::max(1u, std::thread::hardware_concurrency())) : 1;
            if (n_threads <= 1) return encode(0, rows, row);
            std::vector<std::thread> workers;
            std::vector<std::exception_ptr> errors(static_cast<size_t>(n_threads));
            for (int64_t k = 0; k < n_threads; ++k)
                workers.emplace_back([&, k] {
                    try {
                        std::vector<float> buf;
                        encode(rows * k / n_threads, rows * (k + 1) / n_threads, buf);
                    } catch (...) {
                        errors[size_t(k)] = std::current_exception();
                    }
                });
            for (std::thread& w : workers) w.join();
            for (const std::exception_ptr& e : errors)
                if (e) std::rethrow_exception(e);
        },
        [&](size_t i) {
            if (progress) progress(i + 1, total);
        },
        [&](const std::filesystem::path& tmp) {
            try {
                Model::load(tmp, {.mmap = true});
            } catch (const Error& e) {
                // The loader names the temporary file: say the output's name instead.
                std::string why = e.what();
                for (size_t at = why.find(tmp.string()); at != std::string::npos; at = why.find(tmp.string()))
                    why.replace(at, tmp.string().size(), out.string());
                throw ModelError("refusing to write " + out.string() + ", a file journey could not load: " + why);
            }
        });
}

}  // namespace journey
