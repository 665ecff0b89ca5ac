// Stage 1: spatial hash. Linked cells in preallocated arrays: each bucket holds the index of
// one grain, each grain the index of the next grain in its bucket. Insertion is one atomic
// exchange per grain (lock-free); the order within a bucket varies from run to run, which is
// why the contact stage sorts what it finds.

extern "C" __global__ void hash_clear(Params p, Grains g) {
    i64 b = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (b < p.hash_table_size) g.table[b] = -1;
    if (b == 0) g.counters[2] = 0;   // predict_grains raises it to this step's max |v*|^2
}

extern "C" __global__ void hash_insert(Params p, Grains g) {
    i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    i64 n = p.grains_per_scene * p.scenes;
    if (i >= n) return;
    real h = cell_size(p, g.counters);
    int cx = floor_cell(g.x[i], h);
    int cy = floor_cell(g.y[i], h);
    int cz = floor_cell(g.z[i], h);
    g.cell[3 * i] = cx;
    g.cell[3 * i + 1] = cy;
    g.cell[3 * i + 2] = cz;
    i64 b = bucket_of(p, scene_of_grain(p, i), cx, cy, cz);
    g.next[i] = atomicExch(&g.table[b], (int)i);
    g.reverse_count[i] = 0;
}
