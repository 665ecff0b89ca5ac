// Stage 2: contact lists. One thread per grain finds the grains in the 27 cells around its
// own with a larger index (so each pair is found once, by its lower index), and its walls and
// bodies. Lists are kept sorted (by partner, by key), which makes them independent of the
// hash's insertion order, and each new contact takes the impulse it had last step if the
// pair was in contact then (warm start).

__device__ void warm_pair(const Grains &g, i64 i, int partner, real *l) {
    int count = g.prev_pair_count[i];
    for (int s = 0; s < count; ++s) {
        i64 slot = i * PAIR_SLOTS + s;
        int q = g.prev_pair_partner[slot];
        if (q == partner) {
            l[0] = g.prev_pair_lx[slot];
            l[1] = g.prev_pair_ly[slot];
            l[2] = g.prev_pair_lz[slot];
            return;
        }
        if (q > partner) break;
    }
    l[0] = l[1] = l[2] = 0.0;
}

__device__ void warm_external(const Grains &g, i64 i, int key, real *l) {
    int count = g.prev_ext_count[i];
    for (int s = 0; s < count; ++s) {
        i64 slot = i * EXTERNAL_SLOTS + s;
        if (g.prev_ext_key[slot] == key) {
            l[0] = g.prev_ext_lx[slot];
            l[1] = g.prev_ext_ly[slot];
            l[2] = g.prev_ext_lz[slot];
            return;
        }
    }
    l[0] = l[1] = l[2] = 0.0;
}

extern "C" __global__ void find_pairs(Params p, Grains g) {
    i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    i64 n = p.grains_per_scene * p.scenes;
    if (i >= n) return;
    i64 scene = scene_of_grain(p, i);
    real xi = g.x[i], yi = g.y[i], zi = g.z[i], ri = g.radius[i];
    int cx = g.cell[3 * i], cy = g.cell[3 * i + 1], cz = g.cell[3 * i + 2];
    real margin = step_margin(p, g.counters);
    int partners[PAIR_SLOTS];
    int count = 0;
    for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
    for (int dx = -1; dx <= 1; ++dx) {
        int nx = cx + dx, ny = cy + dy, nz = cz + dz;
        for (int j = g.table[bucket_of(p, scene, nx, ny, nz)]; j >= 0; j = g.next[j]) {
            if ((i64)j <= i || scene_of_grain(p, j) != scene) continue;
            if (g.cell[3 * j] != nx || g.cell[3 * j + 1] != ny || g.cell[3 * j + 2] != nz) continue;
            real ex = xi - g.x[j], ey = yi - g.y[j], ez = zi - g.z[j];
            real reach = ri + g.radius[j] + margin;
            if (ex * ex + ey * ey + ez * ez >= reach * reach) continue;
            if (count == PAIR_SLOTS) { atomicOr(&g.counters[0], OVERFLOW_PAIR); continue; }
            // insertion keeps the list sorted by partner index
            int s = count++;
            while (s > 0 && partners[s - 1] > j) { partners[s] = partners[s - 1]; --s; }
            partners[s] = j;
        }
    }
    g.pair_count[i] = count;
    for (int s = 0; s < count; ++s) {
        int j = partners[s];
        i64 slot = i * PAIR_SLOTS + s;
        real ex = xi - g.x[j], ey = yi - g.y[j], ez = zi - g.z[j];
        real dist = sqrt(ex * ex + ey * ey + ez * ez);
        real nx = 0.0, ny = 0.0, nz = 1.0;
        if (dist > 0.0) { nx = ex / dist; ny = ey / dist; nz = ez / dist; }
        g.pair_partner[slot] = j;
        g.pair_nx[slot] = nx;
        g.pair_ny[slot] = ny;
        g.pair_nz[slot] = nz;
        g.pair_psi[slot] = dist - ri - g.radius[j];
        real l[3];
        warm_pair(g, i, j, l);
        g.pair_lx[slot] = l[0];
        g.pair_ly[slot] = l[1];
        g.pair_lz[slot] = l[2];
        int r = atomicAdd(&g.reverse_count[j], 1);
        if (r < REVERSE_SLOTS) g.reverse_slot[(i64)j * REVERSE_SLOTS + r] = (int)slot;
        else atomicOr(&g.counters[0], OVERFLOW_REVERSE);
    }
}

// Reverse lists were filled in arrival order; sort them so that the gather sums in a fixed
// order. Then n_i, the grain's contact count, for mass splitting.
extern "C" __global__ void sort_reverse(Params p, Grains g) {
    i64 j = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    i64 n = p.grains_per_scene * p.scenes;
    if (j >= n) return;
    int count = min(g.reverse_count[j], REVERSE_SLOTS);
    g.reverse_count[j] = count;
    int *list = g.reverse_slot + j * REVERSE_SLOTS;
    for (int a = 1; a < count; ++a) {
        int v = list[a];
        int s = a;
        while (s > 0 && list[s - 1] > v) { list[s] = list[s - 1]; --s; }
        list[s] = v;
    }
    int owned = g.pair_count[j] + g.ext_count[j];
    g.degree[j] = owned + count;
    atomicAdd(&g.counters[1], (unsigned long long)owned);
}

__device__ void push_external(const Grains &g, i64 i, int *count, int key,
                              real nx, real ny, real nz, real psi, real margin) {
    if (psi >= margin) return;
    if (*count == EXTERNAL_SLOTS) { atomicOr(&g.counters[0], OVERFLOW_EXTERNAL); return; }
    i64 slot = i * EXTERNAL_SLOTS + *count;
    (*count)++;
    g.ext_key[slot] = key;
    g.ext_nx[slot] = nx;
    g.ext_ny[slot] = ny;
    g.ext_nz[slot] = nz;
    g.ext_psi[slot] = psi;
    real l[3];
    warm_external(g, i, key, l);
    g.ext_lx[slot] = l[0];
    g.ext_ly[slot] = l[1];
    g.ext_lz[slot] = l[2];
}

// Walls of the container, then the scene's bodies: keys rise in the order contacts are
// pushed, so the list is sorted by key.
extern "C" __global__ void find_external(Params p, Grains g, Bodies b) {
    i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    i64 n = p.grains_per_scene * p.scenes;
    if (i >= n) return;
    real x = g.x[i], y = g.y[i], z = g.z[i], r = g.radius[i];
    real margin = step_margin(p, g.counters);
    int count = 0;
    push_external(g, i, &count, 0, 0.0, 0.0, 1.0, z - r, margin);
    if (p.container == CONTAINER_BOX) {
        push_external(g, i, &count, 1, -1.0, 0.0, 0.0, p.container_a - x - r, margin);
        push_external(g, i, &count, 2, 1.0, 0.0, 0.0, p.container_a + x - r, margin);
        push_external(g, i, &count, 3, 0.0, -1.0, 0.0, p.container_b - y - r, margin);
        push_external(g, i, &count, 4, 0.0, 1.0, 0.0, p.container_b + y - r, margin);
    } else {
        real rho = sqrt(x * x + y * y);
        if (rho > 0.0)
            push_external(g, i, &count, 1, -x / rho, -y / rho, 0.0, p.container_a - rho - r, margin);
    }
    i64 scene = scene_of_grain(p, i);
    for (i64 k = 0; k < p.bodies_per_scene; ++k) {
        i64 body = scene * p.bodies_per_scene + k;
        // the body frame is the world frame moved to the body's origin
        real qx = x - b.px[body], qy = y - b.py[body], qz = z - b.pz[body];
        int shape = b.shape[body];
        const real *size = b.size + 3 * body;
        real psi = body_sdf(shape, size, qx, qy, qz) - r;
        // a moving body reaches further within the step
        real speed = sqrt(b.vx[body] * b.vx[body] + b.vy[body] * b.vy[body] + b.vz[body] * b.vz[body]);
        real body_margin = margin + p.dt * speed;
        if (psi >= body_margin) continue;
        // outward normal: central differences with the step sdf.rs uses
        real gx = 0.0, gy = 0.0, gz = 1.0;
        if (shape != SHAPE_PLANE) {
            real h = fmax(1e-9, 1e-7 * sqrt(qx * qx + qy * qy + qz * qz));
            gx = (body_sdf(shape, size, qx + h, qy, qz) - body_sdf(shape, size, qx - h, qy, qz)) / (2.0 * h);
            gy = (body_sdf(shape, size, qx, qy + h, qz) - body_sdf(shape, size, qx, qy - h, qz)) / (2.0 * h);
            gz = (body_sdf(shape, size, qx, qy, qz + h) - body_sdf(shape, size, qx, qy, qz - h)) / (2.0 * h);
            real gn = sqrt(gx * gx + gy * gy + gz * gz);
            if (gn > 0.0) { gx /= gn; gy /= gn; gz /= gn; } else { gx = 0.0; gy = 0.0; gz = 1.0; }
        }
        push_external(g, i, &count, (int)(p.walls + k), gx, gy, gz, psi, body_margin);
    }
    g.ext_count[i] = count;
}
