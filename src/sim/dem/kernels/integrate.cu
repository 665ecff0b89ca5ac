// Stage 0 and stage 4: the predicted velocity before contacts, and symplectic Euler after
// them (the new velocity first, then the position with it and the pseudo-velocity).

extern "C" __global__ void predict_grains(Params p, Grains g) {
    i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    i64 n = p.grains_per_scene * p.scenes;
    if (i >= n) return;
    real fx = g.vx[i], fy = g.vy[i], fz = g.vz[i];
    if (g.inv_mass[i] > 0.0) {   // a pinned grain (inverse mass 0) keeps its velocity
        fx += p.dt * p.gravity_x;
        fy += p.dt * p.gravity_y;
        fz += p.dt * p.gravity_z;
    }
    g.fx[i] = fx; g.fy[i] = fy; g.fz[i] = fz;
    g.wx[i] = fx; g.wy[i] = fy; g.wz[i] = fz;
    real speed2 = fx * fx + fy * fy + fz * fz;
    atomicMax(&g.counters[2], (u64)__double_as_longlong(speed2));
}

extern "C" __global__ void predict_bodies(Params p, Bodies b) {
    i64 k = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= p.scenes * p.bodies_per_scene) return;
    real im = b.inv_mass[k];
    real fx = b.vx[k], fy = b.vy[k], fz = b.vz[k];
    if (im > 0.0) {
        fx += p.dt * (p.gravity_x + im * b.ext_fx[k]);
        fy += p.dt * (p.gravity_y + im * b.ext_fy[k]);
        fz += p.dt * (p.gravity_z + im * b.ext_fz[k]);
    }
    b.fx[k] = fx; b.fy[k] = fy; b.fz[k] = fz;
    b.wx[k] = fx; b.wy[k] = fy; b.wz[k] = fz;
}

extern "C" __global__ void integrate_grains(Params p, Grains g) {
    i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    i64 n = p.grains_per_scene * p.scenes;
    if (i >= n) return;
    real vx = g.wx[i], vy = g.wy[i], vz = g.wz[i];
    g.vx[i] = vx; g.vy[i] = vy; g.vz[i] = vz;
    // the split-impulse pass's pseudo-velocity moves the grain, not its velocity
    g.x[i] += p.dt * (vx + g.qx[i]);
    g.y[i] += p.dt * (vy + g.qy[i]);
    g.z[i] += p.dt * (vz + g.qz[i]);
}

// A dynamic body takes its solved velocity; every body moves with its velocity.
extern "C" __global__ void integrate_bodies(Params p, Bodies b) {
    i64 k = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= p.scenes * p.bodies_per_scene) return;
    if (b.inv_mass[k] > 0.0) {
        b.vx[k] = b.wx[k];
        b.vy[k] = b.wy[k];
        b.vz[k] = b.wz[k];
    }
    b.px[k] += p.dt * (b.vx[k] + b.qx[k]);
    b.py[k] += p.dt * (b.vy[k] + b.qy[k]);
    b.pz[k] += p.dt * (b.vz[k] + b.qz[k]);
}
