// Stage 3: impulses by projected Jacobi with mass splitting. A sweep is solve_contacts (every
// contact's new impulse from the velocity iterate of the previous sweep; one thread per grain
// over the contacts it owns), then the gathers (every grain and body sums the impulses of its
// contacts into its new velocity iterate). Each impulse and each velocity has one writer: no
// atomics, no races, and sums in a fixed order, so a step is repeatable bit for bit.

// One contact's update. u: relative velocity (owner minus partner); n: normal to the owner;
// inv_mass_split: w_a n_a + w_b n_b; l: the impulse on the owner, updated in place.
__device__ __forceinline__ void update_impulse(const Params &p, real mu, real inv_mass_split,
                                               real ux, real uy, real uz,
                                               real nx, real ny, real nz, real psi,
                                               real *lx, real *ly, real *lz) {
    if (!(inv_mass_split > 0.0)) return;
    real un = ux * nx + uy * ny + uz * nz;
    // an open gap may close exactly this step (the CPU's max(psi, 0) / dt); overlaps are the
    // split-impulse pass's (split.cu), so they put no energy into velocities
    real bias = fmax(psi, 0.0) / p.dt;
    real step = p.relaxation / inv_mass_split;
    real ln = *lx * nx + *ly * ny + *lz * nz;
    real tx = *lx - ln * nx, ty = *ly - ln * ny, tz = *lz - ln * nz;
    ln = fmax(0.0, ln - step * (un + bias));
    tx -= step * (ux - un * nx);
    ty -= step * (uy - un * ny);
    tz -= step * (uz - un * nz);
    real tn = sqrt(tx * tx + ty * ty + tz * tz);
    real cap = mu * ln;
    if (tn > cap) {
        real s = tn > 0.0 ? cap / tn : 0.0;
        tx *= s; ty *= s; tz *= s;
    }
    *lx = ln * nx + tx;
    *ly = ln * ny + ty;
    *lz = ln * nz + tz;
}

extern "C" __global__ void solve_contacts(Params p, Grains g, Bodies b) {
    i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    i64 n = p.grains_per_scene * p.scenes;
    if (i >= n) return;
    real wx = g.wx[i], wy = g.wy[i], wz = g.wz[i];
    real own = g.inv_mass[i] * (real)g.degree[i];
    int count = g.pair_count[i];
    for (int s = 0; s < count; ++s) {
        i64 slot = i * PAIR_SLOTS + s;
        int j = g.pair_partner[slot];
        real lx = g.pair_lx[slot], ly = g.pair_ly[slot], lz = g.pair_lz[slot];
        update_impulse(p, p.friction, own + g.inv_mass[j] * (real)g.degree[j],
                       wx - g.wx[j], wy - g.wy[j], wz - g.wz[j],
                       g.pair_nx[slot], g.pair_ny[slot], g.pair_nz[slot], g.pair_psi[slot],
                       &lx, &ly, &lz);
        g.pair_lx[slot] = lx;
        g.pair_ly[slot] = ly;
        g.pair_lz[slot] = lz;
    }
    i64 scene = scene_of_grain(p, i);
    count = g.ext_count[i];
    for (int s = 0; s < count; ++s) {
        i64 slot = i * EXTERNAL_SLOTS + s;
        int key = g.ext_key[slot];
        real ux = wx, uy = wy, uz = wz, split = own, mu = p.wall_friction;
        if (key >= p.walls) {
            i64 body = scene * p.bodies_per_scene + (key - p.walls);
            ux -= b.wx[body];
            uy -= b.wy[body];
            uz -= b.wz[body];
            split += b.inv_mass[body] * b.degree[body];
            mu = b.friction[body];
        }
        real lx = g.ext_lx[slot], ly = g.ext_ly[slot], lz = g.ext_lz[slot];
        update_impulse(p, mu, split, ux, uy, uz,
                       g.ext_nx[slot], g.ext_ny[slot], g.ext_nz[slot], g.ext_psi[slot],
                       &lx, &ly, &lz);
        g.ext_lx[slot] = lx;
        g.ext_ly[slot] = ly;
        g.ext_lz[slot] = lz;
    }
}

// v_i = v*_i + w_i (sum of own impulses - sum of impulses where i is the partner + walls and bodies)
extern "C" __global__ void gather_grains(Params p, Grains g) {
    i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    i64 n = p.grains_per_scene * p.scenes;
    if (i >= n) return;
    real sx = 0.0, sy = 0.0, sz = 0.0;
    int count = g.pair_count[i];
    for (int s = 0; s < count; ++s) {
        i64 slot = i * PAIR_SLOTS + s;
        sx += g.pair_lx[slot];
        sy += g.pair_ly[slot];
        sz += g.pair_lz[slot];
    }
    count = g.reverse_count[i];
    for (int s = 0; s < count; ++s) {
        i64 slot = g.reverse_slot[i * REVERSE_SLOTS + s];
        sx -= g.pair_lx[slot];
        sy -= g.pair_ly[slot];
        sz -= g.pair_lz[slot];
    }
    count = g.ext_count[i];
    for (int s = 0; s < count; ++s) {
        i64 slot = i * EXTERNAL_SLOTS + s;
        sx += g.ext_lx[slot];
        sy += g.ext_ly[slot];
        sz += g.ext_lz[slot];
    }
    real im = g.inv_mass[i];
    g.wx[i] = g.fx[i] + im * sx;
    g.wy[i] = g.fy[i] + im * sy;
    g.wz[i] = g.fz[i] + im * sz;
}

// Partial sums over a body's contacts: grid (BODY_BLOCKS, bodies), GATHER_THREADS threads.
// Each block takes a fixed stride of its scene's grains and reduces in shared memory in a fixed
// tree, so the sums do not depend on scheduling. Sums: impulse on the body (3), its moment
// about the body's origin with contact point x - n (r + min(psi, 0) / 2) (3), contacts with
// a non-zero impulse, all contacts.
extern "C" __global__ void body_partial_sums(Params p, Grains g, Bodies b) {
    __shared__ real sum[BODY_SUMS][GATHER_THREADS];
    i64 body = blockIdx.y;
    i64 scene = body / p.bodies_per_scene;
    int key = (int)(p.walls + body % p.bodies_per_scene);
    real ox = b.px[body], oy = b.py[body], oz = b.pz[body];
    real acc[BODY_SUMS];
    for (int q = 0; q < BODY_SUMS; ++q) acc[q] = 0.0;
    i64 first = scene * p.grains_per_scene;
    i64 stride = (i64)BODY_BLOCKS * GATHER_THREADS;
    for (i64 i = first + (i64)blockIdx.x * GATHER_THREADS + threadIdx.x;
         i < first + p.grains_per_scene; i += stride) {
        int count = g.ext_count[i];
        for (int s = 0; s < count; ++s) {
            i64 slot = i * EXTERNAL_SLOTS + s;
            if (g.ext_key[slot] != key) continue;
            real lx = -g.ext_lx[slot], ly = -g.ext_ly[slot], lz = -g.ext_lz[slot];
            real reach = g.radius[i] + 0.5 * fmin(g.ext_psi[slot], 0.0);
            real ax = g.x[i] - g.ext_nx[slot] * reach - ox;
            real ay = g.y[i] - g.ext_ny[slot] * reach - oy;
            real az = g.z[i] - g.ext_nz[slot] * reach - oz;
            acc[0] += lx;
            acc[1] += ly;
            acc[2] += lz;
            acc[3] += ay * lz - az * ly;
            acc[4] += az * lx - ax * lz;
            acc[5] += ax * ly - ay * lx;
            acc[6] += (lx != 0.0 || ly != 0.0 || lz != 0.0) ? 1.0 : 0.0;
            acc[7] += 1.0;
        }
    }
    for (int q = 0; q < BODY_SUMS; ++q) sum[q][threadIdx.x] = acc[q];
    __syncthreads();
    for (int half = GATHER_THREADS / 2; half > 0; half /= 2) {
        if (threadIdx.x < half)
            for (int q = 0; q < BODY_SUMS; ++q) sum[q][threadIdx.x] += sum[q][threadIdx.x + half];
        __syncthreads();
    }
    if (threadIdx.x < BODY_SUMS)
        b.partial[(body * BODY_BLOCKS + blockIdx.x) * BODY_SUMS + threadIdx.x] = sum[threadIdx.x][0];
}

// One thread per body adds the partial sums in block order. With update_velocity the body's
// velocity iterate follows (a gather); without, only the step's totals are stored.
extern "C" __global__ void body_totals(Params p, Bodies b, int update_velocity) {
    i64 body = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (body >= p.scenes * p.bodies_per_scene) return;
    real total[BODY_SUMS];
    for (int q = 0; q < BODY_SUMS; ++q) total[q] = 0.0;
    for (int block = 0; block < BODY_BLOCKS; ++block)
        for (int q = 0; q < BODY_SUMS; ++q)
            total[q] += b.partial[(body * BODY_BLOCKS + block) * BODY_SUMS + q];
    b.impulse_x[body] = total[0];
    b.impulse_y[body] = total[1];
    b.impulse_z[body] = total[2];
    b.moment_x[body] = total[3];
    b.moment_y[body] = total[4];
    b.moment_z[body] = total[5];
    b.touching[body] = total[6];
    b.degree[body] = total[7];
    if (update_velocity) {
        real im = b.inv_mass[body];
        b.wx[body] = b.fx[body] + im * total[0];
        b.wy[body] = b.fy[body] + im * total[1];
        b.wz[body] = b.fz[body] + im * total[2];
    }
}
