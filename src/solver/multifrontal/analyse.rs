//! The analysis: elimination tree, structure of L, relaxed supernodes and assembly slots.

use super::{Front, Multifrontal, NONE};

impl Multifrontal {
    /// Analyses the pattern of a symmetric `n × n` matrix given by one triangle (entry k at
    /// `(rows[k], cols[k])`), eliminated in the order `perm` (`perm[new] = old`).
    pub fn analyse(
        n: usize,
        rows: &[usize],
        cols: &[usize],
        perm: Vec<usize>,
    ) -> Result<Multifrontal, String> {
        if rows.len() != cols.len() || perm.len() != n {
            return Err("pattern and order differ in length".into());
        }
        if u32::try_from(n).is_err() {
            return Err(format!("{n} rows: more than 32-bit indices address"));
        }
        if let Some(k) = (0..rows.len()).find(|&k| rows[k] >= n || cols[k] >= n) {
            return Err(format!(
                "entry {k} at ({}, {}) is outside the {n} x {n} matrix",
                rows[k], cols[k]
            ));
        }
        let mut pinv = vec![NONE; n];
        for (new, &old) in perm.iter().enumerate() {
            if old >= n || pinv[old] != NONE {
                return Err("the order is not a permutation".into());
            }
            pinv[old] = new;
        }
        // The lower triangle in the new numbering, by columns and by rows.
        let mut by_column: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut by_row: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (&r, &c) in rows.iter().zip(cols) {
            let (a, b) = (pinv[r], pinv[c]);
            let (i, j) = (a.max(b), a.min(b));
            if i != j {
                by_column[j].push(i);
                by_row[i].push(j);
            }
        }
        // Elimination tree (Liu's algorithm with path compression).
        let mut etree = vec![NONE; n];
        let mut ancestor = vec![NONE; n];
        for i in 0..n {
            for &j in &by_row[i] {
                let mut r = j;
                while ancestor[r] != NONE && ancestor[r] != i {
                    let next = ancestor[r];
                    ancestor[r] = i;
                    r = next;
                }
                if ancestor[r] == NONE {
                    ancestor[r] = i;
                    etree[r] = i;
                }
            }
        }
        // The structure of each column of L below its diagonal: its own entries and its
        // children's structures (children have smaller indices, so one pass in order).
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
        for j in 0..n {
            if etree[j] != NONE {
                children[etree[j]].push(j);
            }
        }
        let mut structure: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut mark = vec![NONE; n];
        for j in 0..n {
            let mut s = Vec::new();
            for &i in &by_column[j] {
                if mark[i] != j {
                    mark[i] = j;
                    s.push(i);
                }
            }
            for &c in &children[j] {
                for &i in &structure[c] {
                    if i != j && mark[i] != j {
                        mark[i] = j;
                        s.push(i);
                    }
                }
            }
            s.sort_unstable();
            structure[j] = s;
        }
        // Relaxed supernodes (CHOLMOD's amalgamation rule): column j joins the supernode
        // ending at j − 1 when it is that column's parent (so the supernode is a chain of the
        // tree and its front's rows are its columns and the last column's structure) and the
        // merged front stores few explicit zeros. Larger fronts mean fewer, denser
        // eliminations, and above all that a constraint row and the variable it is ordered
        // after are summed in one front, where a 2×2 pivot can take them together instead
        // of delaying the variable.
        let mut first = vec![0];
        let mut true_entries = if n > 0 { 1 + structure[0].len() } else { 0 };
        for j in 1..n {
            let start = *first.last().expect("first holds 0");
            let width = j + 1 - start;
            let merged_true = true_entries + 1 + structure[j].len();
            let dense = width * (width + 1) / 2 + width * structure[j].len();
            let zeros = dense.saturating_sub(merged_true) as f64;
            let dense = dense as f64;
            let joins = etree[j - 1] == j
                && (width <= 4
                    || (width <= 16 && zeros <= 0.8 * dense)
                    || (width <= 48 && zeros <= 0.1 * dense)
                    || zeros <= 0.05 * dense);
            if joins {
                true_entries = merged_true;
            } else {
                first.push(j);
                true_entries = 1 + structure[j].len();
            }
        }
        first.push(n);
        let supernodes = first.len() - 1;
        let mut supernode_of = vec![0; n];
        for s in 0..supernodes {
            supernode_of[first[s]..first[s + 1]].fill(s);
        }
        let parent: Vec<usize> = (0..supernodes)
            .map(|s| match etree[first[s + 1] - 1] {
                NONE => NONE,
                p => supernode_of[p],
            })
            .collect();
        let below: Vec<Vec<usize>> = (0..supernodes)
            .map(|s| std::mem::take(&mut structure[first[s + 1] - 1]))
            .collect();
        let mut entries: Vec<Vec<(usize, usize, usize)>> = vec![Vec::new(); supernodes];
        for (k, (&r, &c)) in rows.iter().zip(cols).enumerate() {
            let (a, b) = (pinv[r], pinv[c]);
            entries[supernode_of[a.min(b)]].push((k, a, b));
        }
        // The fronts' layouts without delayed columns, computed once: where each entry and
        // each child's contribution lands.
        let mut position = vec![NONE; n];
        let mut entry_slots: Vec<Vec<u32>> = vec![Vec::new(); supernodes];
        let mut relative: Vec<Vec<u32>> = vec![Vec::new(); supernodes];
        let mut children_of: Vec<Vec<usize>> = vec![Vec::new(); supernodes];
        for c in 0..supernodes {
            if parent[c] != NONE {
                children_of[parent[c]].push(c);
            }
        }
        for s in 0..supernodes {
            let own = first[s]..first[s + 1];
            let m = own.len() + below[s].len();
            if u32::try_from(m * m).is_err() {
                return Err(format!(
                    "a front of {m} rows: too large to factorise densely"
                ));
            }
            for (t, g) in own.clone().chain(below[s].iter().copied()).enumerate() {
                position[g] = t;
            }
            entry_slots[s] = entries[s]
                .iter()
                .map(|&(_, a, b)| {
                    let (i, j) = (position[a], position[b]);
                    (i.max(j) + i.min(j) * m) as u32
                })
                .collect();
            for &c in &children_of[s] {
                relative[c] = below[c].iter().map(|&g| position[g] as u32).collect();
            }
        }
        let narrow = |v: &[usize]| -> Vec<u32> { v.iter().map(|&i| i as u32).collect() };
        Ok(Multifrontal {
            perm,
            first,
            parent,
            below,
            entries,
            entry_slots,
            relative,
            rows: narrow(rows),
            cols: narrow(cols),
            values: vec![0.0; rows.len()],
            scale: vec![1.0; n],
            fronts: vec![Front::default(); supernodes],
            position: vec![NONE; n],
            work: vec![0.0; n],
            local: Vec::new(),
            norm: 0.0,
            rhs: vec![0.0; n],
            residual: vec![0.0; n],
            before: vec![0.0; n],
            scratch: Vec::new(),
            pool: Vec::new(),
            pending: (0..supernodes).map(|_| Vec::new()).collect(),
        })
    }

    /// The number of supernodes (fronts) of the analysis.
    pub fn supernodes(&self) -> usize {
        self.first.len() - 1
    }
}
