// Shared declarations of loam's DEM kernels. NVRTC compiles this file followed by the
// stage files of the projected-Jacobi step (hash.cu, contacts.cu, impulses.cu, integrate.cu)
// and the Hertz-Mindlin step (hertz.cu) as one program, so there are no #include directives
// and no headers from a CUDA toolkit.
//
// Memory layout: structure of arrays, one entry per grain of every scene. Scene s owns grains
// [s * grains_per_scene, (s + 1) * grains_per_scene) and bodies [s * bodies_per_scene, ...).
// The two structs below are passed by value and mirror #[repr(C)] structs in cuda.rs field
// for field; every field is 8 bytes wide so neither side adds padding.

typedef double real;
typedef long long i64;
typedef unsigned long long u64;

// Slots per grain: grain-grain contacts the grain owns (partner index > own index), contacts
// it is the partner of, and contacts with walls and bodies.
#define PAIR_SLOTS 16
#define REVERSE_SLOTS 16
#define EXTERNAL_SLOTS 8
// External contact keys, in the CPU backend's order: wall j has key j (the floor is wall 0;
// a box's sides are +x, -x, +y, -y; a cylinder's side is wall 1), body k has key walls + k.
// counters[0] collects these bits when a slot list was full and a contact was dropped.
#define OVERFLOW_PAIR 1ULL
#define OVERFLOW_REVERSE 2ULL
#define OVERFLOW_EXTERNAL 4ULL

#define CONTAINER_CYLINDER 0
#define CONTAINER_BOX 1

#define SHAPE_PLANE 0
#define SHAPE_BOX 1
#define SHAPE_CYLINDER 2
#define SHAPE_DISC 3

// Body reductions: BODY_BLOCKS blocks of GATHER_THREADS threads per body write partial sums
// (BODY_SUMS numbers each), which one thread per body then adds in a fixed order.
#define GATHER_THREADS 256
#define BODY_BLOCKS 32
#define BODY_SUMS 8

struct Params {
    i64 grains_per_scene;
    i64 scenes;
    i64 bodies_per_scene;
    i64 hash_table_size;
    i64 container;          // CONTAINER_*; the floor is z = 0
    i64 walls;              // walls of the container, floor included
    real container_a;       // cylinder: radius; box: half extent in x
    real container_b;       // box: half extent in y
    real gravity_x, gravity_y, gravity_z;
    real dt;
    real friction;          // grain-grain Coulomb coefficient
    real wall_friction;     // grain-wall Coulomb coefficient
    real stabilisation;     // alpha: the split-impulse pass removes alpha (psi + slop) a step
    real relaxation;        // omega
    real max_radius;        // r_max, the largest grain radius
    real margin_fraction;   // the configured speculative margin, a fraction of r_max
    real overlap_slop;      // overlap the stabilisation leaves alone (a length)
};

struct Grains {
    real *x, *y, *z;                 // position
    real *vx, *vy, *vz;              // velocity at the start of the step, then at its end
    real *wx, *wy, *wz;              // velocity iterate of the Jacobi sweeps
    real *fx, *fy, *fz;              // predicted velocity (v + dt g)
    real *radius;
    real *inv_mass;
    int *cell;                       // 3 ints per grain: its hash cell
    int *next;                       // linked cells: the next grain in the same bucket
    int *table;                      // hash_table_size bucket heads (-1: empty)
    int *degree;                     // n_i: contacts grain i is in (mass splitting)
    // Grain-grain contacts owned by grain i: slots [i * PAIR_SLOTS, ...), sorted by partner.
    int *pair_count;
    int *pair_partner;
    real *pair_nx, *pair_ny, *pair_nz;   // unit normal from the partner to the owner
    real *pair_psi;                      // gap (< 0: overlap)
    real *pair_lx, *pair_ly, *pair_lz;   // impulse on the owner (the partner gets minus it)
    // The same lists from the previous step, read for warm starts.
    int *prev_pair_count;
    int *prev_pair_partner;
    real *prev_pair_lx, *prev_pair_ly, *prev_pair_lz;
    // Contacts grain j is the partner of: pair slot indices, sorted.
    int *reverse_count;
    int *reverse_slot;
    // Grain-wall and grain-body contacts: slots [i * EXTERNAL_SLOTS, ...), sorted by key.
    int *ext_count;
    int *ext_key;
    real *ext_nx, *ext_ny, *ext_nz;      // unit normal pointing to the grain's side
    real *ext_psi;
    real *ext_lx, *ext_ly, *ext_lz;      // impulse on the grain (a body gets minus it)
    int *prev_ext_count;
    int *prev_ext_key;
    real *prev_ext_lx, *prev_ext_ly, *prev_ext_lz;
    // The split-impulse pass (split.cu): a grain's contacts overlapping beyond the slop, its
    // pseudo-velocity, and the pseudo-impulse of each owned pair and wall or body contact.
    int *deep_degree;
    real *qx, *qy, *qz;
    real *pair_k;
    real *ext_k;
    // [0]: overflow bits; [1]: contacts summed over steps; [2]: this step's largest |v*|^2
    // (as the bits of a non-negative double, which order like the numbers)
    u64 *counters;
};

// Rigid bodies, bodies_per_scene per scene; they translate only. inv_mass 0: kinematic (moves
// with the velocity the host sets). Otherwise dynamic: gravity, the host's external force and
// the grains' impulses.
struct Bodies {
    int *shape;                      // SHAPE_*
    real *size;                      // 3 per body: box half extents; cylinder/disc (radius, half height, 0)
    real *friction;                  // grain-body Coulomb coefficient
    real *px, *py, *pz;              // origin of the body frame (parallel to the world frame)
    real *vx, *vy, *vz;              // velocity
    real *wx, *wy, *wz;              // velocity iterate
    real *fx, *fy, *fz;              // predicted velocity
    real *ext_fx, *ext_fy, *ext_fz;  // external force besides gravity (host-set)
    real *inv_mass;
    real *degree;                    // n_k: contacts on the body (mass splitting)
    real *partial;                   // BODY_BLOCKS * BODY_SUMS per body
    // Over the last step: the grains' impulse on the body, its moment about the origin, and
    // the number of contacts with a non-zero impulse.
    real *impulse_x, *impulse_y, *impulse_z;
    real *moment_x, *moment_y, *moment_z;
    real *touching;
    // The split-impulse pass: the body's pseudo-velocity and its contacts overlapping beyond
    // the slop.
    real *qx, *qy, *qz;
    real *deep_degree;
};

__device__ __forceinline__ i64 scene_of_grain(const Params &p, i64 g) {
    return g / p.grains_per_scene;
}

// This step's speculative margin delta = min(2 r_max, max(fraction r_max, 2 dt max|v*|)):
// grains that can meet within the step are in the list before they touch.
__device__ __forceinline__ real step_margin(const Params &p, const u64 *counters) {
    real fastest = sqrt(__longlong_as_double((long long)counters[2]));
    return fmin(2.0 * p.max_radius, fmax(p.margin_fraction * p.max_radius, 2.0 * p.dt * fastest));
}

__device__ __forceinline__ real cell_size(const Params &p, const u64 *counters) {
    return 2.0 * p.max_radius + step_margin(p, counters);
}

__device__ __forceinline__ int floor_cell(real v, real cell) {
    return (int)floor(v / cell);
}

// Bucket of a cell in a scene. Different cells (or scenes) may share a bucket; readers check
// a grain's stored cell, so a shared bucket costs time, never a duplicate contact.
__device__ __forceinline__ i64 hash_bucket(i64 table_size, i64 scene, int cx, int cy, int cz) {
    unsigned long long h = (unsigned long long)(unsigned int)cx * 73856093ULL;
    h ^= (unsigned long long)(unsigned int)cy * 19349663ULL;
    h ^= (unsigned long long)(unsigned int)cz * 83492791ULL;
    h ^= (unsigned long long)scene * 2654435761ULL;
    return (i64)(h % (unsigned long long)table_size);
}

__device__ __forceinline__ i64 bucket_of(const Params &p, i64 scene, int cx, int cy, int cz) {
    return hash_bucket(p.hash_table_size, scene, cx, cy, cz);
}

__device__ __forceinline__ real sdf_box(real qx, real qy, real qz, const real *h) {
    real dx = fabs(qx) - h[0], dy = fabs(qy) - h[1], dz = fabs(qz) - h[2];
    real ox = fmax(dx, 0.0), oy = fmax(dy, 0.0), oz = fmax(dz, 0.0);
    return sqrt(ox * ox + oy * oy + oz * oz) + fmin(fmax(dx, fmax(dy, dz)), 0.0);
}

__device__ __forceinline__ real sdf_cylinder(real qx, real qy, real qz, real radius, real half_height) {
    real d0 = sqrt(qx * qx + qy * qy) - radius;
    real d1 = fabs(qz) - half_height;
    real o0 = fmax(d0, 0.0), o1 = fmax(d1, 0.0);
    return sqrt(o0 * o0 + o1 * o1) + fmin(fmax(d0, d1), 0.0);
}

// Signed distance in the body frame, the same fields as sdf.rs (Shape::distance).
__device__ real body_sdf(i64 shape, const real *size, real qx, real qy, real qz) {
    switch (shape) {
    case SHAPE_PLANE: return qz;
    case SHAPE_BOX: return sdf_box(qx, qy, qz, size);
    case SHAPE_CYLINDER:
    case SHAPE_DISC: return sdf_cylinder(qx, qy, qz, size[0], size[1]);
    default: return 1e30;
    }
}
