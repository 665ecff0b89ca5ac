//! [`HertzDeviceBed`]'s kernel launches: the step, its forces and the neighbour-list build.

use cudarc::driver::{LaunchConfig, PushKernelArg};

use super::{
    per_item, HertzDeviceBed, PairBuffers, HM_BODY_FIELD_COUNT, HM_CONTACT_FIELD_COUNT,
    HM_GRAIN_FIELD_COUNT, HM_PAIR_FIELD_COUNT, SCAN_THREADS,
};
use crate::sim::dem::cuda::{
    driver_error, Arenas, CudaError, Pointers, BLOCK, BODY_BLOCKS, GATHER_THREADS,
};
use crate::sim::dem::hertz::EXPLODED;
use crate::sim::dem::DemError;

impl HertzDeviceBed {
    fn launch(&self, name: &str, config: LaunchConfig, flag: i32) -> Result<(), CudaError> {
        let function = &self.kernels.functions[name];
        let pointers = |arenas: &Arenas| arenas.pointers(&self.stream);
        let grains = Pointers::<HM_GRAIN_FIELD_COUNT>(
            pointers(&self.grains)
                .try_into()
                .expect("HM_GRAIN_FIELD_COUNT matches HM_GRAIN_FIELDS"),
        );
        let bodies = Pointers::<HM_BODY_FIELD_COUNT>(
            pointers(&self.bodies)
                .try_into()
                .expect("HM_BODY_FIELD_COUNT matches HM_BODY_FIELDS"),
        );
        let contacts = Pointers::<HM_CONTACT_FIELD_COUNT>(
            pointers(&self.contacts)
                .try_into()
                .expect("HM_CONTACT_FIELD_COUNT matches HM_CONTACT_FIELDS"),
        );
        let pair_pointers = |list: &PairBuffers| {
            Pointers::<HM_PAIR_FIELD_COUNT>(
                pointers(&list.arenas)
                    .try_into()
                    .expect("HM_PAIR_FIELD_COUNT matches HM_PAIR_FIELDS"),
            )
        };
        let (list, old) = (pair_pointers(&self.list), pair_pointers(&self.old));
        let mut builder = self.stream.launch_builder(function);
        builder
            .arg(&self.params)
            .arg(&grains)
            .arg(&bodies)
            .arg(&contacts)
            .arg(&list)
            .arg(&old)
            .arg(&flag);
        // SAFETY: every hm_ kernel has the signature (HmParams, HmGrains, HmBodies,
        // BodyContacts, PairList, PairList, int), all by value; the structs are #[repr(C)] or
        // arrays of device addresses whose layout a test checks against hertz.cu; every
        // address lies in an allocation of this bed sized for the counts in `params`
        // (`pairs` never exceeds the current list's capacity).
        unsafe { builder.launch(config) }.map_err(driver_error(&format!("launching {name}")))?;
        Ok(())
    }

    fn grains_total(&self) -> usize {
        self.grains_per_scene * self.scenes
    }

    pub(super) fn bodies_total(&self) -> usize {
        self.bodies_per_scene * self.scenes
    }

    /// Advances every scene by `steps` steps.
    pub fn step(&mut self, steps: usize) -> Result<(), DemError> {
        for _ in 0..steps {
            self.step_once()?;
        }
        Ok(())
    }

    fn step_once(&mut self) -> Result<(), DemError> {
        let n = self.grains_total();
        let bodies = self.bodies_total();
        // 1. Kick and drift.
        if n > 0 {
            self.launch("hm_kick_drift", per_item(n, BLOCK), 0)?;
        }
        if bodies > 0 {
            self.launch("hm_body_kick_drift", per_item(bodies, BLOCK), 0)?;
        }
        // 2. Neighbour list, rebuilt on the CPU's test.
        let moved = if n > 0 {
            let counters = Self::grain_field("counters");
            self.launch("hm_displacement", per_item(n, SCAN_THREADS), 0)?;
            f64::from_bits(self.grains.read_counter_at(&self.stream, counters, 0)?)
        } else {
            0.0
        };
        let skin = self.params.skin;
        if !(moved < 0.25 * skin * skin) {
            if !moved.is_finite() {
                return Err(DemError::Unphysical(EXPLODED.into()));
            }
            self.build()?;
        }
        // 3-5. Forces and the closing kick.
        self.forces(true)?;
        Ok(())
    }

    /// Pair forces, gather, body sums; with `kick`, the closing half-kick and the contact count.
    pub(super) fn forces(&mut self, kick: bool) -> Result<(), CudaError> {
        let n = self.grains_total();
        let bodies = self.bodies_total();
        if self.params.pairs > 0 {
            self.launch(
                "hm_pair_forces",
                per_item(self.params.pairs as usize, BLOCK),
                0,
            )?;
        }
        if n > 0 {
            self.launch("hm_gather", per_item(n, BLOCK), 0)?;
        }
        if bodies > 0 {
            let partial = LaunchConfig {
                grid_dim: (BODY_BLOCKS, bodies as u32, 1),
                block_dim: (GATHER_THREADS, 1, 1),
                shared_mem_bytes: 0,
            };
            self.launch("hm_body_partials", partial, 0)?;
            self.launch("hm_body_totals", per_item(bodies, BLOCK), kick as i32)?;
        }
        if kick && n > 0 {
            self.launch("hm_kick", per_item(n, BLOCK), 0)?;
        }
        Ok(())
    }

    /// Rebuilds the neighbour list, carrying springs over from the previous one.
    pub(super) fn build(&mut self) -> Result<(), CudaError> {
        self.builds += 1;
        // The current list becomes the old one.
        std::mem::swap(&mut self.list, &mut self.old);
        let current = Self::grain_field("pair_start");
        let previous = Self::grain_field("old_pair_start");
        self.grains.fields.swap(current, previous);
        let n = self.grains_total();
        if n == 0 {
            self.params.pairs = 0;
            return Ok(());
        }
        let per_grain = per_item(n, BLOCK);
        self.launch(
            "hm_hash_clear",
            per_item(self.params.hash_table_size as usize, BLOCK),
            0,
        )?;
        self.launch("hm_hash_insert", per_grain, 0)?;
        self.launch("hm_count_pairs", per_grain, 0)?;
        for flag in [0, 1] {
            let blocks = per_item(n + 1, SCAN_THREADS);
            self.launch("hm_scan_blocks", blocks, flag)?;
            self.launch("hm_scan_sums", per_item(1, SCAN_THREADS), flag)?;
            self.launch("hm_scan_add", blocks, flag)?;
        }
        let pairs = self.grains.read_counter_at(&self.stream, current, n)? as usize;
        if pairs > self.list.capacity {
            self.list = PairBuffers::new(&self.stream, pairs + pairs / 4 + 1024)?;
        }
        self.params.pairs = pairs as i64;
        self.launch("hm_fill_pairs", per_grain, 0)?;
        self.launch("hm_sort_partners", per_grain, 0)?;
        Ok(())
    }
}
