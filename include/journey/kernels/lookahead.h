// One token's products come in the same order every token, so the pool's workers can warm the
// next product while they wait: a worker that has finished its rows asks, into L2, for the lines
// it will read first in the product that followed this one last time
// (ThreadPool::warm_when_done). The waiting time (the others' last rows, the work between
// products on the caller's thread) then moves weights from memory instead of idling.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>

#include "journey/kernels/matrix.h"

namespace journey {

// Records that W's one-token product comes now, after the previous one, and returns the matrix
// whose product followed W's last time (nullptr if none is known). Caller's thread only.
const Matrix* note_product(const Matrix& W);

// The rows a thread takes first in a one-token product (the split lives here so that the
// products and the warming agree): a float Linear product's threads take fixed ranges aligned
// to 16 rows (whole cache lines of y); a quantized one's take chunks of a quarter of a share,
// thread i chunk i first, then the rest as they come.
std::pair<int64_t, int64_t> linear_part(int64_t n, int i, int parts);
int64_t quant_chunk(int64_t n_out, int threads);

// Thread i of n, in a worker, when it is done with its part of the current product: warm the
// first rows it will take in `next`'s product (up to the bytes of warm_bytes()).
void warm_next(const Matrix* next, int i, int n);

}  // namespace journey
