// The i-quant encoders: ggml's grid searches (ggml-quants.c quantize_row_iq*_impl) operation by
// operation, in float, in the same order, for the same bytes. The searches need, per grid, a map
// from every point of the small cube of quants to its grid index or to the list of its nearest
// grid points: built here once from the grid itself (as ggml's iq*_init_impl builds it).
// Compiled with -ffp-contract=off, as quantize.cpp (CMakeLists.txt).
#include "quantize_iq.h"

#include <algorithm>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "iq_grids.h"
#include "journey/kernels/blocks/layout.h"
#include "journey/kernels/half.h"

namespace journey {
namespace {

constexpr int QK_K = 256;

// Σ w·x·q and Σ w·q² over n quants q = 2L + 1 (ggml's sumqx and sumq2, in its order).
void fit_odd(int n, const float* weight, const float* xval, const int8_t* L, float& sumqx, float& sumq2) {
    sumqx = 0, sumq2 = 0;
    for (int i = 0; i < n; ++i) {
        const float w = weight[i];
        const float q = 2 * L[i] + 1;
        sumqx += w * xval[i] * q;
        sumq2 += w * q * q;
    }
}

// A grid of D-dimensional points (coordinates 0..7 per dimension as 2l+1, or the IQ2 values),
// the map of the cube's points to their index (>= 0) or to -(offset + 1) of their neighbour list
// in `neighbours` ([count, index...]: the grid points at the nwant smallest distances).
struct GridSearch {
    std::vector<int8_t> grid;  // [n][dim] the grid's coordinates as the search compares them
    int dim = 0;
    std::vector<int> map;
    std::vector<uint16_t> neighbours;
};

// ggml's iq3xs_init_impl: dimension 4, coordinates 2l+1 (l in 0..7), map index l0 | l1<<3 | ...
// ggml's iq2xs_init_impl / iq3xs_init_impl: the grid's points as 2l+1 per coordinate (l in
// 0..2^bits-1), the map indexed by l0 | l1 << bits | ..., and for every other index of the map its
// neighbours: the grid points at the nwant smallest squared distances, by distance then index.
GridSearch make_search(std::vector<int8_t> coords, int dim, int bits, int kmap_size, int nwant) {
    GridSearch s;
    s.dim = dim;
    s.grid = std::move(coords);
    const int n = int(s.grid.size()) / dim;
    s.map.assign(size_t(kmap_size), -1);
    for (int k = 0; k < n; ++k) {
        int index = 0;
        for (int i = 0; i < dim; ++i) index |= ((s.grid[size_t(k * dim + i)] - 1) / 2) << (bits * i);
        s.map[size_t(index)] = k;
    }
    std::vector<int> d2s(static_cast<size_t>(n));
    std::vector<std::pair<int, int>> near;
    const int mask = (1 << bits) - 1;
    // the grid coordinate-major, so that one point's distances to all of it vectorize
    std::vector<int> cols(size_t(dim) * size_t(n));
    for (int j = 0; j < n; ++j)
        for (int k = 0; k < dim; ++k) cols[size_t(k) * size_t(n) + size_t(j)] = s.grid[size_t(j * dim + k)];
    for (int i = 0; i < kmap_size; ++i) {
        if (s.map[size_t(i)] >= 0) continue;
        std::fill(d2s.begin(), d2s.end(), 0);
        for (int k = 0; k < dim; ++k) {
            const int p = 2 * ((i >> (bits * k)) & mask) + 1;
            const int* c = cols.data() + size_t(k) * size_t(n);
            int* d = d2s.data();
            for (int j = 0; j < n; ++j) d[j] += (c[j] - p) * (c[j] - p);
        }
        // the nwant smallest distinct distances; every point at one of them, by (distance, index)
        int lows[4] = {INT32_MAX, INT32_MAX, INT32_MAX, INT32_MAX};
        for (int d2 : d2s) {
            if (d2 > lows[nwant - 1]) continue;
            for (int w = 0; w < nwant; ++w) {
                if (d2 == lows[w]) break;
                if (d2 < lows[w]) {
                    for (int v = nwant - 1; v > w; --v) lows[v] = lows[v - 1];
                    lows[w] = d2;
                    break;
                }
            }
        }
        int limit = lows[0];
        for (int w = 0; w < nwant; ++w)
            if (lows[w] != INT32_MAX) limit = lows[w];
        near.clear();
        for (int j = 0; j < n; ++j)
            if (d2s[size_t(j)] <= limit) near.emplace_back(d2s[size_t(j)], j);
        std::sort(near.begin(), near.end());
        const size_t start = s.neighbours.size();
        s.map[size_t(i)] = -int(start + 1);
        s.neighbours.push_back(uint16_t(near.size()));
        for (const auto& pr : near) s.neighbours.push_back(uint16_t(pr.second));
    }
    return s;
}

// The dequantization grids hold 2l+1 (IQ3_S) or 4, 12, ..., 52, 62 (IQ3_XXS: l = v / 8).
GridSearch make_iq3_search(const uint32_t* dequant_grid, int grid_size) {
    std::vector<int8_t> coords(size_t(grid_size) * 4);
    for (int k = 0; k < grid_size; ++k)
        for (int i = 0; i < 4; ++i) {
            const int v = grid_byte(dequant_grid[k], i);
            coords[size_t(k) * 4 + size_t(i)] = int8_t(grid_size == 256 ? 2 * (v / 8) + 1 : v);
        }
    return make_search(std::move(coords), 4, 3, 4096, grid_size == 256 ? 2 : 3);
}

// IQ2 grids hold 8, 25, 43 (l = v / 17); IQ1's -1, 0, 1 (l = v + 1).
GridSearch make_iq2_search(const uint64_t* dequant_grid, int grid_size, bool iq1, int nwant) {
    std::vector<int8_t> coords(size_t(grid_size) * 8);
    for (int k = 0; k < grid_size; ++k)
        for (int i = 0; i < 8; ++i) {
            const int v = iq1 ? int(int8_t(grid_byte(dequant_grid[k], i))) + 1 : grid_byte(dequant_grid[k], i) / 17;
            coords[size_t(k) * 8 + size_t(i)] = int8_t(2 * v + 1);
        }
    return make_search(std::move(coords), 8, 2, 43692, nwant);
}

const GridSearch& iq3_search(int grid_size) {
    static std::once_flag once256, once512;
    static GridSearch s256, s512;
    if (grid_size == 256) {
        std::call_once(once256, [] { s256 = make_iq3_search(kIq3xxsGrid, 256); });
        return s256;
    }
    std::call_once(once512, [] { s512 = make_iq3_search(kIq3sGrid, 512); });
    return s512;
}

// ggml's iq3_find_best_neighbour / iq2_find_best_neighbour: the neighbour of least weighted
// distance to scale * point.
template <int Dim>
int best_neighbour(const GridSearch& s, const uint16_t* nb, const float* xval, const float* weight, float scale, int8_t* L) {
    const int n = nb[0];
    float best_d2 = FLT_MAX;
    int grid_index = -1;
    const int8_t* grid = s.grid.data();
    for (int j = 1; j <= n; ++j) {
        const int8_t* pg = grid + size_t(nb[j]) * Dim;
        float d2 = 0;
        for (int i = 0; i < Dim; ++i) {
            const float q = pg[i];
            const float diff = scale * q - xval[i];
            d2 += weight[i] * diff * diff;
        }
        if (d2 < best_d2) {
            best_d2 = d2;
            grid_index = nb[j];
        }
    }
    if (grid_index < 0) throw std::logic_error("iq: no neighbour");
    const int8_t* pg = grid + size_t(grid_index) * Dim;
    for (int i = 0; i < Dim; ++i) L[i] = int8_t((pg[i] - 1) / 2);
    return grid_index;
}

int iq3_best_neighbour(const GridSearch& s, const uint16_t* nb, const float* xval, const float* weight, float scale, int8_t* L) {
    return s.dim == 4 ? best_neighbour<4>(s, nb, xval, weight, scale, L) : best_neighbour<8>(s, nb, xval, weight, scale, L);
}

const uint16_t* neighbours_of(const GridSearch& s, int u) { return s.neighbours.data() + (-s.map[size_t(u)] - 1); }

// One group of block_size values (32): the search over 2*15+1 (xxs) or 2*9+1 (s) scales for the
// grid points of its 4-vectors (ggml's loop body shared by iq3_xxs and iq3_s). Returns the scale;
// L receives the quants. is_xxs selects the xxs variant's details.
float iq3_group(const GridSearch& s, const float* xval, const float* weight, const float* waux, int8_t* L, float max,
                int n_is, bool on_grid_init, bool skip_on_grid) {
    constexpr int kMaxQ = 8, bs4 = 8;
    int8_t Laux[32];
    bool is_on_grid[bs4], is_on_grid_aux[bs4];
    float best = 0;
    float scale = max / (2 * kMaxQ - 1);
    for (bool& b : is_on_grid) b = on_grid_init;
    for (int is = -n_is; is <= n_is; ++is) {
        const float id = (2 * kMaxQ - 1 + is * 0.2f) / max;
        const float this_scale = 1 / id;
        for (int k = 0; k < bs4; ++k) {
            for (int i = 0; i < 4; ++i) {
                const int l = nearest_int(0.5f * (id * xval[4 * k + i] - 1));
                Laux[4 * k + i] = int8_t(std::max(0, std::min(kMaxQ - 1, l)));
            }
            int u = 0;
            for (int i = 0; i < 4; ++i) u |= Laux[4 * k + i] << (3 * i);
            is_on_grid_aux[k] = true;
            if (s.map[size_t(u)] < 0) {
                is_on_grid_aux[k] = false;
                iq3_best_neighbour(s, neighbours_of(s, u), xval + 4 * k, waux + 4 * k, this_scale, Laux + 4 * k);
            }
        }
        float sumqx, sumq2;
        fit_odd(32, weight, xval, Laux, sumqx, sumq2);
        if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
            scale = sumqx / sumq2;
            best = scale * sumqx;
            std::memcpy(L, Laux, 32);
            std::memcpy(is_on_grid, is_on_grid_aux, sizeof is_on_grid);
        }
    }
    int n_not_ongrid = 0;
    for (bool b : is_on_grid) n_not_ongrid += !b;
    if (n_not_ongrid > 0 && scale > 0) {
        const float id = 1 / scale;
        for (int k = 0; k < bs4; ++k) {
            if (skip_on_grid && is_on_grid[k]) continue;
            int u = 0;
            for (int i = 0; i < 4; ++i) {
                int l = nearest_int(0.5f * (id * xval[4 * k + i] - 1));
                l = std::max(0, std::min(kMaxQ - 1, l));
                u |= l << (3 * i);
            }
            int grid_index = s.map[size_t(u)];
            if (grid_index < 0) grid_index = iq3_best_neighbour(s, neighbours_of(s, u), xval + 4 * k, waux + 4 * k, scale, L + 4 * k);
            const int8_t* pg = &s.grid[size_t(grid_index) * 4];
            for (int i = 0; i < 4; ++i) L[4 * k + i] = int8_t((pg[i] - 1) / 2);
        }
        float sumqx, sumq2;
        fit_odd(32, weight, xval, L, sumqx, sumq2);
        if (sumq2 > 0) scale = sumqx / sumq2;
    }
    return scale;
}

int iq3_index(const GridSearch& s, const int8_t* L) {
    int u = 0;
    for (int i = 0; i < 4; ++i) u |= L[i] << (3 * i);
    const int g = s.map[size_t(u)];
    if (g < 0) throw std::logic_error("iq3: a point off the grid");
    return g;
}

const GridSearch& iq2_search(int which) {  // 0: IQ2_XXS, 1: IQ2_XS, 2: IQ2_S, 3: IQ1_S / IQ1_M
    static std::once_flag once[4];
    static GridSearch s[4];
    std::call_once(once[which], [which] {
        s[which] = which == 0 ? make_iq2_search(kIq2xxsGrid, 256, false, 2)
                 : which == 1 ? make_iq2_search(kIq2xsGrid, 512, false, 2)
                 : which == 2 ? make_iq2_search(kIq2sGrid, 1024, false, 1)
                              : make_iq2_search(kIq1sGrid, 2048, true, 3);
    });
    return s[which];
}

int iq2_index(const GridSearch& s, const int8_t* L) {
    int u = 0;
    for (int i = 0; i < 8; ++i) u |= L[i] << (2 * i);
    const int g = s.map[size_t(u)];
    if (g < 0) throw std::logic_error("iq2: a point off the grid");
    return g;
}

// The signs of 8 values with an even count of minus signs (the least important value flipped
// when odd, as ggml's iq2/iq3_xxs): xval receives |x| (or -|x| there), returns the 7 sign bits.
uint8_t even_signs(const float* xb, const float* weight, float* xval) {
    int nflip = 0;
    uint8_t sg = 0;
    for (int i = 0; i < 8; ++i) {
        if (xb[i] >= 0) {
            xval[i] = xb[i];
        } else {
            xval[i] = -xb[i];
            ++nflip;
            sg = uint8_t(sg | (1 << i));
        }
    }
    if (nflip % 2) {
        int imin = 0;
        float min = weight[imin] * xb[imin] * xb[imin];
        for (int i = 1; i < 8; ++i) {
            const float ax = weight[i] * xb[i] * xb[i];
            if (ax < min) {
                min = ax;
                imin = i;
            }
        }
        xval[imin] = -xval[imin];
        sg = uint8_t(sg ^ (1 << imin));
    }
    return sg & 127;
}

// ggml's iq1_find_best_neighbour2: the neighbour (xg[l] per coordinate) of least weighted distance.
int iq1_best_neighbour2(const GridSearch& s, const uint16_t* nb, const float* xval, const float* weight, float scale,
                        const float* xg, int8_t* L) {
    const int n = nb[0];
    float best_score = FLT_MAX;
    int grid_index = -1;
    for (int j = 1; j <= n; ++j) {
        const int8_t* pg = &s.grid[size_t(nb[j]) * 8];
        float d2 = 0;
        for (int i = 0; i < 8; ++i) {
            const float q = xg[(pg[i] - 1) / 2];
            const float w = weight[i];
            const float diff = scale * q - xval[i];
            d2 += w * diff * diff;
        }
        if (d2 < best_score) {
            best_score = d2;
            grid_index = nb[j];
        }
    }
    if (grid_index < 0) throw std::logic_error("iq1: no grid point");  // (finite weights: a neighbour always wins)
    const int8_t* pg = &s.grid[size_t(grid_index) * 8];
    for (int i = 0; i < 8; ++i) L[i] = int8_t((pg[i] - 1) / 2);
    return grid_index;
}

// The block's values in ascending order (ggml's qsort of (value, index) pairs, glibc's merge sort:
// stable).
void sort_pairs(const float* xb, int n, int* order) {
    for (int j = 0; j < n; ++j) order[j] = j;
    std::stable_sort(order, order + n, [xb](int a, int b) { return xb[a] < xb[b]; });
}

}  // namespace

// IQ1_S (50 bytes: f16 d, qs[32] grid index low bytes, qh[8] u16 (3 x 3 high bits | scale << 12
// | shift sign << 15)).
void quantize_iq1_s(const float* x, unsigned char* out, int64_t nb, const float* quant_weights) {
    const GridSearch& s = iq2_search(3);
    constexpr int block_size = 32;
    constexpr float delta = 0.125f;
    const float x_p[3] = {-1 + delta, delta, 1 + delta};
    const float x_m[3] = {-1 - delta, -delta, 1 - delta};
    float scales[QK_K / block_size], weight[block_size], sumx[block_size + 1], sumw[block_size + 1];
    int8_t L[block_size], shifts[QK_K / block_size];
    int idx[block_size];
    uint16_t index[block_size / 8];
    for (int64_t ibl = 0; ibl < nb; ++ibl, out += 50) {
        std::memset(out, 0, 50);
        uint8_t* qs = out + 2;
        uint16_t qh[QK_K / 32] = {};
        float max_scale = 0;
        const float* xbl = x + QK_K * ibl;
        float sumx2 = 0;
        for (int i = 0; i < QK_K; ++i) sumx2 += xbl[i] * xbl[i];
        const float sigma2 = 2 * sumx2 / QK_K;
        for (int ib = 0; ib < QK_K / block_size; ++ib) {
            const float* xb = xbl + block_size * ib;
            const float* qw = quant_weights + QK_K * ibl + block_size * ib;
            for (int i = 0; i < block_size; ++i) weight[i] = qw[i] * std::sqrt(sigma2 + xb[i] * xb[i]);
            float max = std::fabs(xb[0]);
            for (int i = 1; i < block_size; ++i) max = std::max(max, std::fabs(xb[i]));
            if (max < 1e-12f) {
                scales[ib] = 0;
                shifts[ib] = 1;
                std::memset(L, 1, block_size);
                continue;
            }
            sort_pairs(xb, block_size, idx);
            sumx[0] = sumw[0] = 0;
            for (int j = 0; j < block_size; ++j) {
                const int i = idx[j];
                sumx[j + 1] = sumx[j] + weight[i] * xb[i];
                sumw[j + 1] = sumw[j] + weight[i];
            }
            float best_score = -FLT_MAX, scale = max;
            int besti1 = -1, besti2 = -1, best_shift = 0;
            for (int i1 = 0; i1 <= block_size; ++i1) {
                for (int i2 = i1; i2 <= block_size; ++i2) {
                    float sumqx = (sumx[i1] - sumx[0]) * x_p[0] + (sumx[i2] - sumx[i1]) * x_p[1] + (sumx[block_size] - sumx[i2]) * x_p[2];
                    float sumq2 = (sumw[i1] - sumw[0]) * x_p[0] * x_p[0] + (sumw[i2] - sumw[i1]) * x_p[1] * x_p[1] +
                                  (sumw[block_size] - sumw[i2]) * x_p[2] * x_p[2];
                    if (sumq2 > 0 && sumqx * sumqx > best_score * sumq2) {
                        scale = sumqx / sumq2;
                        best_score = scale * sumqx;
                        besti1 = i1;
                        besti2 = i2;
                        best_shift = 1;
                    }
                    sumqx = (sumx[i1] - sumx[0]) * x_m[0] + (sumx[i2] - sumx[i1]) * x_m[1] + (sumx[block_size] - sumx[i2]) * x_m[2];
                    sumq2 = (sumw[i1] - sumw[0]) * x_m[0] * x_m[0] + (sumw[i2] - sumw[i1]) * x_m[1] * x_m[1] +
                            (sumw[block_size] - sumw[i2]) * x_m[2] * x_m[2];
                    if (sumq2 > 0 && sumqx * sumqx > best_score * sumq2) {
                        scale = sumqx / sumq2;
                        best_score = scale * sumqx;
                        besti1 = i1;
                        besti2 = i2;
                        best_shift = -1;
                    }
                }
            }
            if (besti1 < 0 || besti2 < 0 || best_shift == 0) {
                scales[ib] = 0;
                shifts[ib] = 1;
                std::memset(L, 1, block_size);
                continue;
            }
            for (int j = 0; j < besti1; ++j) L[idx[j]] = 0;
            for (int j = besti1; j < besti2; ++j) L[idx[j]] = 1;
            for (int j = besti2; j < block_size; ++j) L[idx[j]] = 2;
            if (scale < 0) {
                for (int j = 0; j < block_size; ++j) L[j] = int8_t(2 - L[j]);
                scale = -scale;
                best_shift = -best_shift;
            }
            bool all_on_grid = true;
            const float* xx = best_shift == 1 ? x_p : x_m;
            for (int k = 0; k < block_size / 8; ++k) {
                int u = 0;
                for (int j = 0; j < 8; ++j) u |= L[8 * k + j] << (2 * j);
                int grid_index = s.map[size_t(u)];
                if (grid_index < 0) {
                    all_on_grid = false;
                    grid_index = iq1_best_neighbour2(s, neighbours_of(s, u), xb + 8 * k, weight + 8 * k, scale, xx, L + 8 * k);
                }
                index[k] = uint16_t(grid_index);
            }
            if (!all_on_grid) {
                float sumqx = 0, sumq2 = 0;
                for (int k = 0; k < block_size / 8; ++k) {
                    const int8_t* pg = &s.grid[size_t(index[k]) * 8];
                    for (int j = 0; j < 8; ++j) {
                        const float w = weight[8 * k + j];
                        const float q = xx[(pg[j] - 1) / 2];
                        sumqx += w * q * xb[8 * k + j];
                        sumq2 += w * q * q;
                    }
                }
                if (sumqx > 0 && sumq2 > 0) scale = sumqx / sumq2;
            }
            uint16_t h = 0;
            for (int k = 0; k < block_size / 8; ++k) {
                qs[(block_size / 8) * ib + k] = uint8_t(index[k] & 255);
                h = uint16_t(h | ((index[k] >> 8) << (3 * k)));
            }
            qh[ib] = h;
            scales[ib] = scale;
            shifts[ib] = int8_t(best_shift);
            max_scale = std::max(max_scale, scale);
        }
        if (max_scale) {
            const float d = max_scale / 15;
            put_f16(out, d * 1.125f);
            const float id = 1 / d;
            for (int ib = 0; ib < QK_K / block_size; ++ib) {
                int l = nearest_int(0.5f * (id * scales[ib] - 1));
                l = std::max(0, std::min(7, l));
                if (shifts[ib] == -1) l |= 8;
                qh[ib] = uint16_t(qh[ib] | (l << 12));
            }
        }
        std::memcpy(out + 34, qh, sizeof qh);
    }
}

// IQ1_M (56 bytes: qs[32] grid index low bytes, qh[16] (3 high bits + shift bit per 8), scales[8]:
// 3-bit scales with the f16 super-scale spread over their top nibbles).
void quantize_iq1_m(const float* x, unsigned char* out, int64_t nb, const float* quant_weights) {
    const GridSearch& s = iq2_search(3);
    constexpr int block_size = 16;
    constexpr float delta = 0.125f;
    const float x_p[3] = {-1 + delta, delta, 1 + delta};
    const float x_m[3] = {-1 - delta, -delta, 1 - delta};
    const uint8_t masks[4] = {0x00, 0x80, 0x08, 0x88};
    float scales[QK_K / block_size], weight[block_size], sumqx[4], sumq2[4];
    int8_t L[block_size], shifts[QK_K / block_size];
    int idx[block_size];
    uint16_t index[block_size / 8];
    const float* xx;
    for (int64_t ibl = 0; ibl < nb; ++ibl, out += 56) {
        std::memset(out, 0, 56);
        uint8_t* qs = out;
        uint8_t* qh = out + 32;
        uint16_t sc[4] = {};
        float max_scale = 0;
        const float* xbl = x + QK_K * ibl;
        float sumx2 = 0;
        for (int i = 0; i < QK_K; ++i) sumx2 += xbl[i] * xbl[i];
        const float sigma2 = 2 * sumx2 / QK_K;
        for (int ib = 0; ib < QK_K / block_size; ++ib) {
            const float* xb = xbl + block_size * ib;
            if (quant_weights) {
                const float* qw = quant_weights + QK_K * ibl + block_size * ib;
                for (int i = 0; i < block_size; ++i) weight[i] = qw[i] * std::sqrt(sigma2 + xb[i] * xb[i]);
            } else {
                for (int i = 0; i < block_size; ++i) weight[i] = xb[i] * xb[i];
            }
            float max = std::fabs(xb[0]);
            for (int i = 1; i < block_size; ++i) max = std::max(max, std::fabs(xb[i]));
            if (max < 1e-7f) {
                scales[ib] = 0;
                shifts[ib] = 0;
                std::memset(L, 1, block_size);
                continue;
            }
            sort_pairs(xb, block_size, idx);
            float best_score = -FLT_MAX, scale = max;
            int besti1 = -1, besti2 = -1, best_k = -1;
            {
                float px[2][block_size + 1], pw[2][block_size + 1];
                px[0][0] = px[1][0] = 0;
                pw[0][0] = pw[1][0] = 0;
                for (int j = 0; j < block_size; ++j) {
                    const int i = idx[j];
                    const int h = i < block_size / 2 ? 0 : 1;
                    px[h][j + 1] = px[h][j] + weight[i] * xb[i];
                    px[1 - h][j + 1] = px[1 - h][j];
                    pw[h][j + 1] = pw[h][j] + weight[i];
                    pw[1 - h][j + 1] = pw[1 - h][j];
                }
                const float txs[2] = {px[0][block_size], px[1][block_size]};
                const float tws[2] = {pw[0][block_size], pw[1][block_size]};
                const float p2 = x_p[2], m2 = x_m[2];
                const float cp1 = x_p[0] * x_p[0] - x_p[1] * x_p[1];
                const float cp2 = x_p[1] * x_p[1] - x_p[2] * x_p[2];
                const float cm1 = x_m[0] * x_m[0] - x_m[1] * x_m[1];
                const float cm2 = x_m[1] * x_m[1] - x_m[2] * x_m[2];
                for (int i1 = 0; i1 <= block_size; ++i1) {
                    for (int i2 = i1; i2 <= block_size; ++i2) {
                        float qx_p[2], qx_m[2], q2_p[2], q2_m[2];
                        for (int h = 0; h < 2; ++h) {
                            const float sx = px[h][i1] + px[h][i2];
                            qx_p[h] = txs[h] * p2 - sx;
                            qx_m[h] = txs[h] * m2 - sx;
                            q2_p[h] = tws[h] * p2 * p2 + pw[h][i1] * cp1 + pw[h][i2] * cp2;
                            q2_m[h] = tws[h] * m2 * m2 + pw[h][i1] * cm1 + pw[h][i2] * cm2;
                        }
                        sumqx[0] = qx_p[0] + qx_p[1];
                        sumqx[1] = qx_p[0] + qx_m[1];
                        sumqx[2] = qx_m[0] + qx_p[1];
                        sumqx[3] = qx_m[0] + qx_m[1];
                        sumq2[0] = q2_p[0] + q2_p[1];
                        sumq2[1] = q2_p[0] + q2_m[1];
                        sumq2[2] = q2_m[0] + q2_p[1];
                        sumq2[3] = q2_m[0] + q2_m[1];
                        for (int k = 0; k < 4; ++k) {
                            if (sumq2[k] > 0 && sumqx[k] * sumqx[k] > best_score * sumq2[k]) {
                                scale = sumqx[k] / sumq2[k];
                                best_score = scale * sumqx[k];
                                besti1 = i1;
                                besti2 = i2;
                                best_k = k;
                            }
                        }
                    }
                }
            }
            if (besti1 < 0 || besti2 < 0 || best_k < 0) {
                scales[ib] = 0;
                shifts[ib] = 0;
                std::memset(L, 1, block_size);
                continue;
            }
            for (int j = 0; j < besti1; ++j) L[idx[j]] = 0;
            for (int j = besti1; j < besti2; ++j) L[idx[j]] = 1;
            for (int j = besti2; j < block_size; ++j) L[idx[j]] = 2;
            if (scale < 0) {
                for (int j = 0; j < block_size; ++j) L[j] = int8_t(2 - L[j]);
                scale = -scale;
                best_k = 3 - best_k;
            }
            bool all_on_grid = true;
            for (int k = 0; k < block_size / 8; ++k) {
                xx = k == 0 ? (best_k < 2 ? x_p : x_m) : (best_k % 2 == 0 ? x_p : x_m);
                int u = 0;
                for (int j = 0; j < 8; ++j) u |= L[8 * k + j] << (2 * j);
                int grid_index = s.map[size_t(u)];
                if (grid_index < 0) {
                    all_on_grid = false;
                    grid_index = iq1_best_neighbour2(s, neighbours_of(s, u), xb + 8 * k, weight + 8 * k, scale, xx, L + 8 * k);
                }
                index[k] = uint16_t(grid_index);
            }
            if (!all_on_grid) {
                float sumqx_f = 0, sumq2_f = 0;
                for (int k = 0; k < block_size / 8; ++k) {
                    xx = k == 0 ? (best_k < 2 ? x_p : x_m) : (best_k % 2 == 0 ? x_p : x_m);
                    const int8_t* pg = &s.grid[size_t(index[k]) * 8];
                    for (int j = 0; j < 8; ++j) {
                        const float w = weight[8 * k + j];
                        const float q = xx[(pg[j] - 1) / 2];
                        sumqx_f += w * q * xb[8 * k + j];
                        sumq2_f += w * q * q;
                    }
                }
                if (sumqx_f > 0 && sumq2_f > 0) scale = sumqx_f / sumq2_f;
            }
            qs[2 * ib + 0] = uint8_t(index[0] & 255);
            qs[2 * ib + 1] = uint8_t(index[1] & 255);
            qh[ib] = uint8_t((index[0] >> 8) | ((index[1] >> 8) << 4));
            scales[ib] = scale;
            shifts[ib] = int8_t(best_k);
            max_scale = std::max(max_scale, scale);
        }
        if (!max_scale) continue;
        float d = max_scale / 15;
        const float id = 1 / d;
        float sumqx_f = 0, sumq2_f = 0;
        for (int ib = 0; ib < QK_K / block_size; ++ib) {
            int l = nearest_int(0.5f * (id * scales[ib + 0] - 1));
            l = std::max(0, std::min(7, l));
            sc[ib / 4] = uint16_t(sc[ib / 4] | (l << (3 * (ib % 4))));
            qh[ib] = uint8_t(qh[ib] | masks[shifts[ib]]);
            const float* xb = xbl + block_size * ib;
            if (quant_weights) {
                const float* qw = quant_weights + QK_K * ibl + block_size * ib;
                for (int i = 0; i < block_size; ++i) weight[i] = qw[i] * std::sqrt(sigma2 + xb[i] * xb[i]);
            } else {
                for (int i = 0; i < block_size; ++i) weight[i] = xb[i] * xb[i];
            }
            for (int k = 0; k < block_size / 8; ++k) {
                xx = k == 0 ? (shifts[ib] < 2 ? x_p : x_m) : (shifts[ib] % 2 == 0 ? x_p : x_m);
                const int g = qs[2 * ib + k] + ((qh[ib] << (8 - 4 * k)) & 0x700);
                const int8_t* pg = &s.grid[size_t(g) * 8];
                for (int j = 0; j < 8; ++j) {
                    const float w = weight[8 * k + j];
                    const float q = xx[(pg[j] - 1) / 2] * (2 * l + 1);
                    sumqx_f += w * q * xb[8 * k + j];
                    sumq2_f += w * q * q;
                }
            }
        }
        if (sumq2_f > 0) d = sumqx_f / sumq2_f;
        const uint16_t u16 = fp32_to_fp16(d * 1.1125f);
        sc[0] = uint16_t(sc[0] | ((u16 & 0x000f) << 12));
        sc[1] = uint16_t(sc[1] | ((u16 & 0x00f0) << 8));
        sc[2] = uint16_t(sc[2] | ((u16 & 0x0f00) << 4));
        sc[3] = uint16_t(sc[3] | ((u16 & 0xf000) << 0));
        std::memcpy(out + 48, sc, 8);
    }
}

// IQ2_XXS (66 bytes: f16 d, 8 x (u32 four grid indices, u32 4 x 7 sign bits | scale << 28)).
void quantize_iq2_xxs(const float* x, unsigned char* out, int64_t nb, const float* quant_weights) {
    const GridSearch& s = iq2_search(0);
    constexpr int kMaxQ = 3;
    float scales[QK_K / 32], weight[32], xval[32], waux[32];
    int8_t L[32], Laux[32];
    uint8_t block_signs[4];
    uint32_t q2[2 * (QK_K / 32)];
    for (int64_t ibl = 0; ibl < nb; ++ibl, out += 66) {
        put_f16(out, 0.f);
        std::memset(q2, 0, sizeof q2);
        float max_scale = 0;
        const float* xbl = x + QK_K * ibl;
        float sumx2 = 0;
        for (int i = 0; i < QK_K; ++i) sumx2 += xbl[i] * xbl[i];
        const float sigma2 = sumx2 / QK_K;
        for (int ib = 0; ib < QK_K / 32; ++ib) {
            const float* xb = xbl + 32 * ib;
            const float* qw = quant_weights + QK_K * ibl + 32 * ib;
            for (int i = 0; i < 32; ++i) weight[i] = qw[i] * std::sqrt(sigma2 + xb[i] * xb[i]);
            for (int i = 0; i < 32; ++i) waux[i] = std::sqrt(weight[i]);
            for (int k = 0; k < 4; ++k) block_signs[k] = even_signs(xb + 8 * k, weight + 8 * k, xval + 8 * k);
            float max = xval[0];
            for (int i = 1; i < 32; ++i) max = std::max(max, xval[i]);
            if (max < 1e-15f) {
                scales[ib] = 0;
                std::memset(L, 0, 32);
                continue;
            }
            float scale = qp_quants(32, kMaxQ + 1, xval, reinterpret_cast<uint8_t*>(L), weight);
            const float eff_max = scale * kMaxQ;
            if (eff_max <= 0) {
                scales[ib] = 0;
                std::memset(L, 0, 32);
                continue;
            }
            float best = 0;
            for (int is = -6; is <= 6; ++is) {
                const float id = (2 * kMaxQ - 1 + is * 0.1f) / eff_max;
                const float this_scale = 1 / id;
                for (int k = 0; k < 4; ++k) {
                    for (int i = 0; i < 8; ++i) {
                        const int l = nearest_int(0.5f * (id * xval[8 * k + i] - 1));
                        Laux[8 * k + i] = int8_t(std::max(0, std::min(kMaxQ - 1, l)));
                    }
                    int u = 0;
                    for (int i = 0; i < 8; ++i) u |= Laux[8 * k + i] << (2 * i);
                    if (s.map[size_t(u)] < 0)
                        iq3_best_neighbour(s, neighbours_of(s, u), xval + 8 * k, waux + 8 * k, this_scale, Laux + 8 * k);
                }
                float sumqx, sumq2;
                fit_odd(32, weight, xval, Laux, sumqx, sumq2);
                if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
                    scale = sumqx / sumq2;
                    best = scale * sumqx;
                    std::memcpy(L, Laux, 32);
                }
            }
            if (scale > 0) {
                const float id = 1 / scale;
                for (int k = 0; k < 4; ++k) {
                    int u = 0;
                    for (int i = 0; i < 8; ++i) {
                        int l = nearest_int(0.5f * (id * xval[8 * k + i] - 1));
                        l = std::max(0, std::min(kMaxQ - 1, l));
                        u |= l << (2 * i);
                    }
                    int grid_index = s.map[size_t(u)];
                    if (grid_index < 0) grid_index = iq3_best_neighbour(s, neighbours_of(s, u), xval + 8 * k, waux + 8 * k, scale, L + 8 * k);
                    const int8_t* pg = &s.grid[size_t(grid_index) * 8];
                    for (int i = 0; i < 8; ++i) L[8 * k + i] = int8_t((pg[i] - 1) / 2);
                }
                float sumqx, sumq2;
                fit_odd(32, weight, xval, L, sumqx, sumq2);
                if (sumq2 > 0) scale = sumqx / sumq2;
            }
            if (scale < 0) {
                scale = -scale;
                for (uint8_t& b : block_signs) b = uint8_t(~b & 127);
            }
            for (int k = 0; k < 4; ++k) {
                const int grid_index = iq2_index(s, L + 8 * k);
                q2[2 * ib + 0] |= uint32_t(grid_index) << (8 * k);
                q2[2 * ib + 1] |= uint32_t(block_signs[k]) << (7 * k);
            }
            scales[ib] = scale;
            max_scale = std::max(max_scale, scale);
        }
        if (!max_scale) {
            std::memset(out + 2, 0, 64);
            continue;
        }
        const float d = max_scale / 31;
        put_f16(out, d);
        const float id = 1 / d;
        for (int ib = 0; ib < QK_K / 32; ++ib) {
            int l = nearest_int(0.5f * (id * scales[ib] - 1));
            l = std::max(0, std::min(15, l));
            q2[2 * ib + 1] |= uint32_t(l) << 28;
        }
        std::memcpy(out + 2, q2, 64);
    }
}

// IQ2_XS (74 bytes: f16 d, 32 x u16 (9-bit grid index | 7 sign bits << 9), scales[8] 2 x 4 bits)
// and IQ2_S (82 bytes: f16 d, qs[32] grid index low bytes, signs[32], qh[8] 2 high bits each,
// scales[8]): the same search; IQ2_S keeps all 8 signs, weighs x^2 + sigma^2/4 without an
// importance matrix and scales d by 0.9875.
template <bool S>
void quantize_iq2_xs_s(const float* x, unsigned char* out, int64_t nb, const float* quant_weights) {
    const GridSearch& s = iq2_search(S ? 2 : 1);
    constexpr size_t block = S ? 82 : 74;
    constexpr int kMaxQ = 3;
    float scales[QK_K / 16], weight[16], xval[16], waux[16];
    int8_t L[16], Laux[16];
    bool is_on_grid[2], is_on_grid_aux[2];
    uint8_t block_signs[2];
    uint16_t q2[2 * (QK_K / 16)];
    for (int64_t ibl = 0; ibl < nb; ++ibl, out += block) {
        std::memset(out, 0, block);
        std::memset(q2, 0, sizeof q2);
        uint8_t* sc = out + (S ? 74 : 66);
        float max_scale = 0;
        const float* xbl = x + QK_K * ibl;
        float sumx2 = 0;
        for (int i = 0; i < QK_K; ++i) sumx2 += xbl[i] * xbl[i];
        const float sigma2 = (S ? 2 * sumx2 : sumx2) / QK_K;
        for (int ib = 0; ib < QK_K / 16; ++ib) {
            const float* xb = xbl + 16 * ib;
            if (quant_weights) {
                const float* qw = quant_weights + QK_K * ibl + 16 * ib;
                for (int i = 0; i < 16; ++i) weight[i] = qw[i] * std::sqrt(sigma2 + xb[i] * xb[i]);
            } else {
                for (int i = 0; i < 16; ++i) weight[i] = 0.25f * sigma2 + xb[i] * xb[i];
            }
            for (int i = 0; i < 16; ++i) waux[i] = std::sqrt(weight[i]);
            for (int k = 0; k < 2; ++k) {
                if constexpr (S) {
                    uint8_t sg = 0;
                    for (int i = 0; i < 8; ++i) {
                        xval[8 * k + i] = std::fabs(xb[8 * k + i]);
                        if (!(xb[8 * k + i] >= 0)) sg = uint8_t(sg | (1 << i));
                    }
                    block_signs[k] = sg;
                } else {
                    block_signs[k] = even_signs(xb + 8 * k, weight + 8 * k, xval + 8 * k);
                }
            }
            float max = xval[0];
            for (int i = 1; i < 16; ++i) max = std::max(max, xval[i]);
            std::memset(L, 0, 16);
            if (max < (S ? 1e-8f : 1e-15f)) {
                scales[ib] = 0;
                continue;
            }
            float best = 0;
            float scale = max / (2 * kMaxQ - 1);
            is_on_grid[0] = is_on_grid[1] = true;
            for (int is = -9; is <= 9; ++is) {
                const float id = (2 * kMaxQ - 1 + is * 0.1f) / max;
                const float this_scale = 1 / id;
                for (int k = 0; k < 2; ++k) {
                    for (int i = 0; i < 8; ++i) {
                        const int l = nearest_int(0.5f * (id * xval[8 * k + i] - 1));
                        Laux[8 * k + i] = int8_t(std::max(0, std::min(kMaxQ - 1, l)));
                    }
                    int u = 0;
                    for (int i = 0; i < 8; ++i) u |= Laux[8 * k + i] << (2 * i);
                    is_on_grid_aux[k] = true;
                    if (s.map[size_t(u)] < 0) {
                        is_on_grid_aux[k] = false;
                        iq3_best_neighbour(s, neighbours_of(s, u), xval + 8 * k, waux + 8 * k, this_scale, Laux + 8 * k);
                    }
                }
                float sumqx, sumq2;
                fit_odd(16, weight, xval, Laux, sumqx, sumq2);
                if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
                    scale = sumqx / sumq2;
                    best = scale * sumqx;
                    std::memcpy(L, Laux, 16);
                    is_on_grid[0] = is_on_grid_aux[0];
                    is_on_grid[1] = is_on_grid_aux[1];
                }
            }
            const int n_not_ongrid = !is_on_grid[0] + !is_on_grid[1];
            if (n_not_ongrid > 0 && scale > 0) {
                const float id = 1 / scale;
                for (int k = 0; k < 2; ++k) {
                    if (is_on_grid[k]) continue;
                    int u = 0;
                    for (int i = 0; i < 8; ++i) {
                        int l = nearest_int(0.5f * (id * xval[8 * k + i] - 1));
                        l = std::max(0, std::min(kMaxQ - 1, l));
                        u |= l << (2 * i);
                        L[8 * k + i] = int8_t(l);
                    }
                    if (s.map[size_t(u)] < 0) iq3_best_neighbour(s, neighbours_of(s, u), xval + 8 * k, waux + 8 * k, scale, L + 8 * k);
                }
                float sumqx, sumq2;
                fit_odd(16, weight, xval, L, sumqx, sumq2);
                if (sumq2 > 0) scale = sumqx / sumq2;
            }
            if (scale < 0) {
                scale = -scale;
                for (uint8_t& b : block_signs) b = S ? uint8_t(~b) : uint8_t(~b & 127);
            }
            for (int k = 0; k < 2; ++k) {
                const int grid_index = iq2_index(s, L + 8 * k);
                if constexpr (S) {
                    const int i8 = 2 * ib + k;
                    out[2 + i8] = uint8_t(grid_index & 255);
                    out[66 + i8 / 4] = uint8_t(out[66 + i8 / 4] | ((grid_index >> 8) << (2 * (i8 % 4))));
                    out[2 + QK_K / 8 + i8] = block_signs[k];
                } else {
                    q2[2 * ib + k] = uint16_t(grid_index | (block_signs[k] << 9));
                }
            }
            scales[ib] = scale;
            max_scale = std::max(max_scale, scale);
        }
        if (!max_scale) continue;  // all zero (IQ2_XS: its qs too)
        const float d = max_scale / 31;
        put_f16(out, S ? d * 0.9875f : d);
        const float id = 1 / d;
        for (int ib = 0; ib < QK_K / 16; ++ib) {
            int l = nearest_int(0.5f * (id * scales[ib] - 1));
            l = std::max(0, std::min(15, l));
            if (ib % 2 == 0) sc[ib / 2] = uint8_t(l);
            else sc[ib / 2] = uint8_t(sc[ib / 2] | (l << 4));
        }
        if constexpr (!S) std::memcpy(out + 2, q2, 64);
    }
}

void quantize_iq2_xs(const float* x, unsigned char* out, int64_t nb, const float* qw) { quantize_iq2_xs_s<false>(x, out, nb, qw); }
void quantize_iq2_s(const float* x, unsigned char* out, int64_t nb, const float* qw) { quantize_iq2_xs_s<true>(x, out, nb, qw); }

// IQ3_XXS (98 bytes: f16 d, 64 grid indices, 8 x u32 (4 x 7 sign bits | 4-bit scale << 28)).
void quantize_iq3_xxs(const float* x, unsigned char* out, int64_t nb, const float* quant_weights) {
    const GridSearch& s = iq3_search(256);
    float scales[QK_K / 32], weight[32], xval[32], waux[32];
    int8_t L[32];
    uint8_t block_signs[4];
    uint8_t q3[3 * (QK_K / 8) + QK_K / 32];
    for (int64_t ibl = 0; ibl < nb; ++ibl, out += 98) {
        put_f16(out, 0.f);
        std::memset(q3, 0, sizeof q3);
        uint32_t scales_and_signs[8] = {};
        float max_scale = 0;
        const float* xbl = x + QK_K * ibl;
        float sumx2 = 0;
        for (int i = 0; i < QK_K; ++i) sumx2 += xbl[i] * xbl[i];
        const float sigma2 = 2 * sumx2 / QK_K;
        for (int ib = 0; ib < QK_K / 32; ++ib) {
            const float* xb = xbl + 32 * ib;
            if (quant_weights) {
                const float* qw = quant_weights + QK_K * ibl + 32 * ib;
                for (int i = 0; i < 32; ++i) weight[i] = qw[i] * std::sqrt(sigma2 + xb[i] * xb[i]);
            } else {
                for (int i = 0; i < 32; ++i) weight[i] = xb[i] * xb[i];
            }
            for (int i = 0; i < 32; ++i) waux[i] = std::sqrt(weight[i]);
            for (int k = 0; k < 4; ++k) {
                int nflip = 0;
                uint8_t sg = 0;
                for (int i = 0; i < 8; ++i) {
                    if (xb[8 * k + i] >= 0) {
                        xval[8 * k + i] = xb[8 * k + i];
                    } else {
                        xval[8 * k + i] = -xb[8 * k + i];
                        ++nflip;
                        sg = uint8_t(sg | (1 << i));
                    }
                }
                if (nflip % 2) {
                    int imin = 0;
                    float min = weight[8 * k + imin] * xb[8 * k + imin] * xb[8 * k + imin];
                    for (int i = 1; i < 8; ++i) {
                        const float ax = weight[8 * k + i] * xb[8 * k + i] * xb[8 * k + i];
                        if (ax < min) {
                            min = ax;
                            imin = i;
                        }
                    }
                    xval[8 * k + imin] = -xval[8 * k + imin];
                    sg = uint8_t(sg ^ (1 << imin));
                }
                block_signs[k] = sg & 127;
            }
            float max = xval[0];
            for (int i = 1; i < 32; ++i) max = std::max(max, xval[i]);
            std::memset(L, 0, 32);
            if (max < 1e-8f) {
                scales[ib] = 0;
                continue;
            }
            float scale = iq3_group(s, xval, weight, waux, L, max, 15, true, true);
            if (scale < 0) {
                scale = -scale;
                for (uint8_t& b : block_signs) b = uint8_t(~b & 127);
            }
            for (int k = 0; k < 8; ++k) q3[8 * ib + k] = uint8_t(iq3_index(s, L + 4 * k));
            scales_and_signs[ib] = uint32_t(block_signs[0]) | (uint32_t(block_signs[1]) << 7) | (uint32_t(block_signs[2]) << 14) |
                                   (uint32_t(block_signs[3]) << 21);
            scales[ib] = scale;
            max_scale = std::max(max_scale, scale);
        }
        if (!max_scale) {
            std::memset(out + 2, 0, 96);
            continue;
        }
        const float d = max_scale / 31;
        put_f16(out, d * 1.0125f);
        const float id = 1 / d;
        for (int ib = 0; ib < QK_K / 32; ++ib) {
            int l = nearest_int(0.5f * (id * scales[ib] - 1));
            l = std::max(0, std::min(15, l));
            scales_and_signs[ib] |= uint32_t(l) << 28;
        }
        std::memcpy(q3 + QK_K / 4, scales_and_signs, sizeof scales_and_signs);
        std::memcpy(out + 2, q3, 96);
    }
}

// IQ3_S (110 bytes: f16 d, qs[64], qh[8], signs[32], scales[4]).
void quantize_iq3_s(const float* x, unsigned char* out, int64_t nb, const float* quant_weights) {
    const GridSearch& s = iq3_search(512);
    constexpr int block_size = 32, bs4 = 8, bs8 = 4;
    float scales[QK_K / block_size], weight[block_size], xval[block_size], waux[block_size];
    int8_t L[block_size];
    uint8_t block_signs[bs8];
    for (int64_t ibl = 0; ibl < nb; ++ibl, out += 110) {
        std::memset(out, 0, 110);
        uint8_t* qs = out + 2;
        uint8_t* qh = out + 66;
        uint8_t* signs = out + 74;
        uint8_t* sc = out + 106;
        float max_scale = 0;
        const float* xbl = x + QK_K * ibl;
        float sumx2 = 0;
        for (int i = 0; i < QK_K; ++i) sumx2 += xbl[i] * xbl[i];
        const float sigma2 = 2 * sumx2 / QK_K;
        for (int ib = 0; ib < QK_K / block_size; ++ib) {
            const float* xb = xbl + block_size * ib;
            if (quant_weights) {
                const float* qw = quant_weights + QK_K * ibl + block_size * ib;
                for (int i = 0; i < block_size; ++i) weight[i] = qw[i] * std::sqrt(sigma2 + xb[i] * xb[i]);
            } else {
                for (int i = 0; i < block_size; ++i) weight[i] = xb[i] * xb[i];
            }
            for (int i = 0; i < block_size; ++i) waux[i] = std::sqrt(weight[i]);
            for (int k = 0; k < bs8; ++k) {
                uint8_t sg = 0;
                for (int i = 0; i < 8; ++i) {
                    if (xb[8 * k + i] >= 0) {
                        xval[8 * k + i] = xb[8 * k + i];
                    } else {
                        xval[8 * k + i] = -xb[8 * k + i];
                        sg = uint8_t(sg | (1 << i));
                    }
                }
                block_signs[k] = sg;
            }
            float max = xval[0];
            for (int i = 1; i < block_size; ++i) max = std::max(max, xval[i]);
            std::memset(L, 0, block_size);
            if (!max) {  // ggml leaves qs and signs where they are (the next group writes here)
                scales[ib] = 0;
                continue;
            }
            float scale = iq3_group(s, xval, weight, waux, L, max, 9, false, false);
            if (scale < 0) {
                scale = -scale;
                for (uint8_t& b : block_signs) b = uint8_t(~b);
            }
            for (int k = 0; k < bs4; ++k) {
                const int grid_index = iq3_index(s, L + 4 * k);
                qs[k] = uint8_t(grid_index & 255);
                qh[(ib * bs4 + k) / 8] = uint8_t(qh[(ib * bs4 + k) / 8] | ((grid_index >> 8) << ((ib * bs4 + k) % 8)));
            }
            qs += bs4;
            for (int k = 0; k < bs8; ++k) signs[k] = block_signs[k];
            signs += bs8;
            scales[ib] = scale;
            max_scale = std::max(max_scale, scale);
        }
        if (!max_scale) continue;
        const float d = max_scale / 31;
        put_f16(out, d * 1.033f);
        const float id = 1 / d;
        for (int ib = 0; ib < QK_K / block_size; ib += 2) {
            int l1 = nearest_int(0.5f * (id * scales[ib + 0] - 1));
            l1 = std::max(0, std::min(15, l1));
            int l2 = nearest_int(0.5f * (id * scales[ib + 1] - 1));
            l2 = std::max(0, std::min(15, l2));
            sc[ib / 2] = uint8_t(l1 | (l2 << 4));
        }
    }
}

// ============================ IQ4_NL / IQ4_XS: 4-bit indices into kIq4Values
namespace {

// ggml's best_index_int8: the index of the value nearest x (ties to the lower), by bisection.
int best_index_iq4(float x) {
    const int8_t* val = kIq4Values;
    if (x <= val[0]) return 0;
    if (x >= val[15]) return 15;
    int ml = 0, mu = 15;
    while (mu - ml > 1) {
        const int mav = (ml + mu) / 2;
        if (x < val[mav]) mu = mav;
        else ml = mav;
    }
    return x - val[mu - 1] < val[mu] - x ? mu - 1 : mu;
}

// ggml's quantize_row_iq4_nl_impl with ntry 7 (what quantize_iq4_nl / quantize_iq4_xs pass):
// per 32, the scale of the largest |x| tried at 15 steps, the best weighted fit kept; for IQ4_XS
// (super 256) the 8 scales then 6-bit integers of one f16 d. dh: the f16 d; q4: the nibbles;
// scales_h, scales_l: IQ4_XS's scale bits (unused for IQ4_NL, super 32).
void iq4_impl(int super, const float* x, unsigned char* dh, uint8_t* q4, unsigned char* scales_h, uint8_t* scales_l,
              const float* quant_weights) {
    constexpr int block_size = 32, ntry = 7;
    const int8_t* values = kIq4Values;
    float scales[QK_K / block_size], weight[block_size];
    uint8_t L[QK_K];
    float sigma2 = 0;
    for (int j = 0; j < super; ++j) sigma2 += x[j] * x[j];
    sigma2 *= 2.f / float(super);
    std::memset(q4, 0, size_t(super / 2));
    put_f16(dh, 0.f);
    float max_scale = 0, amax_scale = 0;
    for (int ib = 0; ib < super / block_size; ++ib) {
        const float* xb = x + ib * block_size;
        uint8_t* Lb = L + ib * block_size;
        if (quant_weights) {
            const float* qw = quant_weights + ib * block_size;
            for (int j = 0; j < block_size; ++j) weight[j] = qw[j] * std::sqrt(sigma2 + xb[j] * xb[j]);
        } else {
            for (int j = 0; j < block_size; ++j) weight[j] = xb[j] * xb[j];
        }
        float amax = 0, max = 0;
        for (int j = 0; j < block_size; ++j) {
            const float ax = std::fabs(xb[j]);
            if (ax > amax) {
                amax = ax;
                max = xb[j];
            }
        }
        if (amax < 1e-15f) {  // GROUP_MAX_EPS
            scales[ib] = 0;
            continue;
        }
        float d = -max / float(values[0]);
        float id = 1 / d;
        float sumqx = 0, sumq2 = 0;
        for (int j = 0; j < block_size; ++j) {
            const int l = best_index_iq4(id * xb[j]);
            Lb[j] = uint8_t(l);
            const float q = values[l], w = weight[j];
            sumqx += w * q * xb[j];
            sumq2 += w * q * q;
        }
        d = sumq2 > 0 ? sumqx / sumq2 : 0.f;
        float best = d * sumqx;
        for (int itry = -ntry; itry <= ntry; ++itry) {
            id = float(itry + values[0]) / max;
            sumqx = sumq2 = 0;
            for (int j = 0; j < block_size; ++j) {
                const float q = values[best_index_iq4(id * xb[j])], w = weight[j];
                sumqx += w * q * xb[j];
                sumq2 += w * q * q;
            }
            if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
                d = sumqx / sumq2;
                best = d * sumqx;
            }
        }
        scales[ib] = d;
        const float abs_d = std::fabs(d);
        if (abs_d > amax_scale) {
            amax_scale = abs_d;
            max_scale = d;
        }
    }
    if (super / block_size > 1) {
        uint16_t sh = 0;
        const float d = -max_scale / 32;  // -0.0 when every scale is 0, as ggml writes it
        put_f16(dh, d);
        const float id = d ? 1 / d : 0.f;
        for (int ib = 0; ib < super / block_size; ++ib) {
            int l = nearest_int(id * scales[ib]);
            l = std::max(-32, std::min(31, l));
            const float dl = d * float(l);
            const float idl = dl ? 1 / dl : 0.f;
            uint8_t* Lb = L + ib * block_size;
            const float* xb = x + ib * block_size;
            for (int j = 0; j < block_size; ++j) Lb[j] = uint8_t(best_index_iq4(idl * xb[j]));
            l += 32;
            const auto l_l = uint8_t(l & 0xf), l_h = uint8_t(l >> 4);
            if (ib % 2 == 0) scales_l[ib / 2] = l_l;
            else scales_l[ib / 2] = uint8_t(scales_l[ib / 2] | (l_l << 4));
            sh = uint16_t(sh | (l_h << 2 * (ib % 8)));
        }
        std::memcpy(scales_h, &sh, 2);
    } else {
        put_f16(dh, scales[0]);
        const float id = scales[0] ? 1 / scales[0] : 0;
        for (int j = 0; j < super; ++j) L[j] = uint8_t(best_index_iq4(id * x[j]));
    }
    for (int i = 0; i < super / 32; ++i)
        for (int j = 0; j < 16; ++j) q4[16 * i + j] = uint8_t(L[32 * i + j] | (L[32 * i + 16 + j] << 4));
}

}  // namespace

// IQ4_NL (18 bytes: f16 d, qs[16]).
void quantize_iq4_nl(const float* x, unsigned char* out, int64_t nb, const float* quant_weights) {
    for (int64_t ib = 0; ib < nb; ++ib, out += 18)
        iq4_impl(32, x + 32 * ib, out, out + 2, nullptr, nullptr, quant_weights ? quant_weights + 32 * ib : nullptr);
}

// IQ4_XS (136 bytes: f16 d, u16 scales_h, scales_l[4], qs[128]).
void quantize_iq4_xs(const float* x, unsigned char* out, int64_t nb, const float* quant_weights) {
    for (int64_t ib = 0; ib < nb; ++ib, out += 136)
        iq4_impl(QK_K, x + QK_K * ib, out, out + 8, out + 2, out + 4, quant_weights ? quant_weights + QK_K * ib : nullptr);
}

}  // namespace journey
