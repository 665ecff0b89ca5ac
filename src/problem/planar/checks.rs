//! A planar problem checked and completed: `resolve` fills its implied values, `validate`
//! names every field that breaks a rule (and what a wrench-space problem asks that its
//! planner does not do).

use super::*;

impl Schema for PlanarProblem {
    fn resolve(&mut self) {
        if self.schedule.is_empty() {
            self.schedule = vec![PhaseSpec {
                contacts: self.robot.contact_names(self.gravity),
                ..PhaseSpec::default()
            }];
        }
        for (option, value) in default_solver_options() {
            self.solver.entry(option).or_insert(value);
        }
        // One robot, one foot: the bed presses the robot's own footprint unless the file
        // gives another (feet of different radii are refused in `validate`).
        if let PlanarTerrainConfig::AddedMass(ground) = &mut self.terrain {
            ground.fill_foot_radius(&self.robot, self.gravity);
        }
        // Every plan the replay can check is refined to the default tolerance unless the
        // file says otherwise; a wrench-space plan is the MDP simulator's own step.
        if self.mesh.is_none() && !matches!(self.terrain, PlanarTerrainConfig::WrenchSpace(_)) {
            self.mesh = Some(MeshRefinement::default());
        }
    }

    fn validate(&self) -> Result<(), Vec<Violation>> {
        let mut bad = Vec::new();
        macro_rules! fail {
            ($field:expr, $message:expr $(,)?) => {
                bad.push(Violation {
                    field: $field,
                    message: $message,
                })
            };
        }
        if !(self.gravity.is_finite() && self.gravity > 0.0) {
            fail!(
                "gravity".into(),
                format!("must be a finite number > 0 m/s², got {}", self.gravity),
            );
        }
        // Every mass, inertia and length of the robot's parameters must be positive.
        if let Ok(serde_json::Value::Object(fields)) = serde_json::to_value(&self.robot) {
            for (name, value) in &fields {
                let Some(v) = value.as_f64() else { continue };
                let (kind, unit) = if name.ends_with("mass") {
                    ("mass", "kg")
                } else if name.ends_with("inertia") {
                    ("inertia", "kg m²")
                } else if name.ends_with("length") || name.ends_with("width") {
                    ("length", "m")
                } else {
                    continue;
                };
                if !(v.is_finite() && v > 0.0) {
                    fail!(
                        format!("robot.{name}"),
                        format!(
                            "a {kind} must be a finite number > 0 {unit} (every link needs mass and inertia for M(q) to be positive definite), got {v}"
                        ),
                    );
                }
            }
        }
        bad.extend(crate::problem::validate::name_and_solver_violations(
            self.name.as_deref(),
            &self.solver,
        ));
        // `stage_one` is read by `strategy: two_stage` and by the later starts of `starts`
        // (two-stage solves); a file's `stage_one` stays valid under `--set
        // strategy=one_stage`.
        if let Some(stage) = &self.stage_one {
            let durations = stage.durations.as_deref().unwrap_or_default();
            if stage.durations.is_some() && durations.len() != self.schedule.len() {
                fail!(
                    "stage_one.durations".into(),
                    format!(
                        "needs one entry per phase of the schedule ({}: a duration or null), got {}",
                        self.schedule.len(),
                        durations.len()
                    ),
                );
            }
            for (p, (d, spec)) in durations.iter().zip(&self.schedule).enumerate() {
                if let Some(d) = *d {
                    let [lo, hi] = spec.duration;
                    if !(d.is_finite() && lo <= d && d <= hi) {
                        fail!(
                            format!("stage_one.durations[{p}]"),
                            format!(
                                "must lie within schedule[{p}].duration [{lo}, {hi}] s, got {d}"
                            ),
                        );
                    }
                }
            }
            if stage.iterations == Some(0) {
                fail!("stage_one.iterations".into(), "must be at least 1".into());
            }
        }
        if self.starts == 0 {
            fail!(
                "starts".into(),
                "must be at least 1 (the number of starting points; 1 is the file's own)".into(),
            );
        }
        if self.starts > 1 && matches!(self.terrain, PlanarTerrainConfig::WrenchSpace(_)) {
            fail!(
                "starts".into(),
                "a plan on a wrench space is solved from one start (the rest guess, relaxed first)"
                    .into(),
            );
        }
        if let Some(mesh) = &self.mesh {
            if !(mesh.tolerance > 0.0 && mesh.tolerance.is_finite()) {
                fail!(
                    "mesh.tolerance".into(),
                    format!(
                        "must be a relative error > 0 (e.g. 0.005 for 0.5 %), got {}",
                        mesh.tolerance
                    ),
                );
            }
            if mesh.max_rounds == 0 {
                fail!("mesh.max_rounds".into(), "must be at least 1".into());
            }
            if matches!(self.terrain, PlanarTerrainConfig::WrenchSpace(_)) {
                fail!(
                    "mesh".into(),
                    "a plan on a wrench space is the MDP simulator's own step; it is not refined"
                        .into(),
                );
            }
        }
        // The ground's own fields (its registration in `PlanarTerrainConfig`).
        bad.extend(self.terrain.field_violations());
        if let PlanarTerrainConfig::AddedMass(AddedMassGroundConfig {
            foot_radius: None, ..
        }) = &self.terrain
        {
            if let Err(radii) = self.robot.footprint_radius(self.gravity) {
                fail!(
                    "terrain.foot_radius".into(),
                    format!(
                        "the robot's feet have different radii ({}); the added-mass bed \
                         takes one disc for every foot: give `foot_radius` [m]",
                        radii
                            .iter()
                            .map(|(name, r)| format!("{name}: {r} m"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                );
            }
        }
        match &self.terrain {
            PlanarTerrainConfig::AddedMass(_) => {
                // Feet only leave the bed: landing in it (the crater, the impact of a foot
                // that arrives moving) is not in the model, as for the hopper.
                for p in 1..self.schedule.len() {
                    let before = &self.schedule[p - 1].contacts;
                    for (i, name) in self.schedule[p].contacts.iter().enumerate() {
                        if !before.contains(name) {
                            fail!(
                                format!("schedule[{p}].contacts[{i}]"),
                                format!(
                                    "`{name}` lands in the bed: on `model: added_mass` feet may only leave the grains (the model has no landing: no crater, no impact into the bed); plan landings on `model: rigid`"
                                ),
                            );
                        }
                    }
                }
            }
            PlanarTerrainConfig::WrenchSpace(ground) => {
                for (field, message) in self.wrench_space_violations(ground) {
                    fail!(field, message);
                }
            }
            _ => {}
        }
        if let RobotConfig::File(f) = &self.robot {
            if f.description.name.trim().is_empty() {
                fail!(
                    "robot.description.name".into(),
                    "is required: the robot's name (a robot file takes its file's stem)".into(),
                );
            }
            for (field, message) in f.description.violations() {
                fail!(format!("robot.description.{field}"), message);
            }
        }
        if !bad.is_empty() {
            return Err(bad);
        }
        let robot = self.robot.build(self.gravity);
        // The robot's own consistency checks (the multibody, limits, indices): what the field
        // rules above cannot name a field for is reported on the robot section.
        if let Err(error) = robot.validate() {
            return Err(vec![Violation {
                field: "robot".into(),
                message: error.to_string(),
            }]);
        }
        let contact_names: Vec<&str> = robot.contacts.iter().map(|c| c.name.as_str()).collect();
        let coordinate_names: Vec<&str> =
            robot.coordinates.iter().map(|c| c.name.as_str()).collect();
        let accepted = |names: &[&str]| {
            names
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        for (p, phase) in self.schedule.iter().enumerate() {
            for (i, name) in phase.contacts.iter().enumerate() {
                if !contact_names.contains(&name.as_str()) {
                    fail!(
                        format!("schedule[{p}].contacts[{i}]"),
                        format!(
                            "the {} has no contact `{name}`; accepted: {}",
                            self.robot.model_name(),
                            accepted(&contact_names)
                        ),
                    );
                } else if phase.contacts[..i].contains(name) {
                    fail!(
                        format!("schedule[{p}].contacts[{i}]"),
                        format!("`{name}` is listed twice"),
                    );
                }
            }
            let same_feet = |a: &[String], b: &[String]| {
                a.len() == b.len() && a.iter().all(|name| b.contains(name))
            };
            if p > 0 && same_feet(&phase.contacts, &self.schedule[p - 1].contacts) {
                fail!(
                    format!("schedule[{p}].contacts"),
                    format!(
                        "the same feet as schedule[{}] ([{}]): a new phase must lift a foot \
                         that is on the ground or land one that is not",
                        p - 1,
                        phase.contacts.join(", ")
                    ),
                );
            }
            if phase.nodes < 3 {
                fail!(
                    format!("schedule[{p}].nodes"),
                    format!("must be at least 3, got {}", phase.nodes),
                );
            }
            let [lo, hi] = phase.duration;
            if !(lo.is_finite() && hi.is_finite() && 0.0 < lo && lo <= hi) {
                fail!(
                    format!("schedule[{p}].duration"),
                    format!("must be [min, max] with 0 < min <= max s, got [{lo}, {hi}]"),
                );
            }
        }
        // At rest in flight is a drop: it needs the height it is dropped from.
        if self.task.start.at_rest
            && self.schedule.first().is_some_and(|p| p.contacts.is_empty())
            && !self.task.start.set.contains_key("z")
        {
            fail!(
                "schedule[0].contacts".into(),
                "the robot starts at rest (task.start.at_rest), so the first phase must have a foot on the ground; a robot at rest cannot be in flight unless it is dropped from a height (task.start.set: {z: HEIGHT})".into(),
            );
        }
        let coordinates = [
            ("task.start.set", &self.task.start.set),
            ("task.end.set", &self.task.end.set),
            ("task.end.change", &self.task.end.change),
        ];
        for (field, map) in coordinates {
            for (name, value) in map {
                if !coordinate_names.contains(&name.as_str()) {
                    fail!(
                        format!("{field}.{name}"),
                        format!(
                            "the {} has no coordinate `{name}`; accepted: {}",
                            self.robot.model_name(),
                            accepted(&coordinate_names)
                        ),
                    );
                } else if !value.is_finite() {
                    fail!(
                        format!("{field}.{name}"),
                        format!("must be finite, got {value}")
                    );
                }
            }
        }
        if self.task.apex_rise.is_some()
            && self.schedule.last().is_some_and(|p| !p.contacts.is_empty())
        {
            fail!(
                "task.apex_rise".into(),
                "an apex rise ends the last phase at the apex, so the last phase must be a flight (contacts: [])".into(),
            );
        }
        if !(self.task.contact_margin.is_finite() && self.task.contact_margin >= 0.0) {
            fail!(
                "task.contact_margin".into(),
                format!(
                    "must be a finite number >= 0 (a share of the weight), got {}",
                    self.task.contact_margin
                ),
            );
        }
        if let Some(h) = self.task.swing_height {
            if !(h.is_finite() && h > 0.0) {
                fail!(
                    "task.swing_height".into(),
                    format!("must be a finite height > 0 m (leave it out for none), got {h}"),
                );
            }
        }
        if let Some(name) = &self.task.apex_of {
            let robot = self.robot.build(self.gravity);
            let bodies: Vec<&str> = robot.body.bodies.iter().map(|b| b.name.as_str()).collect();
            if self.task.apex_rise.is_none() {
                fail!(
                    "task.apex_of".into(),
                    "names the body whose rise `task.apex_rise` sets: set task.apex_rise too"
                        .into(),
                );
            } else if !bodies.contains(&name.as_str()) {
                fail!(
                    "task.apex_of".into(),
                    format!(
                        "the {} has no body `{name}`; accepted: {}",
                        self.robot.model_name(),
                        accepted(&bodies)
                    ),
                );
            }
        }
        if self.task.objective == Objective::CostOfTransport
            && !self.task.distance.is_some_and(|d| d.abs() > 1e-6)
        {
            fail!(
                "task.objective".into(),
                "cost_of_transport divides by the distance travelled: set task.distance (non-zero)"
                    .into(),
            );
        }
        for (field, message) in self.gait_violations() {
            fail!(field, message);
        }
        if bad.is_empty() {
            Ok(())
        } else {
            Err(bad)
        }
    }

    fn set_default_name(&mut self, stem: &str) {
        self.name.get_or_insert_with(|| stem.to_owned());
    }

    fn prepare(
        tree: &mut crate::problem::yaml::Tree,
        origin: &std::path::Path,
        overrides: &[String],
    ) -> Result<(), crate::problem::ProblemError> {
        crate::problem::robot_file::splice(tree, origin, overrides)
    }
}

impl PlanarProblem {
    pub fn name(&self) -> &str {
        self.name.as_deref().unwrap_or("")
    }

    /// What a wrench-space problem asks that its planner (`planner::planar::wrench_space`) does not
    /// do, by field.
    fn wrench_space_violations(&self, ground: &WrenchSpaceGroundConfig) -> Vec<(String, String)> {
        let mut bad: Vec<(String, String)> = Vec::new();
        let mut fail = |field: &str, message: &str| bad.push((field.into(), message.into()));
        if ground.data.as_deref().is_none_or(str::is_empty) {
            fail(
                "terrain.data",
                "`model: wrench_space` needs its data file, e.g. \
                 `data: data/wrench_space/rft_sand_monopod.yaml` (relative to this file)",
            );
        }
        if !(ground.grain_inertia.is_finite() && ground.grain_inertia >= 0.0) {
            fail(
                "terrain.grain_inertia",
                &format!("must be a finite number >= 0, got {}", ground.grain_inertia),
            );
        }
        let why = "on a wrench space loam plans ground phases (the MDP step) and flights in \
                   turn, from rest in the sand to a distance or an apex, or a gait's stride";
        if let Some(first) = self.schedule.first() {
            if first.contacts.is_empty() && !self.task.periodic {
                fail(
                    "schedule[0].contacts",
                    &format!(
                        "must list a foot: {why} (a periodic stride may start in flight, at \
                         its apex)"
                    ),
                );
            }
        }
        for p in 1..self.schedule.len() {
            let ground_now = !self.schedule[p].contacts.is_empty();
            let ground_before = !self.schedule[p - 1].contacts.is_empty();
            if ground_now == ground_before {
                fail(
                    &format!("schedule[{p}].contacts"),
                    &format!(
                        "a {} after a {}: {why}, and the feet a ground phase lists may \
                         touch the sand at any of its steps",
                        if ground_now { "ground phase" } else { "flight" },
                        if ground_now { "ground phase" } else { "flight" }
                    ),
                );
            }
        }
        if self.task.apex_rise.is_some()
            && self.schedule.last().is_some_and(|p| !p.contacts.is_empty())
        {
            fail(
                "task.apex_rise",
                "on a wrench space the apex is the end of the last flight: the schedule must \
                 end with a flight",
            );
        }
        if !self.task.start.at_rest && !self.task.periodic {
            fail(
                "task.start.at_rest",
                &format!("must be true but for a gait (`task.periodic`): {why}"),
            );
        }
        if self.robot.build(self.gravity).locked.contains(&1) {
            fail(
                "robot",
                "its `locked` holds z, along which a wrench-space plan lowers the robot into \
                 the sand at its start: accepted, a guide that holds x and pitch",
            );
        }
        if !matches!(
            self.task.objective,
            Objective::Effort | Objective::InputsSquared
        ) {
            fail(
                "task.objective",
                "on a wrench space: accepted `effort`, `inputs_squared`",
            );
        }
        if self.transcription.scheme != crate::problem::Scheme::Trapezoidal {
            fail(
                "transcription.scheme",
                "on a wrench space the ground phases are the MDP step and the flights \
                 trapezoidal: accepted `trapezoidal`",
            );
        }
        if self.initial_guess != InitialGuess::Rest {
            fail(
                "initial_guess",
                "on a wrench space: accepted `rest` (the robot at rest in the sand, then the \
                 plan of the relaxation without maximum dissipation)",
            );
        }
        bad
    }

    /// What a gait's fields (`periodic`, `distance` as its stride, `speed`) ask that cannot
    /// be planned, by field.
    fn gait_violations(&self) -> Vec<(String, String)> {
        let task = &self.task;
        let mut bad = Vec::new();
        if let Some(d) = task.distance {
            if !d.is_finite() {
                bad.push(("task.distance".into(), format!("must be finite, got {d}")));
            } else if task.periodic && d == 0.0 {
                bad.push((
                    "task.distance".into(),
                    "a periodic task's distance is its stride: a stride of 0 is not one (leave \
                     task.distance out to hop in place)"
                        .into(),
                ));
            }
        }
        if task.periodic && self.schedule.iter().all(|p| p.contacts.is_empty()) {
            bad.push((
                "task.periodic".into(),
                "the schedule never touches the ground, so no stride can close: a periodic \
                 schedule needs a phase with a foot down"
                    .into(),
            ));
        }
        if task.strides == 0 {
            bad.push((
                "task.strides".into(),
                "must be at least 1: the strides the schedule holds".into(),
            ));
        } else if task.strides > 1 && !task.periodic {
            bad.push((
                "task.strides".into(),
                "counts the strides of a gait: set task.periodic: true too".into(),
            ));
        }
        let Some(v) = task.speed else { return bad };
        if !(v.is_finite() && v > 0.0) {
            bad.push((
                "task.speed".into(),
                format!("must be a finite number > 0 m/s, got {v}"),
            ));
        } else if !task.distance.is_some_and(|d| d.is_finite() && d != 0.0) {
            bad.push((
                "task.speed".into(),
                "the speed fixes the duration as distance / speed: set task.distance (non-zero)"
                    .into(),
            ));
        } else if task.objective == Objective::Time {
            bad.push((
                "task.objective".into(),
                "`time` minimises the duration, which task.speed fixes: accepted with a speed, \
                 `effort`, `inputs_squared`, `cost_of_transport`"
                    .into(),
            ));
        } else if let Some(t) = task.stride_time() {
            let lo: f64 = self.schedule.iter().map(|p| p.duration[0]).sum();
            let hi: f64 = self.schedule.iter().map(|p| p.duration[1]).sum();
            if !(lo <= t && t <= hi) {
                bad.push((
                    "task.speed".into(),
                    format!(
                        "{v} m/s over {} m takes {t:.4} s, outside what the phases' duration \
                         bounds allow ({lo:.4} to {hi:.4} s): accepted speeds {:.4} to {:.4} m/s",
                        task.distance.unwrap_or(0.0).abs(),
                        task.distance.unwrap_or(0.0).abs() / hi,
                        task.distance.unwrap_or(0.0).abs() / lo,
                    ),
                ));
            }
        }
        bad
    }
}
