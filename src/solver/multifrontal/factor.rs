//! The numerical factorisation: equilibration, assembly, pivoting and elimination of the
//! fronts in tree order.

use super::kernels::{
    block_inverse, choose, eliminate_one, eliminate_two, equilibrate, largest_diagonal, perturb,
    swap, Choice,
};
use super::{Factor, Multifrontal, Pivot, NONE};

impl Multifrontal {
    /// Factorises the matrix with these values (in the order of the analysed pattern).
    /// `positive` is the number of leading rows (original numbering) whose pivots are
    /// expected positive; the rest are expected negative. `threshold` is the pivot test's u
    /// (0 < u ≤ 0.5; larger is more stable and delays more pivots). Pivot eigenvalues below
    /// `floor` in magnitude (in the equilibrated matrix) are raised to it.
    pub fn factor(
        &mut self,
        values: &[f64],
        positive: usize,
        threshold: f64,
        floor: f64,
    ) -> Factor {
        self.factor_within(values, positive, threshold, floor, usize::MAX)
    }

    /// [`Self::factor`], stopped as soon as more than `most_negative` pivots are negative
    /// ([`Factor::TooNegative`]): the inertia is then wrong whatever the rest holds, and IPOPT
    /// asks for the matrix again with its Hessian block shifted, so the rest of the work would
    /// be thrown away. (Negative pivots only accumulate, and IPOPT tells a count that is too
    /// large from one that is too small, so stopping early changes none of its decisions.)
    pub fn factor_within(
        &mut self,
        values: &[f64],
        positive: usize,
        threshold: f64,
        floor: f64,
        most_negative: usize,
    ) -> Factor {
        // The same code compiled twice: with AVX2 where the processor has it (4-wide vectors
        // in the dense loops; a few per cent on the hopper's KKT matrices, whose fronts are
        // small). No fused multiply-adds either way (Rust contracts none), so both give the
        // same factors bit for bit.
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the processor has AVX2 (checked just above).
            return unsafe { self.factor_avx2(values, positive, threshold, floor, most_negative) };
        }
        self.factor_portable(values, positive, threshold, floor, most_negative)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn factor_avx2(
        &mut self,
        values: &[f64],
        positive: usize,
        threshold: f64,
        floor: f64,
        most_negative: usize,
    ) -> Factor {
        self.factor_portable(values, positive, threshold, floor, most_negative)
    }

    #[inline(always)]
    fn factor_portable(
        &mut self,
        values: &[f64],
        positive: usize,
        threshold: f64,
        floor: f64,
        most_negative: usize,
    ) -> Factor {
        assert_eq!(
            values.len(),
            self.values.len(),
            "one value per analysed entry"
        );
        // The largest |entry|, and in the same pass whether every entry is finite (f64::max
        // would pass over a NaN).
        let (norm, finite) = values.iter().fold((0.0_f64, true), |(m, finite), v| {
            (m.max(v.abs()), finite && v.is_finite())
        });
        if !finite {
            return Factor::NotFinite;
        }
        self.values.copy_from_slice(values);
        self.norm = norm;
        let threshold = threshold.clamp(1e-12, 0.5);
        equilibrate(
            &self.rows,
            &self.cols,
            &self.values,
            &mut self.scale,
            &mut self.work,
        );
        let supernodes = self.supernodes();
        let (mut negative, mut regularized) = (0, 0);
        for s in 0..supernodes {
            let children = std::mem::take(&mut self.pending[s]);
            let mut front = std::mem::take(&mut self.fronts[s]);
            // The front's rows: delayed columns, own columns, rows below.
            let index = &mut front.rows;
            index.clear();
            for c in &children {
                index.extend_from_slice(&c.rows[..c.delayed]);
            }
            index.extend(self.first[s]..self.first[s + 1]);
            let summed = index.len();
            index.extend_from_slice(&self.below[s]);
            let m = index.len();
            // Without delayed columns the front is laid out as the analysis computed it, and
            // so is every child's contribution (its `below` rows): precomputed slots. Either
            // way each entry of the front receives the same sums in the same order.
            let planned = children.iter().all(|c| c.delayed == 0);
            if !planned {
                for (t, &g) in index.iter().enumerate() {
                    self.position[g] = t;
                }
            }
            // Only the lower triangle is read: zero just that.
            let f = &mut self.scratch;
            if f.len() < m * m {
                f.resize(m * m, 0.0);
            }
            for j in 0..m {
                f[j + j * m..(j + 1) * m].fill(0.0);
            }
            if planned {
                for (&(k, _, _), &slot) in self.entries[s].iter().zip(&self.entry_slots[s]) {
                    let (r, c) = (self.rows[k] as usize, self.cols[k] as usize);
                    let v = self.values[k] * self.scale[r] * self.scale[c];
                    f[slot as usize] += v;
                }
            } else {
                for &(k, a, b) in &self.entries[s] {
                    let (r, c) = (self.rows[k] as usize, self.cols[k] as usize);
                    let v = self.values[k] * self.scale[r] * self.scale[c];
                    let (i, j) = (self.position[a], self.position[b]);
                    f[i.max(j) + i.min(j) * m] += v;
                }
            }
            for c in children {
                let cm = c.rows.len();
                if planned {
                    let relative = &self.relative[c.from];
                    debug_assert_eq!(relative.len(), cm);
                    for (cj, &j) in relative.iter().enumerate() {
                        let column = &mut f[j as usize * m..(j as usize + 1) * m];
                        for (&i, &v) in relative[cj..]
                            .iter()
                            .zip(&c.values[cj + cj * cm..(cj + 1) * cm])
                        {
                            column[i as usize] += v;
                        }
                    }
                } else {
                    for (cj, &gj) in c.rows.iter().enumerate() {
                        let j = self.position[gj];
                        for (&gi, &v) in c.rows[cj..]
                            .iter()
                            .zip(&c.values[cj + cj * cm..(cj + 1) * cm])
                        {
                            let i = self.position[gi];
                            f[i.max(j) + i.min(j) * m] += v;
                        }
                    }
                }
                self.pool.push(c);
            }
            let root = self.parent[s] == NONE;
            let expected = |g: usize| if self.perm[g] < positive { 1.0 } else { -1.0 };
            front.pivots.clear();
            let mut k = 0;
            while k < summed {
                let Some(pivot) = choose(f, m, k, summed, threshold).or(if root {
                    Some(Choice::Forced(largest_diagonal(f, m, k, summed)))
                } else {
                    None
                }) else {
                    break; // delay the rest to the parent
                };
                match pivot {
                    Choice::One(t) | Choice::Forced(t) => {
                        swap(f, m, index, k, t);
                        let mut block = [f[k + k * m], 0.0, 0.0];
                        let singular = block[0] == 0.0;
                        if perturb(&mut block, 1, singular, [expected(index[k]), 0.0], floor) {
                            regularized += 1;
                        }
                        let (neg, inverse) = block_inverse(&block, 1);
                        negative += neg;
                        eliminate_one(f, m, k, inverse[0]);
                        front.pivots.push(Pivot::One {
                            at: k,
                            inverse: inverse[0],
                        });
                        k += 1;
                    }
                    Choice::Two(t, r) => {
                        swap(f, m, index, k, t);
                        let r = if r == k { t } else { r };
                        swap(f, m, index, k + 1, r);
                        let mut block = [f[k + k * m], f[k + 1 + k * m], f[k + 1 + (k + 1) * m]];
                        let singular = block[0] * block[2] == block[1] * block[1];
                        let signs = [expected(index[k]), expected(index[k + 1])];
                        if perturb(&mut block, 2, singular, signs, floor) {
                            regularized += 1;
                        }
                        let (neg, inverse) = block_inverse(&block, 2);
                        negative += neg;
                        eliminate_two(f, m, k, &inverse);
                        front.pivots.push(Pivot::Two { at: k, inverse });
                        k += 2;
                    }
                }
                if negative > most_negative {
                    // Give back what this factorisation holds, so that the next starts clean.
                    self.fronts[s] = front;
                    for list in &mut self.pending {
                        self.pool.append(list);
                    }
                    return Factor::TooNegative { negative };
                }
            }
            if !root && k < m {
                let rest = m - k;
                let mut c = self.pool.pop().unwrap_or_default();
                c.from = s;
                c.rows.clear();
                c.rows.extend_from_slice(&index[k..]);
                c.delayed = summed - k;
                c.values.clear();
                for j in k..m {
                    // The lower triangle is what is kept up to date; above it, stale values.
                    c.values.extend_from_slice(&f[k + j * m..(j + 1) * m]);
                }
                debug_assert_eq!(c.values.len(), rest * rest);
                self.pending[self.parent[s]].push(c);
            }
            front.eliminated = k;
            front.l.clear();
            front.l.extend_from_slice(&f[..k * m]);
            self.fronts[s] = front;
        }
        if self.fronts.iter().flat_map(|f| &f.pivots).any(|p| match p {
            Pivot::One { inverse, .. } => !inverse.is_finite(),
            Pivot::Two { inverse, .. } => inverse.iter().any(|x| !x.is_finite()),
        }) {
            return Factor::NotFinite;
        }
        Factor::Done {
            negative,
            regularized,
        }
    }

    /// Eliminated pivots of the latest factorisation (the matrix's dimension when complete).
    pub fn eliminated(&self) -> usize {
        self.fronts.iter().map(|f| f.eliminated).sum()
    }
}
