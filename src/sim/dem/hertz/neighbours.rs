//! [`HertzCpu`]'s Verlet neighbour list, springs carried over, and the partner lists.

use rayon::prelude::*;

use super::{sub, HertzCpu, PairOut, GRAIN_CHUNK};
use crate::sim::dem::cpu::{cell_key, cell_of, hash};
use crate::sim::dem::sdf::Vec3;

impl HertzCpu {
    /// Rebuilds the pair list (every a < b within r_a + r_b + skin), carrying each surviving
    /// pair's spring over, and the partner lists.
    pub(super) fn build_neighbours(&mut self) {
        self.builds += 1;
        let n = self.grains.len();
        let h = 2.0 * self.max_radius + self.skin;
        let table = (2 * n).max(64).next_power_of_two();
        let mask = (table - 1) as u64;
        let positions = &self.grains.position;
        let radius = &self.grains.radius;
        let keys: Vec<(u64, u32)> = positions
            .par_iter()
            .with_min_len(GRAIN_CHUNK)
            .map(|x| {
                let c = cell_of(*x, h);
                (cell_key(c), (hash(c) & mask) as u32)
            })
            .collect();
        let mut cell_start = vec![0u32; table + 1];
        for (_, b) in &keys {
            cell_start[*b as usize + 1] += 1;
        }
        for k in 0..table {
            cell_start[k + 1] += cell_start[k];
        }
        let mut fill = cell_start[..table].to_vec();
        let mut sorted = vec![0u32; n];
        for (i, (_, b)) in keys.iter().enumerate() {
            sorted[fill[*b as usize] as usize] = i as u32;
            fill[*b as usize] += 1;
        }
        let skin = self.skin;
        let old_start = std::mem::take(&mut self.pair_start);
        let old_b = std::mem::take(&mut self.pair_b);
        let old_spring = std::mem::take(&mut self.pair_spring);
        let has_old = old_start.len() == n + 1;
        let blocks: Vec<(Vec<u32>, Vec<Vec3>, Vec<u32>)> = (0..n.div_ceil(GRAIN_CHUNK))
            .into_par_iter()
            .map(|block| {
                let mut partners = Vec::with_capacity(GRAIN_CHUNK * 8);
                let mut springs = Vec::with_capacity(GRAIN_CHUNK * 8);
                let mut counts = Vec::with_capacity(GRAIN_CHUNK);
                let start = block * GRAIN_CHUNK;
                for a in start..(start + GRAIN_CHUNK).min(n) {
                    let first = partners.len();
                    let xa = positions[a];
                    let ra = radius[a];
                    let ca = cell_of(xa, h);
                    for dz in -1..=1 {
                        for dy in -1..=1 {
                            for dx in -1..=1 {
                                let c = [ca[0] + dx, ca[1] + dy, ca[2] + dz];
                                let key = cell_key(c);
                                let bucket = (hash(c) & mask) as usize;
                                for &b in &sorted
                                    [cell_start[bucket] as usize..cell_start[bucket + 1] as usize]
                                {
                                    let bi = b as usize;
                                    if bi <= a || keys[bi].0 != key {
                                        continue;
                                    }
                                    let d = sub(xa, positions[bi]);
                                    let reach = ra + radius[bi] + skin;
                                    if d[0] * d[0] + d[1] * d[1] + d[2] * d[2] < reach * reach {
                                        partners.push(b);
                                    }
                                }
                            }
                        }
                    }
                    partners[first..].sort_unstable();
                    // Springs carried over: both lists are sorted by b.
                    if has_old {
                        let old = old_start[a] as usize..old_start[a + 1] as usize;
                        let mut j = old.start;
                        for &b in &partners[first..] {
                            while j < old.end && old_b[j] < b {
                                j += 1;
                            }
                            springs.push(if j < old.end && old_b[j] == b {
                                old_spring[j]
                            } else {
                                [0.0; 3]
                            });
                        }
                    } else {
                        springs.extend(std::iter::repeat([0.0; 3]).take(partners.len() - first));
                    }
                    counts.push((partners.len() - first) as u32);
                }
                (partners, springs, counts)
            })
            .collect();
        let mut start = Vec::with_capacity(n + 1);
        start.push(0u32);
        let mut total = 0u32;
        let mut pair_b = Vec::with_capacity(blocks.iter().map(|b| b.0.len()).sum());
        let mut springs = Vec::with_capacity(pair_b.capacity());
        for (partners, block_springs, counts) in blocks {
            pair_b.extend_from_slice(&partners);
            springs.extend_from_slice(&block_springs);
            for c in counts {
                total += c;
                start.push(total);
            }
        }
        // Partner lists: the pairs in which each grain is b, in pair order.
        let mut partner_start = vec![0u32; n + 1];
        for &b in &pair_b {
            partner_start[b as usize + 1] += 1;
        }
        for i in 0..n {
            partner_start[i + 1] += partner_start[i];
        }
        let mut fill = partner_start[..n].to_vec();
        let mut partner_list = vec![0u32; pair_b.len()];
        for (p, &b) in pair_b.iter().enumerate() {
            partner_list[fill[b as usize] as usize] = p as u32;
            fill[b as usize] += 1;
        }
        self.pair_out = vec![PairOut::default(); pair_b.len()];
        self.pair_start = start;
        self.pair_b = pair_b;
        self.pair_spring = springs;
        self.partner_start = partner_start;
        self.partner_list = partner_list;
        self.reference = self.grains.position.clone();
    }
}
