// Stage 3b: the split-impulse position correction, the CPU's `correct_positions`. The
// contacts overlapping by more than the slop (psi < -slop) get a normal pseudo-impulse
// k >= 0 from max(2, ceil(K / 4)) projected-Jacobi sweeps on pseudo-velocities q, with
// n . (q_a - q_b) >= -alpha (psi + slop) / dt and the mass split by each grain's (and
// body's) number of such contacts. Positions move by dt (v + q); velocities keep no trace of
// it, so pushing overlaps apart never adds kinetic energy. One writer per impulse and per
// pseudo-velocity, sums in a fixed order: repeatable bit for bit.

__device__ __forceinline__ bool is_deep(const Params &p, real psi) {
    return psi < -p.overlap_slop;
}

// Per grain: its deep contacts (owned pairs, pairs it is the partner of, walls and bodies),
// and every pseudo-impulse and pseudo-velocity zeroed.
extern "C" __global__ void deep_prepare(Params p, Grains g) {
    i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    i64 n = p.grains_per_scene * p.scenes;
    if (i >= n) return;
    int deep = 0;
    int count = g.pair_count[i];
    for (int s = 0; s < count; ++s) {
        i64 slot = i * PAIR_SLOTS + s;
        g.pair_k[slot] = 0.0;
        deep += is_deep(p, g.pair_psi[slot]);
    }
    count = g.reverse_count[i];
    for (int s = 0; s < count; ++s)
        deep += is_deep(p, g.pair_psi[g.reverse_slot[i * REVERSE_SLOTS + s]]);
    count = g.ext_count[i];
    for (int s = 0; s < count; ++s) {
        i64 slot = i * EXTERNAL_SLOTS + s;
        g.ext_k[slot] = 0.0;
        deep += is_deep(p, g.ext_psi[slot]);
    }
    g.deep_degree[i] = deep;
    g.qx[i] = 0.0; g.qy[i] = 0.0; g.qz[i] = 0.0;
}

// k <- max(0, k - m (n . (q_a - q_b) + alpha (psi + slop) / dt)), m = 1 / (w_a c_a + w_b c_b).
__device__ __forceinline__ real deep_update(const Params &p, real k, real split,
                                            real ux, real uy, real uz,
                                            real nx, real ny, real nz, real psi) {
    real m = split > 0.0 ? 1.0 / split : 0.0;
    real un = ux * nx + uy * ny + uz * nz;
    real bias = p.stabilisation * (psi + p.overlap_slop) / p.dt;
    return fmax(k - m * (un + bias), 0.0);
}

// One sweep of the deep contacts a grain owns, from the pseudo-velocities of the last sweep.
extern "C" __global__ void solve_deep(Params p, Grains g, Bodies b) {
    i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    i64 n = p.grains_per_scene * p.scenes;
    if (i >= n) return;
    real qx = g.qx[i], qy = g.qy[i], qz = g.qz[i];
    real own = g.inv_mass[i] * (real)g.deep_degree[i];
    int count = g.pair_count[i];
    for (int s = 0; s < count; ++s) {
        i64 slot = i * PAIR_SLOTS + s;
        real psi = g.pair_psi[slot];
        if (!is_deep(p, psi)) continue;
        int j = g.pair_partner[slot];
        g.pair_k[slot] = deep_update(p, g.pair_k[slot],
                                     own + g.inv_mass[j] * (real)g.deep_degree[j],
                                     qx - g.qx[j], qy - g.qy[j], qz - g.qz[j],
                                     g.pair_nx[slot], g.pair_ny[slot], g.pair_nz[slot], psi);
    }
    i64 scene = scene_of_grain(p, i);
    count = g.ext_count[i];
    for (int s = 0; s < count; ++s) {
        i64 slot = i * EXTERNAL_SLOTS + s;
        real psi = g.ext_psi[slot];
        if (!is_deep(p, psi)) continue;
        int key = g.ext_key[slot];
        real ux = qx, uy = qy, uz = qz, split = own;
        if (key >= p.walls) {
            i64 body = scene * p.bodies_per_scene + (key - p.walls);
            ux -= b.qx[body];
            uy -= b.qy[body];
            uz -= b.qz[body];
            split += b.inv_mass[body] * b.deep_degree[body];
        }
        g.ext_k[slot] = deep_update(p, g.ext_k[slot], split, ux, uy, uz,
                                    g.ext_nx[slot], g.ext_ny[slot], g.ext_nz[slot], psi);
    }
}

// q_i = w_i (sum over own deep contacts of k n - sum over deep contacts it is the partner of).
extern "C" __global__ void gather_deep(Params p, Grains g) {
    i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    i64 n = p.grains_per_scene * p.scenes;
    if (i >= n) return;
    real sx = 0.0, sy = 0.0, sz = 0.0;
    int count = g.pair_count[i];
    for (int s = 0; s < count; ++s) {
        i64 slot = i * PAIR_SLOTS + s;
        real k = g.pair_k[slot];
        sx += k * g.pair_nx[slot];
        sy += k * g.pair_ny[slot];
        sz += k * g.pair_nz[slot];
    }
    count = g.reverse_count[i];
    for (int s = 0; s < count; ++s) {
        i64 slot = g.reverse_slot[i * REVERSE_SLOTS + s];
        real k = g.pair_k[slot];
        sx -= k * g.pair_nx[slot];
        sy -= k * g.pair_ny[slot];
        sz -= k * g.pair_nz[slot];
    }
    count = g.ext_count[i];
    for (int s = 0; s < count; ++s) {
        i64 slot = i * EXTERNAL_SLOTS + s;
        real k = g.ext_k[slot];
        sx += k * g.ext_nx[slot];
        sy += k * g.ext_ny[slot];
        sz += k * g.ext_nz[slot];
    }
    real w = g.inv_mass[i];
    g.qx[i] = w * sx;
    g.qy[i] = w * sy;
    g.qz[i] = w * sz;
}

// A body's deep contacts and the pseudo-impulse on it: partial sums as body_partial_sums
// (grid (BODY_BLOCKS, bodies), GATHER_THREADS threads, a fixed tree), into the same
// `partial` rows: -sum k n (3), deep contacts (1).
extern "C" __global__ void body_deep_partial_sums(Params p, Grains g, Bodies b) {
    __shared__ real sum[4][GATHER_THREADS];
    i64 body = blockIdx.y;
    i64 scene = body / p.bodies_per_scene;
    int key = (int)(p.walls + body % p.bodies_per_scene);
    real acc[4] = {0.0, 0.0, 0.0, 0.0};
    i64 first = scene * p.grains_per_scene;
    i64 stride = (i64)BODY_BLOCKS * GATHER_THREADS;
    for (i64 i = first + (i64)blockIdx.x * GATHER_THREADS + threadIdx.x;
         i < first + p.grains_per_scene; i += stride) {
        int count = g.ext_count[i];
        for (int s = 0; s < count; ++s) {
            i64 slot = i * EXTERNAL_SLOTS + s;
            if (g.ext_key[slot] != key || !is_deep(p, g.ext_psi[slot])) continue;
            real k = g.ext_k[slot];
            acc[0] -= k * g.ext_nx[slot];
            acc[1] -= k * g.ext_ny[slot];
            acc[2] -= k * g.ext_nz[slot];
            acc[3] += 1.0;
        }
    }
    for (int q = 0; q < 4; ++q) sum[q][threadIdx.x] = acc[q];
    __syncthreads();
    for (int half = GATHER_THREADS / 2; half > 0; half /= 2) {
        if (threadIdx.x < half)
            for (int q = 0; q < 4; ++q) sum[q][threadIdx.x] += sum[q][threadIdx.x + half];
        __syncthreads();
    }
    if (threadIdx.x < 4)
        b.partial[(body * BODY_BLOCKS + blockIdx.x) * BODY_SUMS + threadIdx.x] = sum[threadIdx.x][0];
}

// One thread per body adds the partial sums in block order: its deep contacts and its
// pseudo-velocity (zero for a kinematic body, whose inverse mass is 0).
extern "C" __global__ void body_deep_totals(Params p, Bodies b) {
    i64 body = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (body >= p.scenes * p.bodies_per_scene) return;
    real total[4] = {0.0, 0.0, 0.0, 0.0};
    for (int block = 0; block < BODY_BLOCKS; ++block)
        for (int q = 0; q < 4; ++q)
            total[q] += b.partial[(body * BODY_BLOCKS + block) * BODY_SUMS + q];
    real im = b.inv_mass[body];
    b.qx[body] = im * total[0];
    b.qy[body] = im * total[1];
    b.qz[body] = im * total[2];
    b.deep_degree[body] = total[3];
}
