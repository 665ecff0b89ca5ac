// The Hertz-Mindlin step: the twin of hertz.rs (the step) and law.rs (the contact law),
// operation for operation in double precision, so that a CPU and a GPU run of the same bed
// agree to rounding. Where hertz.rs sums in a fixed order, so do these kernels; where it
// writes x * (1.0 / d) rather than x / d, so do they. NVRTC compiles with --fmad=false: no
// fused multiply-adds, which Rust does not emit either.
//
// Launch order per step (cuda_hertz.rs): hm_kick_drift, hm_body_kick_drift, hm_displacement;
// then, when a grain has moved more than half the skin since the last build, the list build
// (hm_hash_clear, hm_hash_insert, hm_count_pairs, hm_scan_* twice, hm_fill_pairs,
// hm_sort_partners); then hm_pair_forces, hm_gather, hm_body_partials, hm_body_totals,
// hm_kick. Every kernel takes the same arguments (HmParams, HmGrains, HmBodies,
// BodyContacts, PairList list, PairList old, int flag); `old` is the list of the previous
// build, read only by hm_fill_pairs.
//
// Many scenes: grain i of scene s is grain s N + i, body k of scene s is body s B + k; a
// scene's grains meet only each other and its own bodies.

#define SCAN_THREADS 256
#define HM_BODY_SUMS 7
#define MAX_WALLS 5

#define MOTION_KINEMATIC 0
#define MOTION_DYNAMIC 1
#define MOTION_ROTATING 2

// A body known by its samples (mesh.rs GridSdf), besides the analytic SHAPE_* of common.cuh.
#define SHAPE_GRID 4

struct HmParams {
    i64 grains_per_scene;
    i64 scenes;
    i64 bodies_per_scene;
    i64 hash_table_size;
    i64 container;          // CONTAINER_*; the floor is z = 0
    i64 walls;              // walls of the container, floor included
    i64 pairs;              // pairs in the current neighbour list
    real container_a;       // cylinder: radius; box: half extent in x
    real container_b;       // box: half extent in y
    real gravity_x, gravity_y, gravity_z;
    real dt;
    real friction;          // grain-grain Coulomb coefficient
    real wall_friction;     // grain-wall Coulomb coefficient
    real cell;              // hash cell size: 2 r_max + skin
    real skin;              // SKIN r_max
    // law.rs LawConstants
    real e_star, g_star, damping, rolling;
};

// Grains of every scene, structure of arrays.
struct HmGrains {
    real *x, *y, *z;                 // position
    real *vx, *vy, *vz;              // velocity
    real *wx, *wy, *wz;              // spin
    real *pvx, *pvy, *pvz;           // predicted velocity: what the damping sees
    real *pwx, *pwy, *pwz;           // predicted spin
    real *fx, *fy, *fz;              // force of the last step
    real *tx, *ty, *tz;              // torque of the last step
    real *rx, *ry, *rz;              // position at the last neighbour-list build
    real *radius;
    real *inv_mass;
    real *mass;                      // 1 / inv_mass (0 for a pinned grain)
    real *inv_inertia;               // inv_mass / (0.4 r^2)
    real *wall_sx, *wall_sy, *wall_sz;   // springs of grain-wall contacts, walls per grain
    int *cell;                       // 3 ints per grain: its hash cell
    int *next;                       // linked cells: the next grain in the same bucket
    int *table;                      // hash_table_size bucket heads (-1: empty)
    int *partner_fill;               // build: partner slots taken so far
    u64 *key;                        // the cell packed as hertz.rs's cell_key
    u64 *pair_start, *old_pair_start;    // pairs of grain a: [pair_start[a], pair_start[a + 1])
    u64 *partner_start;              // pairs in which grain b is b: partner[...] in that range
    u64 *scan_sums;                  // prefix sums: one per block
    // [0]: max |x - x_ref|^2 of the step (the bits of a non-negative double, which order like
    // the numbers); [1]: touching grain pairs summed over force evaluations
    u64 *counters;
};

// Bodies of every scene.
struct HmBodies {
    int *motion;                     // MOTION_*
    int *shape;                      // SHAPE_*
    real *size;                      // 3 per body: box half extents; cylinder/disc (radius, half height, 0)
    real *mass;
    real *inertia;                   // 3 per body: principal moments in the body frame (rotating)
    real *friction;                  // grain-body Coulomb coefficient
    real *reach;                     // radius about the origin that holds the body (inf: unbounded)
    real *px, *py, *pz;              // origin of the body frame
    real *vx, *vy, *vz;              // velocity
    real *qw, *qx, *qy, *qz;         // orientation, body frame to world
    real *ox, *oy, *oz;              // angular velocity (world)
    real *efx, *efy, *efz;           // external force besides gravity
    real *etx, *ety, *etz;           // external torque about the origin
    real *pvx, *pvy, *pvz;           // predicted velocity
    real *pox, *poy, *poz;           // predicted angular velocity
    real *fx, *fy, *fz;              // the grains' force over the last step
    real *tx, *ty, *tz;              // its torque about the origin
    real *contacts;                  // grains touching
    real *partial;                   // BODY_BLOCKS * HM_BODY_SUMS per body
    real *grid_origin;               // SHAPE_GRID: 3 per body, grid point (0, 0, 0)
    real *grid_spacing;
    int *grid_dims;                  // 3 per body
    u64 *grid_offset;                // the body's first sample in grid_values
    real *grid_values;               // samples of every grid body, x fastest
};

// Grain-body contacts: row (s B + k) holds body k of scene s against the scene's N grains.
struct BodyContacts {
    real *sx, *sy, *sz;              // tangential spring
    real *fx, *fy, *fz;              // force on the grain
    real *tx, *ty, *tz;              // torque on the grain
    int *touching;                   // normal force > 0
};

// A neighbour list: pairs a < b, grain-major, each grain's pairs sorted by b.
struct PairList {
    int *a, *b;
    real *sx, *sy, *sz;              // tangential spring
    real *fx, *fy, *fz;              // force on a (b gets minus it)
    real *tax, *tay, *taz;           // torque on a
    real *tbx, *tby, *tbz;           // torque on b
    u64 *partner;                    // pair indices grouped by b (HmGrains::partner_start), ascending
};

// ---- vectors: law.rs's [f64; 3] ----

struct Vec3 {
    real e[3];
    __device__ real &operator[](int i) { return e[i]; }
    __device__ real operator[](int i) const { return e[i]; }
};

__device__ __forceinline__ Vec3 vec3(real a, real b, real c) {
    Vec3 r;
    r.e[0] = a;
    r.e[1] = b;
    r.e[2] = c;
    return r;
}

__device__ __forceinline__ Vec3 load3(const real *x, const real *y, const real *z, i64 i) {
    return vec3(x[i], y[i], z[i]);
}

__device__ __forceinline__ void store3(real *x, real *y, real *z, i64 i, Vec3 v) {
    x[i] = v[0];
    y[i] = v[1];
    z[i] = v[2];
}

__device__ __forceinline__ Vec3 add(Vec3 a, Vec3 b) {
    return vec3(a[0] + b[0], a[1] + b[1], a[2] + b[2]);
}

__device__ __forceinline__ Vec3 sub(Vec3 a, Vec3 b) {
    return vec3(a[0] - b[0], a[1] - b[1], a[2] - b[2]);
}

__device__ __forceinline__ Vec3 scale(Vec3 a, real s) {
    return vec3(a[0] * s, a[1] * s, a[2] * s);
}

__device__ __forceinline__ real dot(Vec3 a, Vec3 b) {
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

__device__ __forceinline__ Vec3 cross(Vec3 a, Vec3 b) {
    return vec3(a[1] * b[2] - a[2] * b[1],
                a[2] * b[0] - a[0] * b[2],
                a[0] * b[1] - a[1] * b[0]);
}

__device__ __forceinline__ real norm(Vec3 v) {
    return sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
}

__device__ __forceinline__ Vec3 normalized(Vec3 v) {
    real n = norm(v);
    if (n > 0.0) return vec3(v[0] / n, v[1] / n, v[2] / n);
    return vec3(0.0, 0.0, 1.0);
}

// Rust's f64::clamp.
__device__ __forceinline__ real clamp(real x, real lo, real hi) {
    if (x < lo) x = lo;
    if (x > hi) x = hi;
    return x;
}

// Row-major 3x3 matrix, as backend.rs's [[f64; 3]; 3].
struct Mat3 {
    real m[3][3];
};

__device__ __forceinline__ Vec3 mat_vec(const Mat3 &m, Vec3 v) {
    return vec3(m.m[0][0] * v[0] + m.m[0][1] * v[1] + m.m[0][2] * v[2],
                m.m[1][0] * v[0] + m.m[1][1] * v[1] + m.m[1][2] * v[2],
                m.m[2][0] * v[0] + m.m[2][1] * v[1] + m.m[2][2] * v[2]);
}

__device__ __forceinline__ Vec3 mat_t_vec(const Mat3 &m, Vec3 v) {
    return vec3(m.m[0][0] * v[0] + m.m[1][0] * v[1] + m.m[2][0] * v[2],
                m.m[0][1] * v[0] + m.m[1][1] * v[1] + m.m[2][1] * v[2],
                m.m[0][2] * v[0] + m.m[1][2] * v[1] + m.m[2][2] * v[2]);
}

// BodyState::rotation: the rotation of the unit quaternion (w, x, y, z).
__device__ Mat3 rotation(real w, real x, real y, real z) {
    Mat3 r;
    r.m[0][0] = 1.0 - 2.0 * (y * y + z * z);
    r.m[0][1] = 2.0 * (x * y - w * z);
    r.m[0][2] = 2.0 * (x * z + w * y);
    r.m[1][0] = 2.0 * (x * y + w * z);
    r.m[1][1] = 1.0 - 2.0 * (x * x + z * z);
    r.m[1][2] = 2.0 * (y * z - w * x);
    r.m[2][0] = 2.0 * (x * z - w * y);
    r.m[2][1] = 2.0 * (y * z + w * x);
    r.m[2][2] = 1.0 - 2.0 * (x * x + y * y);
    return r;
}

__device__ __forceinline__ Mat3 body_rotation(const HmBodies &b, i64 k) {
    return rotation(b.qw[k], b.qx[k], b.qy[k], b.qz[k]);
}

// ---- the law: law.rs, line by line ----

struct LawConstants {
    real e_star;
    real g_star;
    real damping;
    real rolling;
    real tangential;   // sqrt(4 G*/E*) = gamma_t / gamma_n
};

struct ContactInput {
    Vec3 normal;
    real overlap;
    real radius;
    real mass;
    real lever_a;
    real lever_b;
    Vec3 velocity_a;
    Vec3 velocity_b;
    Vec3 spin_a;
    Vec3 spin_b;
    real friction;
};

struct ContactOutput {
    Vec3 force;
    Vec3 torque_a;
    Vec3 torque_b;
    real normal;
};

__device__ __forceinline__ LawConstants law_of(const HmParams &p) {
    LawConstants law;
    law.e_star = p.e_star;
    law.g_star = p.g_star;
    law.damping = p.damping;
    law.rolling = p.rolling;
    law.tangential = sqrt(4.0 * p.g_star / p.e_star);   // law.rs tangential_damping_ratio
    return law;
}

// The Hertz-Mindlin force of one contact over a step of dt, updating its tangential spring
// `history` (law.rs documents every formula).
__device__ ContactOutput hertz_mindlin(const LawConstants &law, const ContactInput &c, real dt,
                                       Vec3 &history) {
    Vec3 n = c.normal;
    real root = sqrt(c.radius * c.overlap);
    real s_n = 2.0 * law.e_star * root;
    real s_t = 8.0 * law.g_star * root;
    real k_n = (2.0 / 3.0) * s_n;
    real gamma_n = law.damping * sqrt(s_n * c.mass);
    real gamma_t = gamma_n * law.tangential;

    // Contact-point relative velocity.
    Vec3 wa = cross(c.spin_a, n);
    Vec3 wb = cross(c.spin_b, n);
    Vec3 u = vec3(c.velocity_a[0] - c.velocity_b[0] - c.lever_a * wa[0] - c.lever_b * wb[0],
                  c.velocity_a[1] - c.velocity_b[1] - c.lever_a * wa[1] - c.lever_b * wb[1],
                  c.velocity_a[2] - c.velocity_b[2] - c.lever_a * wa[2] - c.lever_b * wb[2]);
    real u_n = dot(u, n);
    Vec3 u_t = vec3(u[0] - u_n * n[0], u[1] - u_n * n[1], u[2] - u_n * n[2]);
    real f_n = fmax(k_n * c.overlap - gamma_n * u_n, 0.0);

    // The spring, turned onto the current tangent plane with its length kept.
    Vec3 xi = history;
    real old = dot(xi, xi);
    if (old > 0.0) {
        real xn = dot(xi, n);
        xi = vec3(xi[0] - xn * n[0], xi[1] - xn * n[1], xi[2] - xn * n[2]);
        // s = 1 + e/2 to round-off for e = xn²/old ≤ 1e-8 (law.rs).
        real xn2 = xn * xn;
        real s;
        if (xn2 <= 1e-8 * old) {
            s = 1.0 + 0.5 * xn2 / old;
        } else {
            real new_ = dot(xi, xi);   // law.rs's `new` (a C++ keyword)
            s = new_ > 0.0 ? sqrt(old / new_) : 1.0;
        }
        xi = vec3(xi[0] * s, xi[1] * s, xi[2] * s);
    }
    xi = vec3(xi[0] + u_t[0] * dt,
              xi[1] + u_t[1] * dt,
              xi[2] + u_t[2] * dt);
    Vec3 f_t = vec3(-s_t * xi[0] - gamma_t * u_t[0],
                    -s_t * xi[1] - gamma_t * u_t[1],
                    -s_t * xi[2] - gamma_t * u_t[2]);
    real limit = c.friction * f_n;
    real ft2 = dot(f_t, f_t);
    if (ft2 > limit * limit) {
        real s = ft2 > 0.0 ? limit / sqrt(ft2) : 0.0;
        f_t = vec3(f_t[0] * s, f_t[1] * s, f_t[2] * s);
        if (s_t > 0.0) {
            real k = -1.0 / s_t;
            xi = vec3(f_t[0] * k, f_t[1] * k, f_t[2] * k);
        }
    }
    history = xi;

    Vec3 lever = cross(n, f_t);
    Vec3 torque_a = vec3(-c.lever_a * lever[0],
                         -c.lever_a * lever[1],
                         -c.lever_a * lever[2]);
    Vec3 torque_b = vec3(-c.lever_b * lever[0],
                         -c.lever_b * lever[1],
                         -c.lever_b * lever[2]);
    if (law.rolling > 0.0) {
        Vec3 w = vec3(c.spin_a[0] - c.spin_b[0],
                      c.spin_a[1] - c.spin_b[1],
                      c.spin_a[2] - c.spin_b[2]);
        real wn = sqrt(dot(w, w));
        if (wn > 0.0) {
            // Capped so that alone it cannot reverse the relative spin within the step.
            real stop = 0.2 * c.mass * c.radius * c.radius * wn / dt;
            real s = fmin(law.rolling * c.radius * f_n, stop) / wn;
            for (int i = 0; i < 3; ++i) {
                torque_a[i] -= s * w[i];
                torque_b[i] += s * w[i];
            }
        }
    }
    ContactOutput out;
    out.force = vec3(f_n * n[0] + f_t[0],
                     f_n * n[1] + f_t[1],
                     f_n * n[2] + f_t[2]);
    out.torque_a = torque_a;
    out.torque_b = torque_b;
    out.normal = f_n;
    return out;
}

// ---- bodies: hertz.rs's turn and world_solve ----

// q <- normalise(q + dt/2 (0, omega) (x) q): the orientation turned by omega over dt.
__device__ void turn(real q[4], Vec3 omega, real dt) {
    real w = q[0], x = q[1], y = q[2], z = q[3];
    real a = omega[0], b = omega[1], c = omega[2];
    real h = 0.5 * dt;
    real r[4] = {
        w - h * (a * x + b * y + c * z),
        x + h * (a * w + b * z - c * y),
        y + h * (b * w + c * x - a * z),
        z + h * (c * w + a * y - b * x),
    };
    real n = sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + r[3] * r[3]);
    q[0] = r[0] / n;
    q[1] = r[1] / n;
    q[2] = r[2] / n;
    q[3] = r[3] / n;
}

// I_w^-1 t for a body with principal moments `inertia` turned by `r`.
__device__ Vec3 world_solve(const Mat3 &r, Vec3 inertia, Vec3 t) {
    Vec3 local = mat_t_vec(r, t);
    return mat_vec(r, vec3(local[0] / inertia[0], local[1] / inertia[1], local[2] / inertia[2]));
}

__device__ __forceinline__ Vec3 gravity(const HmParams &p) {
    return vec3(p.gravity_x, p.gravity_y, p.gravity_z);
}

// ---- body surfaces: sdf.rs and mesh.rs's GridSdf ----

// +1 for non-negative x, -1 otherwise.
__device__ __forceinline__ real side(real x) {
    return x >= 0.0 ? 1.0 : -1.0;
}

__device__ Vec3 box_gradient(Vec3 p, const real *h) {
    Vec3 q = vec3(fabs(p[0]) - h[0], fabs(p[1]) - h[1], fabs(p[2]) - h[2]);
    if (q[0] > 0.0 || q[1] > 0.0 || q[2] > 0.0) {
        Vec3 g = vec3(fmax(q[0], 0.0) * side(p[0]),
                      fmax(q[1], 0.0) * side(p[1]),
                      fmax(q[2], 0.0) * side(p[2]));
        return normalized(g);
    }
    int axis = (q[0] >= q[1] && q[0] >= q[2]) ? 0 : (q[1] >= q[2] ? 1 : 2);
    Vec3 g = vec3(0.0, 0.0, 0.0);
    g[axis] = side(p[axis]);
    return g;
}

__device__ Vec3 cylinder_gradient(Vec3 p, real radius, real half_height) {
    real rho = sqrt(p[0] * p[0] + p[1] * p[1]);
    real radial0 = 1.0, radial1 = 0.0;
    if (rho > 0.0) {
        radial0 = p[0] / rho;
        radial1 = p[1] / rho;
    }
    real d0 = rho - radius, d1 = fabs(p[2]) - half_height;
    real gr, gz;
    if (d0 > 0.0 || d1 > 0.0) {
        real a = fmax(d0, 0.0), b = fmax(d1, 0.0);
        real n = sqrt(a * a + b * b);
        gr = a / n;
        gz = b / n;
    } else if (d0 >= d1) {
        gr = 1.0;
        gz = 0.0;
    } else {
        gr = 0.0;
        gz = 1.0;
    }
    return vec3(gr * radial0, gr * radial1, gz * side(p[2]));
}

struct Grid {
    Vec3 origin;
    real spacing;
    int dims[3];
    const real *values;
};

__device__ Grid grid_of(const HmBodies &b, i64 k) {
    Grid g;
    g.origin = vec3(b.grid_origin[3 * k], b.grid_origin[3 * k + 1], b.grid_origin[3 * k + 2]);
    g.spacing = b.grid_spacing[k];
    for (int a = 0; a < 3; ++a) g.dims[a] = b.grid_dims[3 * k + a];
    g.values = b.grid_values + b.grid_offset[k];
    return g;
}

__device__ __forceinline__ real grid_value(const Grid &g, i64 i, i64 j, i64 k) {
    return g.values[i + (i64)g.dims[0] * (j + (i64)g.dims[1] * k)];
}

__device__ __forceinline__ real lerp(real a, real b, real t) {
    return a + (b - a) * t;
}

// GridSdf::interpolate: trilinear value and gradient at a point inside the grid box.
__device__ real grid_interpolate(const Grid &g, Vec3 p, Vec3 *gradient) {
    i64 cell[3];
    real t[3];
    for (int a = 0; a < 3; ++a) {
        real x = (p[a] - g.origin[a]) / g.spacing;
        real f = fmax(floor(x), 0.0);
        i64 c = (i64)f;
        if (c > g.dims[a] - 2) c = g.dims[a] - 2;
        cell[a] = c;
        t[a] = clamp(x - (real)c, 0.0, 1.0);
    }
    i64 i = cell[0], j = cell[1], k = cell[2];
    real tx = t[0], ty = t[1], tz = t[2];
    real c000 = grid_value(g, i, j, k), c100 = grid_value(g, i + 1, j, k);
    real c010 = grid_value(g, i, j + 1, k), c110 = grid_value(g, i + 1, j + 1, k);
    real c001 = grid_value(g, i, j, k + 1), c101 = grid_value(g, i + 1, j, k + 1);
    real c011 = grid_value(g, i, j + 1, k + 1), c111 = grid_value(g, i + 1, j + 1, k + 1);
    real x00 = lerp(c000, c100, tx);
    real x10 = lerp(c010, c110, tx);
    real x01 = lerp(c001, c101, tx);
    real x11 = lerp(c011, c111, tx);
    real y0 = lerp(x00, x10, ty);
    real y1 = lerp(x01, x11, ty);
    real value = lerp(y0, y1, tz);
    real dx = lerp(lerp(c100 - c000, c110 - c010, ty), lerp(c101 - c001, c111 - c011, ty), tz);
    real dy = lerp(x10 - x00, x11 - x01, tz);
    real dz = y1 - y0;
    real h = g.spacing;
    *gradient = vec3(dx / h, dy / h, dz / h);
    return value;
}

__device__ Vec3 grid_clamp(const Grid &g, Vec3 p) {
    Vec3 q;
    for (int a = 0; a < 3; ++a) {
        real hi = g.origin[a] + (real)(g.dims[a] - 1) * g.spacing;
        q[a] = clamp(p[a], g.origin[a], hi);
    }
    return q;
}

// The body's signed distance at `local` (its frame).
__device__ real body_distance(const HmBodies &b, i64 k, Vec3 local) {
    int shape = b.shape[k];
    if (shape == SHAPE_GRID) {
        Grid g = grid_of(b, k);
        Vec3 q = grid_clamp(g, local);
        Vec3 unused;
        return norm(sub(local, q)) + grid_interpolate(g, q, &unused);
    }
    return body_sdf(shape, b.size + 3 * k, local[0], local[1], local[2]);
}

// The body's outward normal at `local` (its frame), as sdf.rs's gradients.
__device__ Vec3 body_gradient(const HmBodies &b, i64 k, Vec3 local) {
    const real *size = b.size + 3 * k;
    switch (b.shape[k]) {
    case SHAPE_PLANE: return vec3(0.0, 0.0, 1.0);
    case SHAPE_BOX: return box_gradient(local, size);
    case SHAPE_CYLINDER:
    case SHAPE_DISC: return cylinder_gradient(local, size[0], size[1]);
    default: break;
    }
    Grid g = grid_of(b, k);
    Vec3 q = grid_clamp(g, local);
    Vec3 grad;
    grid_interpolate(g, q, &grad);
    Vec3 away = sub(local, q);
    real d = norm(away);
    if (d > 0.0) {
        for (int a = 0; a < 3; ++a)
            if (away[a] != 0.0) grad[a] = away[a] / d;
    }
    return normalized(grad);
}

// Container::wall_contact: gap and normal of wall `wall`; false when it does not apply.
__device__ bool wall_contact(const HmParams &p, i64 wall, Vec3 x, real r, real *gap, Vec3 *normal) {
    if (wall == 0) {
        *gap = x[2] - r;
        *normal = vec3(0.0, 0.0, 1.0);
        return true;
    }
    if (p.container == CONTAINER_CYLINDER) {
        real rho = sqrt(x[0] * x[0] + x[1] * x[1]);
        if (rho <= 0.0) return false;
        *gap = p.container_a - rho - r;
        *normal = vec3(-x[0] / rho, -x[1] / rho, 0.0);
        return true;
    }
    real half_x = p.container_a, half_y = p.container_b;
    switch (wall) {
    case 1: *gap = half_x - x[0] - r; *normal = vec3(-1.0, 0.0, 0.0); break;
    case 2: *gap = half_x + x[0] - r; *normal = vec3(1.0, 0.0, 0.0); break;
    case 3: *gap = half_y - x[1] - r; *normal = vec3(0.0, -1.0, 0.0); break;
    default: *gap = half_y + x[1] - r; *normal = vec3(0.0, 1.0, 0.0); break;
    }
    return true;
}

// ---- 1. kick and drift ----

extern "C" __global__ void hm_kick_drift(HmParams p, HmGrains g, HmBodies b, BodyContacts bc,
                                         PairList list, PairList old, int flag) {
    i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= p.grains_per_scene * p.scenes) return;
    if (i == 0) g.counters[0] = 0;   // hm_displacement raises it next
    real dt = p.dt;
    real half = 0.5 * dt;
    Vec3 x = load3(g.x, g.y, g.z, i);
    Vec3 v = load3(g.vx, g.vy, g.vz, i);
    Vec3 w = load3(g.wx, g.wy, g.wz, i);
    Vec3 pv, pw;
    real mass = g.mass[i];
    if (mass > 0.0) {
        Vec3 dv = scale(load3(g.fx, g.fy, g.fz, i), half / mass);
        Vec3 dw = scale(load3(g.tx, g.ty, g.tz, i), half * g.inv_inertia[i]);
        v = add(v, dv);
        w = add(w, dw);
        pv = add(v, dv);
        pw = add(w, dw);
    } else {
        pv = v;
        pw = w;
    }
    x = add(x, scale(v, dt));
    store3(g.x, g.y, g.z, i, x);
    store3(g.vx, g.vy, g.vz, i, v);
    store3(g.wx, g.wy, g.wz, i, w);
    store3(g.pvx, g.pvy, g.pvz, i, pv);
    store3(g.pwx, g.pwy, g.pwz, i, pw);
}

// A dynamic body's force: the grains', the external one and its weight.
__device__ __forceinline__ Vec3 body_total_force(const HmParams &p, const HmBodies &b, i64 k) {
    return add(add(load3(b.fx, b.fy, b.fz, k), load3(b.efx, b.efy, b.efz, k)),
               scale(gravity(p), b.mass[k]));
}

__device__ __forceinline__ Vec3 body_spin_rate(const HmBodies &b, i64 k, const Mat3 &r) {
    Vec3 t = add(load3(b.tx, b.ty, b.tz, k), load3(b.etx, b.ety, b.etz, k));
    Vec3 inertia = vec3(b.inertia[3 * k], b.inertia[3 * k + 1], b.inertia[3 * k + 2]);
    return world_solve(r, inertia, t);
}

extern "C" __global__ void hm_body_kick_drift(HmParams p, HmGrains g, HmBodies b, BodyContacts bc,
                                              PairList list, PairList old, int flag) {
    i64 k = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= p.bodies_per_scene * p.scenes) return;
    real dt = p.dt;
    real half = 0.5 * dt;
    int motion = b.motion[k];
    Vec3 v = load3(b.vx, b.vy, b.vz, k);
    Vec3 omega = load3(b.ox, b.oy, b.oz, k);
    real mass = b.mass[k];
    Mat3 r = body_rotation(b, k);
    if (motion != MOTION_KINEMATIC) {
        Vec3 f = body_total_force(p, b, k);
        v = add(v, scale(f, half / mass));
        if (motion == MOTION_ROTATING) omega = add(omega, scale(body_spin_rate(b, k, r), half));
    }
    Vec3 dv = vec3(0.0, 0.0, 0.0), dw = vec3(0.0, 0.0, 0.0);
    if (motion != MOTION_KINEMATIC) {
        Vec3 f = body_total_force(p, b, k);
        if (motion == MOTION_ROTATING) dw = scale(body_spin_rate(b, k, r), half);
        dv = scale(f, half / mass);
    }
    store3(b.vx, b.vy, b.vz, k, v);
    store3(b.ox, b.oy, b.oz, k, omega);
    store3(b.pvx, b.pvy, b.pvz, k, add(v, dv));
    store3(b.pox, b.poy, b.poz, k, add(omega, dw));
    store3(b.px, b.py, b.pz, k, add(load3(b.px, b.py, b.pz, k), scale(v, dt)));
    if (motion != MOTION_DYNAMIC) {
        real q[4] = {b.qw[k], b.qx[k], b.qy[k], b.qz[k]};
        turn(q, omega, dt);
        b.qw[k] = q[0];
        b.qx[k] = q[1];
        b.qy[k] = q[2];
        b.qz[k] = q[3];
    }
}

// ---- 2. the rebuild test and the neighbour list ----

// max_i |x_i - x_ref,i|^2 into counters[0] (zeroed by hm_kick_drift), ignoring NaN as
// f64::max does.
extern "C" __global__ void hm_displacement(HmParams p, HmGrains g, HmBodies b, BodyContacts bc,
                                           PairList list, PairList old, int flag) {
    __shared__ real most[SCAN_THREADS];
    i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    real moved = 0.0;
    if (i < p.grains_per_scene * p.scenes) {
        Vec3 d = sub(load3(g.x, g.y, g.z, i), load3(g.rx, g.ry, g.rz, i));
        moved = fmax(moved, d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
    }
    most[threadIdx.x] = moved;
    __syncthreads();
    for (int half = SCAN_THREADS / 2; half > 0; half /= 2) {
        if (threadIdx.x < half) most[threadIdx.x] = fmax(most[threadIdx.x], most[threadIdx.x + half]);
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicMax(&g.counters[0], (u64)__double_as_longlong(most[0]));
}

// hertz.rs's cell_key: 21 bits per coordinate.
__device__ __forceinline__ u64 cell_key(int cx, int cy, int cz) {
    u64 m = (1ULL << 21) - 1;
    return ((u64)(i64)cx & m) | (((u64)(i64)cy & m) << 21) | (((u64)(i64)cz & m) << 42);
}

extern "C" __global__ void hm_hash_clear(HmParams p, HmGrains g, HmBodies b, BodyContacts bc,
                                         PairList list, PairList old, int flag) {
    i64 k = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (k < p.hash_table_size) g.table[k] = -1;
}

extern "C" __global__ void hm_hash_insert(HmParams p, HmGrains g, HmBodies b, BodyContacts bc,
                                          PairList list, PairList old, int flag) {
    i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    i64 n = p.grains_per_scene * p.scenes;
    if (i >= n) return;
    int cx = floor_cell(g.x[i], p.cell);
    int cy = floor_cell(g.y[i], p.cell);
    int cz = floor_cell(g.z[i], p.cell);
    g.cell[3 * i] = cx;
    g.cell[3 * i + 1] = cy;
    g.cell[3 * i + 2] = cz;
    g.key[i] = cell_key(cx, cy, cz);
    i64 bucket = hash_bucket(p.hash_table_size, i / p.grains_per_scene, cx, cy, cz);
    g.next[i] = atomicExch(&g.table[bucket], (int)i);
    // the counts the next kernel adds up
    g.partner_start[i] = 0;
    g.partner_fill[i] = 0;
    if (i == 0) {
        g.partner_start[n] = 0;
        g.pair_start[n] = 0;
    }
}

// Calls visit(b) for every grain b > a of a's scene with |x_a - x_b| < r_a + r_b + skin,
// in the 27 cells around a's (in hash order: callers sort what they keep).
template <typename Visit>
__device__ void for_each_neighbour(const HmParams &p, const HmGrains &g, i64 a, Visit visit) {
    i64 scene = a / p.grains_per_scene;
    Vec3 xa = load3(g.x, g.y, g.z, a);
    real ra = g.radius[a];
    int ca0 = g.cell[3 * a], ca1 = g.cell[3 * a + 1], ca2 = g.cell[3 * a + 2];
    for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
    for (int dx = -1; dx <= 1; ++dx) {
        int c0 = ca0 + dx, c1 = ca1 + dy, c2 = ca2 + dz;
        u64 key = cell_key(c0, c1, c2);
        i64 bucket = hash_bucket(p.hash_table_size, scene, c0, c1, c2);
        for (int j = g.table[bucket]; j >= 0; j = g.next[j]) {
            if ((i64)j <= a || g.key[j] != key || j / p.grains_per_scene != scene) continue;
            Vec3 d = sub(xa, load3(g.x, g.y, g.z, j));
            real reach = ra + g.radius[j] + p.skin;
            if (d[0] * d[0] + d[1] * d[1] + d[2] * d[2] < reach * reach) visit(j);
        }
    }
}

// pair_start[a] = a's pair count, partner_start[b] += 1 per pair: the scans make them starts.
extern "C" __global__ void hm_count_pairs(HmParams p, HmGrains g, HmBodies b, BodyContacts bc,
                                          PairList list, PairList old, int flag) {
    i64 a = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (a >= p.grains_per_scene * p.scenes) return;
    u64 count = 0;
    for_each_neighbour(p, g, a, [&](int j) {
        ++count;
        atomicAdd(&g.partner_start[j], 1ULL);
    });
    g.pair_start[a] = count;
}

// Exclusive prefix sum in place over the n + 1 entries of pair_start (flag 0) or
// partner_start (flag 1), whose last entry is 0 and so becomes the total. Three kernels:
// each block scans its SCAN_THREADS entries and writes its total to scan_sums; one block scans
// the totals; each block adds its offset. Integer sums: exact in any order.
__device__ __forceinline__ u64 *scanned(const HmGrains &g, int flag) {
    return flag ? g.partner_start : g.pair_start;
}

// Inclusive scan of one value per thread across a block of SCAN_THREADS.
__device__ u64 block_inclusive_scan(u64 value, u64 *shared) {
    shared[threadIdx.x] = value;
    __syncthreads();
    for (int offset = 1; offset < SCAN_THREADS; offset *= 2) {
        u64 add = threadIdx.x >= offset ? shared[threadIdx.x - offset] : 0;
        __syncthreads();
        shared[threadIdx.x] += add;
        __syncthreads();
    }
    return shared[threadIdx.x];
}

extern "C" __global__ void hm_scan_blocks(HmParams p, HmGrains g, HmBodies b, BodyContacts bc,
                                          PairList list, PairList old, int flag) {
    __shared__ u64 shared[SCAN_THREADS];
    u64 *values = scanned(g, flag);
    i64 entries = p.grains_per_scene * p.scenes + 1;
    i64 i = (i64)blockIdx.x * SCAN_THREADS + threadIdx.x;
    u64 value = i < entries ? values[i] : 0;
    u64 inclusive = block_inclusive_scan(value, shared);
    if (i < entries) values[i] = inclusive - value;
    if (threadIdx.x == SCAN_THREADS - 1) g.scan_sums[blockIdx.x] = inclusive;
}

// One block: thread t owns a run of consecutive block totals.
extern "C" __global__ void hm_scan_sums(HmParams p, HmGrains g, HmBodies b, BodyContacts bc,
                                        PairList list, PairList old, int flag) {
    __shared__ u64 shared[SCAN_THREADS];
    i64 entries = p.grains_per_scene * p.scenes + 1;
    i64 blocks = (entries + SCAN_THREADS - 1) / SCAN_THREADS;
    i64 run = (blocks + SCAN_THREADS - 1) / SCAN_THREADS;
    i64 first = threadIdx.x * run;
    i64 last = first + run < blocks ? first + run : blocks;
    u64 total = 0;
    for (i64 k = first; k < last; ++k) total += g.scan_sums[k];
    u64 running = block_inclusive_scan(total, shared) - total;
    for (i64 k = first; k < last; ++k) {
        u64 value = g.scan_sums[k];
        g.scan_sums[k] = running;
        running += value;
    }
}

extern "C" __global__ void hm_scan_add(HmParams p, HmGrains g, HmBodies b, BodyContacts bc,
                                       PairList list, PairList old, int flag) {
    u64 *values = scanned(g, flag);
    i64 entries = p.grains_per_scene * p.scenes + 1;
    i64 i = (i64)blockIdx.x * SCAN_THREADS + threadIdx.x;
    if (i < entries) values[i] += g.scan_sums[blockIdx.x];
}

// Grain a's pairs, sorted by b; each keeps its spring from the old list (both sorted by b);
// each takes a slot in b's partner list. The positions become the reference of the next
// rebuild test.
extern "C" __global__ void hm_fill_pairs(HmParams p, HmGrains g, HmBodies b, BodyContacts bc,
                                         PairList list, PairList old, int flag) {
    i64 a = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (a >= p.grains_per_scene * p.scenes) return;
    u64 first = g.pair_start[a];
    u64 count = 0;
    for_each_neighbour(p, g, a, [&](int j) {
        list.b[first + count] = j;
        ++count;
    });
    for (u64 k = 1; k < count; ++k) {
        int value = list.b[first + k];
        u64 s = k;
        while (s > 0 && list.b[first + s - 1] > value) {
            list.b[first + s] = list.b[first + s - 1];
            --s;
        }
        list.b[first + s] = value;
    }
    u64 o = g.old_pair_start[a], end = g.old_pair_start[a + 1];
    for (u64 k = 0; k < count; ++k) {
        u64 pair = first + k;
        int partner = list.b[pair];
        while (o < end && old.b[o] < partner) ++o;
        if (o < end && old.b[o] == partner) {
            list.sx[pair] = old.sx[o];
            list.sy[pair] = old.sy[o];
            list.sz[pair] = old.sz[o];
        } else {
            list.sx[pair] = 0.0;
            list.sy[pair] = 0.0;
            list.sz[pair] = 0.0;
        }
        list.a[pair] = (int)a;
        int slot = atomicAdd(&g.partner_fill[partner], 1);
        list.partner[g.partner_start[partner] + slot] = pair;
    }
    g.rx[a] = g.x[a];
    g.ry[a] = g.y[a];
    g.rz[a] = g.z[a];
}

// Partner lists arrive in any order; sorted, they are hertz.rs's (pair order).
extern "C" __global__ void hm_sort_partners(HmParams p, HmGrains g, HmBodies b, BodyContacts bc,
                                            PairList list, PairList old, int flag) {
    i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= p.grains_per_scene * p.scenes) return;
    u64 first = g.partner_start[i], end = g.partner_start[i + 1];
    for (u64 k = first + 1; k < end; ++k) {
        u64 value = list.partner[k];
        u64 s = k;
        while (s > first && list.partner[s - 1] > value) {
            list.partner[s] = list.partner[s - 1];
            --s;
        }
        list.partner[s] = value;
    }
}

// ---- 3. pair forces: one thread per listed pair ----

extern "C" __global__ void hm_pair_forces(HmParams p, HmGrains g, HmBodies b, BodyContacts bc,
                                          PairList list, PairList old, int flag) {
    i64 pair = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (pair >= p.pairs) return;
    i64 a = list.a[pair], bi = list.b[pair];
    Vec3 xa = load3(g.x, g.y, g.z, a), xb = load3(g.x, g.y, g.z, bi);
    real ra = g.radius[a], rb = g.radius[bi];
    Vec3 d = sub(xa, xb);
    real dist2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
    real reach = ra + rb;
    Vec3 zero = vec3(0.0, 0.0, 0.0);
    bool touching = !(dist2 >= reach * reach || dist2 == 0.0);
    // Touching pairs, counted as hertz.rs's `touching` (one atomic per warp).
    unsigned active = __activemask();
    unsigned votes = __ballot_sync(active, touching);
    if ((int)(threadIdx.x & 31) == __ffs(active) - 1 && votes != 0)
        atomicAdd(&g.counters[1], (u64)__popc(votes));
    if (!touching) {
        store3(list.sx, list.sy, list.sz, pair, zero);
        store3(list.fx, list.fy, list.fz, pair, zero);
        store3(list.tax, list.tay, list.taz, pair, zero);
        store3(list.tbx, list.tby, list.tbz, pair, zero);
        return;
    }
    real dist = sqrt(dist2);
    real overlap = reach - dist;
    real ma = g.mass[a], mb = g.mass[bi];
    real m = (ma > 0.0 && mb > 0.0) ? ma * mb / (ma + mb) : fmax(ma, mb);
    ContactInput c;
    c.normal = scale(d, 1.0 / dist);
    c.overlap = overlap;
    c.radius = ra * rb / reach;
    c.mass = m;
    c.lever_a = ra - 0.5 * overlap;
    c.lever_b = rb - 0.5 * overlap;
    c.velocity_a = load3(g.pvx, g.pvy, g.pvz, a);
    c.velocity_b = load3(g.pvx, g.pvy, g.pvz, bi);
    c.spin_a = load3(g.pwx, g.pwy, g.pwz, a);
    c.spin_b = load3(g.pwx, g.pwy, g.pwz, bi);
    c.friction = p.friction;
    LawConstants law = law_of(p);
    Vec3 spring = load3(list.sx, list.sy, list.sz, pair);
    ContactOutput f = hertz_mindlin(law, c, p.dt, spring);
    store3(list.sx, list.sy, list.sz, pair, spring);
    store3(list.fx, list.fy, list.fz, pair, f.force);
    store3(list.tax, list.tay, list.taz, pair, f.torque_a);
    store3(list.tbx, list.tby, list.tbz, pair, f.torque_b);
}

// ---- 4. the gather: one thread per grain, in hertz.rs's order ----

// Grain i (of its scene, `local`) against body k: hertz.rs's body pass for one grain. Writes
// the contact's row entry and returns nothing; the gather reads the entry back.
__device__ void body_contact(const HmParams &p, const HmGrains &g, const HmBodies &b,
                             const BodyContacts &bc, const LawConstants &law, i64 i, i64 k,
                             i64 row) {
    Vec3 zero = vec3(0.0, 0.0, 0.0);
    store3(bc.fx, bc.fy, bc.fz, row, zero);
    store3(bc.tx, bc.ty, bc.tz, row, zero);
    bc.touching[row] = 0;
    Vec3 o = load3(b.px, b.py, b.pz, k);
    Vec3 x = load3(g.x, g.y, g.z, i);
    real r = g.radius[i];
    real reach = b.reach[k];
    Vec3 rel = sub(x, o);
    if (rel[0] * rel[0] + rel[1] * rel[1] + rel[2] * rel[2] > (reach + r) * (reach + r)) {
        store3(bc.sx, bc.sy, bc.sz, row, zero);
        return;
    }
    Mat3 rot = body_rotation(b, k);
    Vec3 local = mat_t_vec(rot, rel);
    real gap = body_distance(b, k, local) - r;
    if (gap >= 0.0) {
        store3(bc.sx, bc.sy, bc.sz, row, zero);
        return;
    }
    Vec3 normal = mat_vec(rot, body_gradient(b, k, local));
    real overlap = -gap;
    real lever = r - 0.5 * overlap;
    Vec3 point = sub(x, scale(normal, lever));
    Vec3 arm = sub(point, o);
    Vec3 v_body = load3(b.pvx, b.pvy, b.pvz, k), w_body = load3(b.pox, b.poy, b.poz, k);
    Vec3 vb = add(v_body, cross(w_body, arm));
    ContactInput c;
    c.normal = normal;
    c.overlap = overlap;
    c.radius = r;
    c.mass = g.mass[i];
    c.lever_a = lever;
    c.lever_b = 0.0;
    c.velocity_a = load3(g.pvx, g.pvy, g.pvz, i);
    c.velocity_b = vb;
    c.spin_a = load3(g.pwx, g.pwy, g.pwz, i);
    c.spin_b = zero;
    c.friction = b.friction[k];
    Vec3 spring = load3(bc.sx, bc.sy, bc.sz, row);
    ContactOutput f = hertz_mindlin(law, c, p.dt, spring);
    store3(bc.sx, bc.sy, bc.sz, row, spring);
    store3(bc.fx, bc.fy, bc.fz, row, f.force);
    store3(bc.tx, bc.ty, bc.tz, row, f.torque_a);
    bc.touching[row] = f.normal > 0.0;
}

// F_i = m_i g + own pairs + partner pairs + walls + bodies; T_i likewise.
extern "C" __global__ void hm_gather(HmParams p, HmGrains g, HmBodies b, BodyContacts bc,
                                     PairList list, PairList old, int flag) {
    i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= p.grains_per_scene * p.scenes) return;
    LawConstants law = law_of(p);
    real mass = g.mass[i];
    Vec3 force = scale(gravity(p), mass);
    Vec3 torque = vec3(0.0, 0.0, 0.0);
    for (u64 q = g.pair_start[i]; q < g.pair_start[i + 1]; ++q) {
        force = add(force, load3(list.fx, list.fy, list.fz, q));
        torque = add(torque, load3(list.tax, list.tay, list.taz, q));
    }
    for (u64 q = g.partner_start[i]; q < g.partner_start[i + 1]; ++q) {
        u64 pair = list.partner[q];
        force = sub(force, load3(list.fx, list.fy, list.fz, pair));
        torque = add(torque, load3(list.tbx, list.tby, list.tbz, pair));
    }
    Vec3 x = load3(g.x, g.y, g.z, i);
    real r = g.radius[i];
    for (i64 wall = 0; wall < p.walls; ++wall) {
        i64 slot = i * p.walls + wall;
        real gap;
        Vec3 normal;
        if (wall_contact(p, wall, x, r, &gap, &normal) && gap < 0.0) {
            real overlap = -gap;
            ContactInput c;
            c.normal = normal;
            c.overlap = overlap;
            c.radius = r;
            c.mass = mass;
            c.lever_a = r - 0.5 * overlap;
            c.lever_b = 0.0;
            c.velocity_a = load3(g.pvx, g.pvy, g.pvz, i);
            c.velocity_b = vec3(0.0, 0.0, 0.0);
            c.spin_a = load3(g.pwx, g.pwy, g.pwz, i);
            c.spin_b = vec3(0.0, 0.0, 0.0);
            c.friction = p.wall_friction;
            Vec3 spring = load3(g.wall_sx, g.wall_sy, g.wall_sz, slot);
            ContactOutput o = hertz_mindlin(law, c, p.dt, spring);
            store3(g.wall_sx, g.wall_sy, g.wall_sz, slot, spring);
            force = add(force, o.force);
            torque = add(torque, o.torque_a);
        } else {
            store3(g.wall_sx, g.wall_sy, g.wall_sz, slot, vec3(0.0, 0.0, 0.0));
        }
    }
    i64 scene = i / p.grains_per_scene, local = i % p.grains_per_scene;
    for (i64 k = 0; k < p.bodies_per_scene; ++k) {
        i64 body = scene * p.bodies_per_scene + k;
        i64 row = body * p.grains_per_scene + local;
        body_contact(p, g, b, bc, law, i, body, row);
        force = add(force, load3(bc.fx, bc.fy, bc.fz, row));
        torque = add(torque, load3(bc.tx, bc.ty, bc.tz, row));
    }
    store3(g.fx, g.fy, g.fz, i, force);
    store3(g.tx, g.ty, g.tz, i, torque);
}

// ---- body sums: the grains' force on each body and its torque about the origin ----

// Grid (BODY_BLOCKS, bodies), GATHER_THREADS threads: each block a fixed stride of the
// scene's grains, reduced in a fixed tree. Sums: force (3), torque (3), touching grains.
extern "C" __global__ void hm_body_partials(HmParams p, HmGrains g, HmBodies b, BodyContacts bc,
                                            PairList list, PairList old, int flag) {
    __shared__ real sum[HM_BODY_SUMS][GATHER_THREADS];
    i64 body = blockIdx.y;
    i64 scene = body / p.bodies_per_scene;
    Vec3 o = load3(b.px, b.py, b.pz, body);
    real acc[HM_BODY_SUMS];
    for (int q = 0; q < HM_BODY_SUMS; ++q) acc[q] = 0.0;
    i64 stride = (i64)BODY_BLOCKS * GATHER_THREADS;
    for (i64 local = (i64)blockIdx.x * GATHER_THREADS + threadIdx.x; local < p.grains_per_scene;
         local += stride) {
        i64 row = body * p.grains_per_scene + local;
        Vec3 f = load3(bc.fx, bc.fy, bc.fz, row);
        int touching = bc.touching[row];
        if (!touching && f[0] == 0.0 && f[1] == 0.0 && f[2] == 0.0) continue;
        Vec3 x = load3(g.x, g.y, g.z, scene * p.grains_per_scene + local);
        Vec3 on_body = scale(f, -1.0);
        Vec3 arm = sub(x, o);
        Vec3 tau = add(cross(arm, on_body), scale(load3(bc.tx, bc.ty, bc.tz, row), -1.0));
        for (int q = 0; q < 3; ++q) {
            acc[q] += on_body[q];
            acc[3 + q] += tau[q];
        }
        acc[6] += touching ? 1.0 : 0.0;
    }
    for (int q = 0; q < HM_BODY_SUMS; ++q) sum[q][threadIdx.x] = acc[q];
    __syncthreads();
    for (int half = GATHER_THREADS / 2; half > 0; half /= 2) {
        if (threadIdx.x < half)
            for (int q = 0; q < HM_BODY_SUMS; ++q) sum[q][threadIdx.x] += sum[q][threadIdx.x + half];
        __syncthreads();
    }
    if (threadIdx.x < HM_BODY_SUMS)
        b.partial[(body * BODY_BLOCKS + blockIdx.x) * HM_BODY_SUMS + threadIdx.x] = sum[threadIdx.x][0];
}

// One thread per body adds the partials in block order. With flag (a step, not the upload):
// counts the contacts and, for a dynamic body, the closing half-kick.
extern "C" __global__ void hm_body_totals(HmParams p, HmGrains g, HmBodies b, BodyContacts bc,
                                          PairList list, PairList old, int flag) {
    i64 k = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= p.scenes * p.bodies_per_scene) return;
    real total[HM_BODY_SUMS];
    for (int q = 0; q < HM_BODY_SUMS; ++q) total[q] = 0.0;
    for (int block = 0; block < BODY_BLOCKS; ++block)
        for (int q = 0; q < HM_BODY_SUMS; ++q)
            total[q] += b.partial[(k * BODY_BLOCKS + block) * HM_BODY_SUMS + q];
    store3(b.fx, b.fy, b.fz, k, vec3(total[0], total[1], total[2]));
    store3(b.tx, b.ty, b.tz, k, vec3(total[3], total[4], total[5]));
    b.contacts[k] = total[6];
    if (!flag) return;
    int motion = b.motion[k];
    if (motion == MOTION_KINEMATIC) return;
    real half = 0.5 * p.dt;
    Vec3 f = body_total_force(p, b, k);
    store3(b.vx, b.vy, b.vz, k, add(load3(b.vx, b.vy, b.vz, k), scale(f, half / b.mass[k])));
    if (motion == MOTION_ROTATING) {
        Mat3 r = body_rotation(b, k);
        store3(b.ox, b.oy, b.oz, k,
               add(load3(b.ox, b.oy, b.oz, k), scale(body_spin_rate(b, k, r), half)));
    }
}

// ---- 5. the closing kick ----

extern "C" __global__ void hm_kick(HmParams p, HmGrains g, HmBodies b, BodyContacts bc,
                                   PairList list, PairList old, int flag) {
    i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= p.grains_per_scene * p.scenes) return;
    real mass = g.mass[i];
    if (!(mass > 0.0)) return;
    real half = 0.5 * p.dt;
    store3(g.vx, g.vy, g.vz, i,
           add(load3(g.vx, g.vy, g.vz, i), scale(load3(g.fx, g.fy, g.fz, i), half / mass)));
    store3(g.wx, g.wy, g.wz, i,
           add(load3(g.wx, g.wy, g.wz, i), scale(load3(g.tx, g.ty, g.tz, i), half * g.inv_inertia[i])));
}
