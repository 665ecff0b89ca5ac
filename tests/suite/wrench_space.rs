//! The wrench-space data and model (docs/WRENCH_SPACE.md section 3.6, W1 and W3-W7; W2 is the
//! hull's), the shipped data files, and `loam wrench-space` end to end with its bad-input errors.
//!
//! Hull comparisons use the support function h(u) = max(0, max_i u·w_i) of
//! conv({0} ∪ {w_i}) over many unit directions u in raw (F_x [N], F_z [N], τ [N m]) coordinates:
//! two hulls are equal exactly when their support functions are, so no facets are needed here.

use crate::common;

use std::path::{Path, PathBuf};

use common::fd::Rng;
use common::run::loam;
use common::temp_dir::TempDir;
use loam::symbolic::{Function, Sx};
use loam::terrain::wrench_set::WrenchSet;
use loam::terrain::wrench_space::data::{mirror, sphere_directions, Interpolation, Provenance};
use loam::terrain::wrench_space::rft::RftCoefficients;
use loam::terrain::wrench_space::{
    import, Foot, Kernel, Medium, Node, RftModel, WrenchSpace, WrenchSpaceData,
};

fn shipped(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("problems/data/wrench_space")
        .join(name)
}

/// The §3.5 test foot in the Sand-like medium, as `rft_sand_like.yaml` was built.
fn sand_like_model() -> RftModel {
    RftModel {
        medium: Medium::Generic { zeta: 0.4 },
        foot: Foot {
            width: 0.10,
            height: 0.30,
            thickness: 0.10,
        },
        torque_point: 0.1572,
        velocity_scale: [0.02, 0.02, 0.3],
        directions: sphere_directions(3),
        segments: 40,
    }
}

/// 0, −step, …, −max (or +), written as the CLI writes them.
fn grid(max: f64, step: f64, sign: f64) -> Vec<f64> {
    let count = (max / step).round() as usize;
    (0..=count)
        .map(|k| sign * (k as f64 * step * 1e12).round() / 1e12 + 0.0)
        .collect()
}

fn sand_like_space(depth_step: f64, tilt_step: f64) -> WrenchSpace {
    let model = sand_like_model();
    let data = model.generate(
        &grid(0.10, depth_step, -1.0),
        &grid(1.5, tilt_step, 1.0),
        Kernel::Cubic,
    );
    WrenchSpace::from_data(data).expect("the Sand-like data fits")
}

/// Quasi-uniform unit directions (a Fibonacci sphere).
fn unit_directions(count: usize) -> Vec<[f64; 3]> {
    let golden = std::f64::consts::PI * (3.0 - 5f64.sqrt());
    (0..count)
        .map(|k| {
            let z = 1.0 - 2.0 * (k as f64 + 0.5) / count as f64;
            let r = (1.0 - z * z).sqrt();
            let a = golden * k as f64;
            [r * a.cos(), z, r * a.sin()]
        })
        .collect()
}

fn support(points: &[[f64; 3]], u: &[f64; 3]) -> f64 {
    points
        .iter()
        .map(|w| u[0] * w[0] + u[1] * w[1] + u[2] * w[2])
        .fold(0.0, f64::max)
}

/// max_u |h_a(u) − h_b(u)| / max_u h_b(u).
fn support_gap(a: &[[f64; 3]], b: &[[f64; 3]], directions: &[[f64; 3]]) -> f64 {
    let gap = directions
        .iter()
        .map(|u| (support(a, u) - support(b, u)).abs())
        .fold(0.0, f64::max);
    let size = directions.iter().map(|u| support(b, u)).fold(0.0, f64::max);
    gap / size
}

fn largest_difference(a: &[[f64; 3]], b: &[[f64; 3]]) -> f64 {
    a.iter()
        .zip(b)
        .flat_map(|(x, y)| (0..3).map(move |c| (x[c] - y[c]).abs()))
        .fold(0.0, f64::max)
}

fn largest(points: &[[f64; 3]]) -> f64 {
    points.iter().flatten().fold(0.0, |m, c| m.max(c.abs()))
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    0.5 * (values[(n - 1) / 2] + values[n / 2])
}

/// The W4 error of `space` against direct RFT at 80 seeded θ, d ∈ [−0.07, −0.01], |φ| ≤ 0.9:
/// every gap, sorted.
fn off_grid_gaps(space: &WrenchSpace) -> Vec<f64> {
    let direct = sand_like_model();
    let directions = unit_directions(2000);
    let mut rng = Rng::new(4);
    let mut gaps: Vec<f64> = (0..80)
        .map(|_| {
            let depth = rng.uniform(-0.07, -0.01);
            let tilt = rng.uniform(-0.9, 0.9);
            let interpolated = space.query(depth, tilt);
            assert_eq!(interpolated.clamped, None);
            support_gap(
                &interpolated.vertices,
                &direct.query(depth, tilt).vertices,
                &directions,
            )
        })
        .collect();
    gaps.sort_by(f64::total_cmp);
    gaps
}

#[test]
fn shipped_data_files_load_and_the_sand_like_file_is_what_its_command_computes() {
    let files: Vec<PathBuf> = std::fs::read_dir(shipped(""))
        .expect("problems/data/wrench_space exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    assert!(files.len() >= 2, "{files:?}");
    for file in &files {
        let space = WrenchSpace::load(file).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(space.n_directions(), 26, "{}", file.display());
    }
    let mut expected = sand_like_model().generate(
        &grid(0.10, 0.01, -1.0),
        &grid(1.5, 0.15, 1.0),
        Kernel::Cubic,
    );
    expected.medium = "sand_like".to_owned();
    let file = WrenchSpaceData::load(&shipped("rft_sand_like.yaml")).unwrap();
    assert_eq!(file, expected);
    // The file's text reads back bit for bit.
    assert_eq!(
        loam::problem::load_yaml::<WrenchSpaceData>(&file.to_yaml()).unwrap(),
        file
    );
}

/// W1: a known polytope scaled with depth, s(θ)·P with s = −d/0.07, P points on an ellipsoid
/// with the equator ring pulled halfway inside (interior points). The data are affine in θ,
/// which the cubic kernel's affine tail reproduces exactly, at the nodes and between them.
#[test]
fn w1_a_polytope_scaled_with_depth_is_reproduced_everywhere() {
    let directions = sphere_directions(3);
    let polytope: Vec<[f64; 3]> = directions
        .iter()
        .enumerate()
        .map(|(i, u)| {
            let pull = if (10..18).contains(&i) { 0.5 } else { 1.0 };
            [
                100.0 * pull * u[0],
                200.0 + 150.0 * pull * u[1],
                5.0 * pull * u[2],
            ]
        })
        .collect();
    let scaled = |depth: f64| -> Vec<[f64; 3]> {
        let s = -depth / 0.07;
        polytope.iter().map(|p| p.map(|c| s * c)).collect()
    };
    let nodes = grid(0.07, 0.01, -1.0)
        .into_iter()
        .flat_map(|depth| {
            grid(0.9, 0.3, 1.0).into_iter().map(move |tilt| Node {
                depth,
                tilt,
                wrenches: if depth == 0.0 {
                    vec![[0.0; 3]; 26]
                } else {
                    scaled(depth)
                },
            })
        })
        .collect();
    let data = WrenchSpaceData {
        medium: "known polytope".into(),
        foot: sand_like_model().foot,
        torque_point: 0.1572,
        velocity_scale: [0.02, 0.02, 0.3],
        directions,
        interpolation: Interpolation::default(),
        provenance: Provenance::default(),
        nodes,
        rbf_weights: Vec::new(),
    };
    let space = WrenchSpace::from_data(data).unwrap();
    let unit = unit_directions(1000);
    let mut rng = Rng::new(1);
    let mut worst: f64 = 0.0;
    let mut worst_gap: f64 = 0.0;
    let on_grid = grid(0.07, 0.01, -1.0)
        .into_iter()
        .filter(|&d| d < 0.0)
        .flat_map(|d| [-0.9, -0.3, 0.0, 0.6].map(|t| (d, t)));
    let off_grid = (0..100).map(|_| (rng.uniform(-0.07, -0.001), rng.uniform(-0.9, 0.9)));
    for (depth, tilt) in on_grid.chain(off_grid) {
        let got = space.query(depth, tilt).vertices;
        let want = scaled(depth);
        worst = worst.max(largest_difference(&got, &want) / largest(&want));
        worst_gap = worst_gap.max(support_gap(&got, &want, &unit));
    }
    eprintln!("W1: vertices within {worst:.2e}, support gap {worst_gap:.2e}");
    assert!(worst <= 1e-10, "vertices off by {worst:.3e} (relative)");
    assert!(worst_gap <= 1e-10, "support gap {worst_gap:.3e}");
}

/// W3: the interpolant passes through the data (and its mirror images), and
/// w_i(d, −φ) = S·w_π(i)(d, φ) everywhere.
#[test]
fn w3_exact_at_the_nodes_and_mirror_symmetric() {
    let space = WrenchSpace::load(&shipped("rft_sand_like.yaml")).unwrap();
    let data = space.data();
    let scale = data
        .nodes
        .iter()
        .map(|n| largest(&n.wrenches))
        .fold(0.0, f64::max);
    let mut worst: f64 = 0.0;
    for node in data.nodes.iter().filter(|n| n.depth < 0.0) {
        let at_node = space.vertices(&node.depth, &node.tilt);
        worst = worst.max(largest_difference(&at_node, &node.wrenches));
        let images: Vec<[f64; 3]> = space
            .mirror()
            .iter()
            .map(|&p| mirror(&node.wrenches[p]))
            .collect();
        let at_mirror = space.vertices(&node.depth, &-node.tilt);
        worst = worst.max(largest_difference(&at_mirror, &images));
    }
    eprintln!("W3: nodes within {:.2e} (relative)", worst / scale);
    assert!(worst <= 1e-10 * scale, "{worst:.3e} N off at a node");

    let mut rng = Rng::new(3);
    let mut worst_mirror: f64 = 0.0;
    for _ in 0..200 {
        let (depth, tilt) = (rng.uniform(-0.1, -0.001), rng.uniform(0.0, 1.5));
        let left = space.vertices(&depth, &-tilt);
        let right = space.vertices(&depth, &tilt);
        let images: Vec<[f64; 3]> = space.mirror().iter().map(|&p| mirror(&right[p])).collect();
        worst_mirror = worst_mirror.max(largest_difference(&left, &images));
    }
    eprintln!(
        "W3: mirror identity within {:.2e} (relative)",
        worst_mirror / scale
    );
    assert!(worst_mirror <= 1e-10 * scale, "{worst_mirror:.3e} N");
}

/// W4 and W5: hulls of the interpolated vertices against hulls of RFT evaluated directly,
/// same 26 directions, 80 seeded θ; halving the spacings at least halves the median.
#[test]
fn w4_w5_off_grid_accuracy_against_direct_rft_and_its_refinement() {
    let coarse = off_grid_gaps(&sand_like_space(0.01, 0.15));
    let (median_coarse, max_coarse) = (median(&mut coarse.clone()), coarse[79]);
    eprintln!(
        "W4: median {:.2} %, p90 {:.2} %, max {:.2} %",
        100.0 * median_coarse,
        100.0 * coarse[71],
        100.0 * max_coarse
    );
    assert!(median_coarse <= 0.04, "median {median_coarse:.4}");
    assert!(max_coarse <= 0.15, "max {max_coarse:.4}");

    let fine = off_grid_gaps(&sand_like_space(0.005, 0.075));
    let median_fine = median(&mut fine.clone());
    eprintln!(
        "W5: halved spacing: median {:.2} % (÷{:.2}), max {:.2} %",
        100.0 * median_fine,
        median_coarse / median_fine,
        100.0 * fine[79]
    );
    assert!(
        median_fine * 2.0 <= median_coarse,
        "{median_fine} vs {median_coarse}"
    );
}

/// W6: the generic RFT fit and the wrench of a flat foot pushed straight down. The side walls
/// are vertical, so straight down they slide along themselves (n·v = 0: not leading) and only
/// the sole, all of it at depth |d|, resists: F_z = ζ |d| × width × thickness, no F_x, no τ
/// (the sole is symmetric about the axis).
#[test]
fn w6_rft_coefficients_and_the_pure_down_wrench_of_a_flat_foot() {
    let (alpha_x, alpha_z) = RftCoefficients::GENERIC.alpha(0.0, std::f64::consts::FRAC_PI_2);
    assert!((alpha_z - 1.0).abs() <= 1e-12, "alpha_z = {alpha_z}");
    assert!(alpha_x.abs() <= 1e-12, "alpha_x = {alpha_x}");

    let model = sand_like_model();
    for depth in [-0.013, -0.05, -0.31] {
        let w = model.wrench(depth, 0.0, [0.0, -0.02, 0.0]);
        // ζ = 0.4 N/cm³ = 4e5 N/m³.
        let expected = 4e5 * -depth * 0.10 * 0.10;
        assert!(
            (w[1] - expected).abs() <= 1e-9 * expected,
            "{w:?} vs {expected}"
        );
        assert!(
            w[0].abs() <= 1e-9 * expected && w[2].abs() <= 1e-9 * expected,
            "{w:?}"
        );
    }
    // The first direction of the data is straight down: the file holds the same number.
    let space = sand_like_space(0.01, 0.15);
    assert!((space.query(-0.05, 0.0).vertices[0][1] - 200.0).abs() <= 1e-9 * 200.0);
}

/// W7: the vertices traced as CasADi expressions, differentiated exactly, against central
/// differences of the f64 evaluation; and both evaluations agree.
#[test]
fn w7_symbolic_derivatives_match_central_differences() {
    let space = sand_like_space(0.01, 0.15);
    let (theta, symbols) = Sx::symbols("theta", 2);
    let flat: Vec<Sx> = space
        .vertices(&symbols[0], &symbols[1])
        .into_iter()
        .flatten()
        .collect();
    let outputs = Sx::vertcat(&flat);
    let jacobian = outputs.jacobian(&theta).unwrap();
    let mut function = Function::new("vertices", &[&theta], &[&outputs, &jacobian]).unwrap();
    let (rows, cols) = jacobian.sparsity();
    let n = flat.len();
    let flat_f64 =
        |d: f64, t: f64| -> Vec<f64> { space.vertices(&d, &t).into_iter().flatten().collect() };
    let mut rng = Rng::new(7);
    let mut worst_value: f64 = 0.0;
    let mut worst_derivative: f64 = 0.0;
    for _ in 0..10 {
        let point = [rng.uniform(-0.095, -0.005), rng.uniform(-1.4, 1.4)];
        let mut out = vec![0.0; function.output_len()];
        function.eval(&point, &mut out).unwrap();
        let values = flat_f64(point[0], point[1]);
        let scale = values.iter().fold(1.0, |m: f64, v| m.max(v.abs()));
        for (a, b) in out[..n].iter().zip(&values) {
            worst_value = worst_value.max((a - b).abs() / scale);
        }
        let mut exact = vec![[0.0; 2]; n];
        for ((&r, &c), &v) in rows.iter().zip(&cols).zip(&out[n..]) {
            exact[r][c] = v;
        }
        // Steps of 1e-4 grid spacings: the interpolant's sum cancels terms ~1e4 times its value,
        // so its round-off (~1e-11 N) needs steps this large; errors are relative to the
        // largest derivative in the same column (∂w/∂d and ∂w/∂φ differ by the spacings' ratio).
        for (c, step) in [1e-6, 1.5e-5].into_iter().enumerate() {
            let mut plus = point;
            let mut minus = point;
            plus[c] += step;
            minus[c] -= step;
            let (up, down) = (flat_f64(plus[0], plus[1]), flat_f64(minus[0], minus[1]));
            for k in 0..n {
                let fd = (up[k] - down[k]) / (2.0 * step);
                let column = (0..n).fold(1.0, |m: f64, j| m.max(exact[j][c].abs()));
                let error = (exact[k][c] - fd).abs() / column;
                worst_derivative = worst_derivative.max(error);
            }
        }
    }
    eprintln!("W7: values agree to {worst_value:.2e}, derivatives to {worst_derivative:.2e}");
    assert!(worst_value <= 1e-12, "{worst_value:.3e}");
    assert!(worst_derivative <= 1e-6, "{worst_derivative:.3e}");
    // Zero above the surface, symbolically too.
    let mut out = vec![0.0; function.output_len()];
    function.eval(&[0.01, 0.3], &mut out).unwrap();
    assert!(out[..n].iter().all(|&v| v == 0.0));
}

/// Runs `loam` with the whitespace-separated words of `args`.
fn loam_words(dir: &Path, args: &str) -> common::run::Output {
    loam(dir, &args.split_whitespace().collect::<Vec<_>>())
}

/// A small RFT data set for the command-line tests.
fn small_data() -> WrenchSpaceData {
    sand_like_model().generate(&[0.0, -0.02, -0.04], &[0.0, 0.5], Kernel::Cubic)
}

#[test]
fn build_import_and_info_round_trip() {
    let dir = TempDir::new("round_trip");
    let built = loam_words(
        dir.path(),
        "wrench-space build --medium generic --zeta 0.4 --depth-max 0.04 --depth-step 0.02 \
         --tilt-max 0.5 --tilt-step 0.5 --out small.yaml",
    );
    assert_eq!(built.code(), 0, "{}", built.dump());
    let data = WrenchSpaceData::load(&dir.path().join("small.yaml")).unwrap();
    let mut expected = small_data();
    expected.medium = "generic_zeta_0.4".into();
    assert_eq!(data, expected);

    // The nodes out as CSV and back in with the rest of the file as the header.
    let imported = import_with(dir.path(), &header_of(&data), &import::to_csv(&data), "");
    assert_eq!(imported.code(), 0, "{}", imported.dump());
    let back = WrenchSpaceData::load(&dir.path().join("out.yaml")).unwrap();
    assert_eq!(back.nodes, data.nodes);
    assert_eq!(back.provenance.generator, "import");

    let info = loam(dir.path(), &["wrench-space", "info", "out.yaml"]);
    assert_eq!(info.code(), 0, "{}", info.dump());
    assert!(
        info.stdout
            .contains("26 (mirror-closed: 12 pairs, 2 self-mirrored)"),
        "{}",
        info.stdout
    );
    assert!(info.stdout.contains("-0.04 .. 0 m"), "{}", info.stdout);
    // The 14 pairs printed are mirror images, S_v u_i = u_j (two of them lone, i = j).
    let pairs = info
        .stdout
        .lines()
        .find(|l| l.contains("mirror pairs"))
        .unwrap();
    for pair in pairs.split_whitespace().skip(2).take(14) {
        let ij: Vec<usize> = pair.split('-').map(|i| i.parse().unwrap()).collect();
        let (u, v) = (data.directions[ij[0]], data.directions[ij[ij.len() - 1]]);
        assert_eq!(mirror(&u), v, "{pairs}");
    }
}

/// Writes `data` (with an edit to its text) and runs `loam wrench-space info` on it: exit 2,
/// nothing else written, and the message names the file and each of `expected`.
fn assert_refused(label: &str, text: &str, expected: &[&str]) {
    let dir = TempDir::new(label);
    dir.write("bad.yaml", text);
    let output = loam(dir.path(), &["wrench-space", "info", "bad.yaml"]);
    assert_eq!(output.code(), 2, "{}", output.dump());
    assert!(output.stderr.contains("bad.yaml"), "{}", output.stderr);
    for part in expected {
        assert!(
            output.stderr.contains(part),
            "`{part}` missing: {}",
            output.stderr
        );
    }
}

#[test]
fn directions_that_are_not_mirror_closed_are_refused() {
    let mut data = small_data();
    let turned = 0.3f64;
    data.directions[3] = [
        turned.cos() * std::f64::consts::FRAC_1_SQRT_2,
        -std::f64::consts::FRAC_1_SQRT_2,
        turned.sin() * std::f64::consts::FRAC_1_SQRT_2,
    ];
    assert_refused(
        "mirror",
        &data.to_yaml(),
        &["directions[3]", "mirror-closed"],
    );
}

#[test]
fn a_nan_wrench_is_refused_naming_node_and_direction() {
    let mut data = small_data();
    data.nodes[3].wrenches[5][1] = f64::NAN;
    assert_refused(
        "nan",
        &data.to_yaml(),
        &["nodes[3].wrenches[5]", "direction 5", "not finite"],
    );
}

#[test]
fn an_error_found_after_parsing_names_the_line_of_its_field() {
    let mut data = small_data();
    data.nodes[3].wrenches[5][1] = f64::NAN;
    let text = data.to_yaml();
    // The line of nodes[3].wrenches[5]: the sixth `- ` entry under the fourth node's
    // `wrenches:`, as the YAML writer lays it out, found here by the bad number itself.
    let line = text
        .lines()
        .position(|l| l.to_ascii_lowercase().contains(".nan"))
        .expect("the NaN is written")
        + 1;
    assert_refused(
        "nan-line",
        &text,
        &[&format!("bad.yaml:{line}:"), "nodes[3].wrenches[5]"],
    );
    let mut data = small_data();
    data.nodes[1].tilt = -0.5;
    let text = data.to_yaml();
    let line = text
        .lines()
        .position(|l| l.contains("tilt: -0.5"))
        .expect("the tilt is written")
        + 1;
    assert_refused(
        "tilt-line",
        &text,
        &[&format!("bad.yaml:{line}:"), "nodes[1].tilt"],
    );
}

#[test]
fn a_degenerate_node_is_refused() {
    let mut data = small_data();
    for w in &mut data.nodes[2].wrenches {
        w[2] = 0.0;
    }
    assert_refused(
        "flat",
        &data.to_yaml(),
        &["nodes[2].wrenches", "degenerate"],
    );
}

#[test]
fn nodes_above_the_surface_or_at_negative_tilt_and_missing_rows_are_refused() {
    let mut data = small_data();
    data.nodes[1].tilt = -0.5;
    assert_refused("tilt", &data.to_yaml(), &["nodes[1].tilt", ">= 0"]);
    let mut data = small_data();
    data.nodes[4].depth = 0.01;
    assert_refused("depth", &data.to_yaml(), &["nodes[4].depth", "<= 0"]);
    assert_refused(
        "typo",
        &small_data().to_yaml().replace("velocity_scale", "velocity"),
        &["unknown field `velocity`"],
    );

    let dir = TempDir::new("csv");
    let csv = import::to_csv(&small_data());
    let without_one: Vec<&str> = csv
        .lines()
        .filter(|l| !l.starts_with("-0.02,0.5,7,"))
        .collect();
    let output = import_with(
        dir.path(),
        &header_of(&small_data()),
        &without_one.join("\n"),
        "",
    );
    assert_eq!(output.code(), 2, "{}", output.dump());
    assert!(
        output.stderr.contains("measured.csv") && output.stderr.contains("direction 7"),
        "{}",
        output.stderr
    );
    assert!(!dir.path().join("out.yaml").exists());
    // A row the CSV itself gets wrong is named by its line and column.
    let (k, line) = csv.lines().enumerate().nth(30).unwrap();
    for (column, value) in [(0, "0.02"), (1, "-0.1"), (3, "NaN")] {
        let mut cells: Vec<&str> = line.split(',').collect();
        cells[column] = value;
        let bad = csv.replacen(line, &cells.join(","), 1);
        let output = import_with(dir.path(), &header_of(&small_data()), &bad, "");
        let field = import::COLUMNS[column];
        assert_import_refused(
            dir.path(),
            &output,
            &format!("measured.csv:{}", k + 1),
            field,
        );
    }
}

/// `loam wrench-space import` of `csv` (header: `header` as written) with `extra` flags.
fn import_with(dir: &Path, header: &str, csv: &str, extra: &str) -> common::run::Output {
    std::fs::write(dir.join("header.yaml"), header).unwrap();
    std::fs::write(dir.join("measured.csv"), csv).unwrap();
    loam_words(
        dir,
        &format!("wrench-space import measured.csv --header header.yaml --out out.yaml {extra}"),
    )
}

/// `data` less its nodes, as an import header.
fn header_of(data: &WrenchSpaceData) -> String {
    let mut header = data.clone();
    header.nodes.clear();
    header.provenance = Provenance::default();
    header.to_yaml().replace("nodes:\n", "")
}

/// Exit 2 naming `file:LINE: field` (a line number when `line`), nothing written.
fn assert_import_refused(dir: &Path, output: &common::run::Output, file: &str, field: &str) {
    assert_eq!(output.code(), 2, "{}", output.dump());
    let at = output.stderr.find(file).expect(&output.stderr) + file.len();
    let (line, _) = output.stderr[at..]
        .split_once(&format!(": {field}:"))
        .expect(&output.stderr);
    assert!(
        line.chars().all(|c| c == ':' || c.is_ascii_digit()),
        "{}",
        output.stderr
    );
    assert!(!dir.join("out.yaml").exists());
}

#[test]
fn an_import_with_a_node_missing_from_its_grid_is_refused_naming_it_unless_allowed() {
    let dir = TempDir::new("hole");
    let data = small_data();
    let csv = import::to_csv(&data);
    // Every row of the node (d = -0.02, tilt = 0.5) gone: 5 of the 3 x 2 nodes left.
    let holed: Vec<&str> = csv
        .lines()
        .filter(|l| !l.starts_with("-0.02,0.5,"))
        .collect();
    let header = header_of(&data);
    let output = import_with(dir.path(), &header, &holed.join("\n"), "");
    assert_import_refused(dir.path(), &output, "measured.csv", "nodes");
    assert!(
        output.stderr.contains("(d = -0.02, tilt = 0.5)")
            && output.stderr.contains("--allow-missing-nodes"),
        "{}",
        output.stderr
    );
    // The rows at d = -0.02 start on line 2 + 26 · 2 (header row, then the surface's 2 nodes).
    assert!(
        output.stderr.contains("measured.csv:54:"),
        "{}",
        output.stderr
    );

    let output = import_with(
        dir.path(),
        &header,
        &holed.join("\n"),
        "--allow-missing-nodes",
    );
    assert_eq!(output.code(), 0, "{}", output.dump());
    let taken = WrenchSpaceData::load(&dir.path().join("out.yaml")).unwrap();
    assert_eq!(taken.nodes.len(), 5);
    assert_eq!(
        taken.provenance.parameters["missing_nodes"],
        "(d = -0.02, tilt = 0.5)"
    );
}

#[test]
fn an_import_header_without_its_directions_is_refused() {
    let dir = TempDir::new("no_directions");
    let data = small_data();
    let header: String = header_of(&data)
        .lines()
        .filter(|l| !l.starts_with("directions:") && !l.starts_with("  - ["))
        .map(|l| format!("{l}\n"))
        .collect();
    // Still a valid data-file header (the directions have a default) …
    assert!(!header.contains("directions"));
    let output = import_with(dir.path(), &header, &import::to_csv(&data), "");
    // … but not for measured data.
    assert_import_refused(dir.path(), &output, "header.yaml", "directions");
    assert!(output.stderr.contains("missing"), "{}", output.stderr);
}

#[test]
fn an_import_with_x_flipped_is_refused_with_the_evidence_and_taken_with_flip_x() {
    let dir = TempDir::new("flipped");
    let data = small_data();
    let header = header_of(&data);
    let mut flipped = data.clone();
    for node in &mut flipped.nodes {
        for w in &mut node.wrenches {
            *w = mirror(w);
        }
    }
    let output = import_with(dir.path(), &header, &import::to_csv(&flipped), "");
    assert_import_refused(dir.path(), &output, "measured.csv", "force_x");
    let evidence = output
        .stderr
        .split(": the x axis")
        .nth(1)
        .expect(&output.stderr);
    // "K of N force_x values disagree … and 0 agree": every significant one disagrees.
    let counts: Vec<usize> = evidence
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|w| w.parse().ok())
        .take(3)
        .collect();
    println!("{evidence}");
    assert!(
        counts[0] == counts[1] && counts[0] >= 20 && counts[2] == 0,
        "{counts:?}"
    );
    assert!(output.stderr.contains("--flip-x"), "{}", output.stderr);

    let output = import_with(dir.path(), &header, &import::to_csv(&flipped), "--flip-x");
    assert_eq!(output.code(), 0, "{}", output.dump());
    let taken = WrenchSpaceData::load(&dir.path().join("out.yaml")).unwrap();
    assert_eq!(taken.nodes, data.nodes);
    std::fs::remove_file(dir.path().join("out.yaml")).unwrap();

    // Data in loam's convention with --flip-x: refused the other way round.
    let output = import_with(dir.path(), &header, &import::to_csv(&data), "--flip-x");
    assert_import_refused(dir.path(), &output, "measured.csv", "force_x");
    assert!(
        output.stderr.contains("after --flip-x"),
        "{}",
        output.stderr
    );
}

/// The paper's Table II concavity that `info` prints, against a computation here: per node
/// the planes through three of the node's wrenches and the origin with every point on one
/// side (brute force, no hull code), each wrench's least slack to them over its norm.
#[test]
fn info_prints_the_concavity_that_a_brute_force_hull_gives() {
    let path = shipped("rft_sand_like.yaml");
    let dir = TempDir::new("concavity");
    let info = loam(
        dir.path(),
        &["wrench-space", "info", path.to_str().unwrap()],
    );
    let line = info
        .stdout
        .lines()
        .find(|l| l.contains("concavity"))
        .expect(&info.stdout);
    let number = |key: &str| -> f64 {
        let rest = &line[line.find(key).expect(line) + key.len()..];
        rest.split([',', ' ']).next().unwrap().parse().unwrap()
    };
    let dot = |a: &[f64; 3], b: &[f64; 3]| a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
    let norm = |p: &[f64; 3]| dot(p, p).sqrt();
    let mut values = Vec::new();
    for node in WrenchSpaceData::load(&path)
        .unwrap()
        .nodes
        .iter()
        .filter(|n| n.depth < 0.0)
    {
        let mut points = node.wrenches.clone();
        points.push([0.0; 3]);
        let tolerance = 1e-9 * points.iter().map(norm).fold(0.0, f64::max);
        let mut planes = Vec::new();
        for (i, a) in points.iter().enumerate() {
            for (j, b) in points.iter().enumerate().skip(i + 1) {
                for c in &points[j + 1..] {
                    let (u, v) = (
                        [0, 1, 2].map(|k| b[k] - a[k]),
                        [0, 1, 2].map(|k| c[k] - a[k]),
                    );
                    let n = [0, 1, 2]
                        .map(|k| u[(k + 1) % 3] * v[(k + 2) % 3] - u[(k + 2) % 3] * v[(k + 1) % 3]);
                    if norm(&n) <= tolerance * tolerance * 1e9 {
                        continue;
                    }
                    let n = n.map(|x| x / norm(&n));
                    let side = |p: &[f64; 3]| dot(&n, p) - dot(&n, a);
                    if points.iter().all(|p| side(p) <= tolerance) {
                        planes.push((n, dot(&n, a)));
                    } else if points.iter().all(|p| side(p) >= -tolerance) {
                        planes.push((n.map(|x| -x), -dot(&n, a)));
                    }
                }
            }
        }
        let slack = |p: &[f64; 3]| {
            planes
                .iter()
                .map(|(n, b)| b - dot(n, p))
                .fold(f64::MAX, f64::min)
        };
        let ratios = node.wrenches.iter().filter(|w| norm(w) >= 1.0);
        values.push(
            ratios
                .map(|p| slack(p).max(0.0) / norm(p))
                .fold(0.0, f64::max),
        );
    }
    let worst = values.iter().copied().fold(0.0, f64::max);
    let average = values.iter().sum::<f64>() / values.len() as f64;
    println!("{line}\nhere: average {average:e}, worst {worst:e}");
    assert_eq!(values.len(), 110);
    assert!((number("average ") / average - 1.0).abs() < 1e-5, "{line}");
    assert!(
        (number("worst ") / worst - 1.0).abs() < 1e-5 && worst > 0.0,
        "{line}"
    );
}

/// Measured data are taken as measured: an import fits the tilt-0 wrenches as given (the
/// interpolant passes through every measured wrench), and only `--mirror-average` replaces
/// them by their mirror average, which `info` then reports per node.
#[test]
fn an_import_keeps_asymmetric_tilt_zero_wrenches_unless_asked_to_average_them() {
    let dir = TempDir::new("mirror_average");
    let mut data = small_data();
    // One measured wrench at the deepest untilted node, 6 N off its mirror image.
    let node = data
        .nodes
        .iter()
        .position(|n| n.tilt == 0.0 && n.depth == -0.04)
        .unwrap();
    data.nodes[node].wrenches[2][0] += 6.0; // direction 2, whose mirror is 6
    let header = header_of(&data);
    let measured = data.nodes[node].wrenches.clone();
    let at_node = |file: &str| {
        let space = WrenchSpace::load(&dir.path().join(file)).unwrap();
        space.vertices(&-0.04, &0.0)
    };

    let output = import_with(dir.path(), &header, &import::to_csv(&data), "");
    assert_eq!(output.code(), 0, "{}", output.dump());
    assert!(
        output.stdout.contains("mirror average  off"),
        "{}",
        output.stdout
    );
    let scale = measured
        .iter()
        .flatten()
        .fold(0.0_f64, |m, c| m.max(c.abs()));
    let kept = largest_difference(&at_node("out.yaml"), &measured);
    assert!(
        kept <= 1e-9 * scale,
        "the fit moved a measured wrench by {kept:.3e}"
    );
    let text = std::fs::read_to_string(dir.path().join("out.yaml")).unwrap();
    assert!(text.contains("mirror_average: false"), "{text}");

    std::fs::remove_file(dir.path().join("out.yaml")).unwrap();
    let output = import_with(
        dir.path(),
        &header,
        &import::to_csv(&data),
        "--mirror-average",
    );
    assert_eq!(output.code(), 0, "{}", output.dump());
    // The pair of the perturbed direction moves by half of the 6 N asymmetry.
    assert!(
        output.stdout.contains("mirror average  on") && output.stdout.contains("d -0.04: 3"),
        "{}",
        output.stdout
    );
    let moved = largest_difference(&at_node("out.yaml"), &measured);
    assert!((moved - 3.0).abs() < 1e-6, "moved by {moved}");
}

/// The `paper_linear` kernel √(r² + δ²) on raw (d, φ), δ = 1e-6, written here independently.
fn paper_linear_kernel(a: [f64; 2], b: [f64; 2]) -> f64 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + 1e-12).sqrt()
}

/// The data's nodes and the `paper_linear` weights that interpolate them (no tail), solved
/// independently of loam's fit: row j, column 3i + c, component c of direction i at node j.
fn paper_linear_weights(data: &WrenchSpaceData) -> (Vec<[f64; 2]>, nalgebra::DMatrix<f64>) {
    let nodes: Vec<[f64; 2]> = data.nodes.iter().map(|n| [n.depth, n.tilt]).collect();
    let (n, m) = (nodes.len(), data.directions.len());
    let system = nalgebra::DMatrix::from_fn(n, n, |i, j| paper_linear_kernel(nodes[i], nodes[j]));
    let values = nalgebra::DMatrix::from_fn(n, 3 * m, |j, k| data.nodes[j].wrenches[k / 3][k % 3]);
    (nodes, system.lu().solve(&values).unwrap())
}

/// The paper kernels are the RBF model of the data as the authors fit it: over the data's own
/// nodes (φ ≥ 0), negative tilts answered by the mirror. Checked against an independent fit
/// here (the linear kernel √(r² + δ²) on raw (d, φ), no tail, over the data's nodes only,
/// solved by nalgebra), between nodes, and the mirror identity at negative tilts.
#[test]
fn the_paper_kernels_fit_the_datas_own_nodes() {
    let mut data = sand_like_model().generate(
        &[0.0, -0.02, -0.04, -0.06],
        &[0.0, 0.3, 0.6],
        Kernel::PaperLinear,
    );
    data.interpolation.mirror_average = false;
    let space = WrenchSpace::from_data(data.clone()).unwrap();
    let (nodes, weights) = paper_linear_weights(&data);
    let (n, m) = (nodes.len(), data.directions.len());
    let independent = |depth: f64, tilt: f64| -> Vec<[f64; 3]> {
        let basis: Vec<f64> = nodes
            .iter()
            .map(|c| paper_linear_kernel([depth, tilt], *c))
            .collect();
        (0..m)
            .map(|i| [0, 1, 2].map(|c| (0..n).map(|j| basis[j] * weights[(j, 3 * i + c)]).sum()))
            .collect()
    };
    let scale = data
        .nodes
        .iter()
        .map(|n| largest(&n.wrenches))
        .fold(0.0, f64::max);
    let mut rng = Rng::new(11);
    let (mut worst, mut worst_mirror) = (0.0_f64, 0.0_f64);
    for _ in 0..100 {
        let (depth, tilt) = (rng.uniform(-0.06, -0.001), rng.uniform(0.0, 0.6));
        let ours = space.vertices(&depth, &tilt);
        worst = worst.max(largest_difference(&ours, &independent(depth, tilt)));
        let images: Vec<[f64; 3]> = space.mirror().iter().map(|&p| mirror(&ours[p])).collect();
        worst_mirror =
            worst_mirror.max(largest_difference(&space.vertices(&depth, &-tilt), &images));
        // The projected vertices are the same numbers, at negative tilts too.
        let direction = [0.3, -0.9, 0.2];
        let left = space.projected_vertices(&depth, &-tilt, direction);
        for (i, w) in space.vertices(&depth, &-tilt).iter().enumerate() {
            let dot: f64 = (0..3).map(|c| w[c] * direction[c]).sum();
            worst_mirror = worst_mirror.max((dot - left[i]).abs());
        }
    }
    eprintln!(
        "paper_linear: within {:.2e} of the independent fit, mirror within {:.2e} (relative)",
        worst / scale,
        worst_mirror / scale
    );
    assert!(
        worst <= 1e-9 * scale,
        "{worst:.3e} N from the independent fit"
    );
    assert!(worst_mirror <= 1e-10 * scale, "{worst_mirror:.3e} N");
}

/// `build --directions FILE`: the data set is built on the file's directions (a list, or a
/// file's `directions`), the same wrenches as the model gives for them; directions that are
/// not mirror-closed are refused before anything is computed.
#[test]
fn build_takes_its_directions_from_a_file() {
    let dir = TempDir::new("build_directions");
    let directions = sphere_directions(7);
    let list: String = directions
        .iter()
        .map(|u| format!("- [{:?}, {:?}, {:?}]\n", u[0], u[1], u[2]))
        .collect();
    dir.write("dirs.yaml", &list);
    let args = "wrench-space build --medium generic --zeta 0.4 --depth-max 0.04 \
                --depth-step 0.02 --tilt-max 0.5 --tilt-step 0.5";
    let built = loam_words(
        dir.path(),
        &format!("{args} --directions dirs.yaml --out listed.yaml"),
    );
    assert_eq!(built.code(), 0, "{}", built.dump());
    let listed = WrenchSpaceData::load(&dir.path().join("listed.yaml")).unwrap();
    assert_eq!(listed.directions, directions);
    let by_rings = loam_words(dir.path(), &format!("{args} --rings 7 --out rings.yaml"));
    assert_eq!(by_rings.code(), 0, "{}", by_rings.dump());
    let rings = WrenchSpaceData::load(&dir.path().join("rings.yaml")).unwrap();
    assert_eq!(listed.nodes, rings.nodes);
    // A data file's directions serve too.
    let from_file = loam_words(
        dir.path(),
        &format!("{args} --directions rings.yaml --out again.yaml"),
    );
    assert_eq!(from_file.code(), 0, "{}", from_file.dump());

    // One direction whose mirror image is missing: refused, naming it, nothing written.
    // (Direction 2 is one of a mirror pair; the poles 0 and 1 are their own mirrors.)
    let broken: String = list
        .lines()
        .enumerate()
        .filter(|(i, _)| *i != 2)
        .map(|(_, l)| format!("{l}\n"))
        .collect();
    dir.write("broken.yaml", &broken);
    let refused = loam_words(
        dir.path(),
        &format!("{args} --directions broken.yaml --out broken_out.yaml"),
    );
    assert_eq!(refused.code(), 2, "{}", refused.dump());
    assert!(
        refused.stderr.contains("--directions broken.yaml") && refused.stderr.contains("mirror"),
        "{}",
        refused.stderr
    );
    assert!(!dir.path().join("broken_out.yaml").exists());
}

/// The weights of the data's own RBF model import with the data (`--weights`): the model
/// reproduces every node and equals a fit over the data's nodes between them; weights that
/// do not reproduce a node are refused naming it; weights need a paper kernel.
#[test]
fn an_import_takes_the_rbf_weights_that_come_with_the_data() {
    let dir = TempDir::new("rbf_weights");
    let mut data =
        sand_like_model().generate(&[0.0, -0.02, -0.04], &[0.0, 0.5], Kernel::PaperLinear);
    data.interpolation.mirror_average = false;
    let fitted = WrenchSpace::from_data(data.clone()).unwrap();
    // The weights, solved here as the authors would: the kernel matrix over the data's nodes.
    let (nodes, weights) = paper_linear_weights(&data);
    let (n, m) = (nodes.len(), data.directions.len());
    let csv = |weights: &nalgebra::DMatrix<f64>| {
        let mut text = "depth,tilt,direction,weight_x,weight_z,weight_tau\n".to_owned();
        for (j, node) in data.nodes.iter().enumerate() {
            for i in 0..m {
                let w = [0, 1, 2].map(|c| weights[(j, 3 * i + c)]);
                text += &format!(
                    "{:?},{:?},{i},{:?},{:?},{:?}\n",
                    node.depth, node.tilt, w[0], w[1], w[2]
                );
            }
        }
        text
    };
    std::fs::write(dir.path().join("weights.csv"), csv(&weights)).unwrap();
    let output = import_with(
        dir.path(),
        &header_of(&data),
        &import::to_csv(&data),
        "--weights weights.csv",
    );
    assert_eq!(output.code(), 0, "{}", output.dump());
    assert!(
        output
            .stdout
            .contains("the weights that came with the data"),
        "{}",
        output.stdout
    );
    let given = WrenchSpace::load(&dir.path().join("out.yaml")).unwrap();
    assert_eq!(given.data().rbf_weights.len(), n);
    let scale = data
        .nodes
        .iter()
        .map(|n| largest(&n.wrenches))
        .fold(0.0, f64::max);
    for node in &data.nodes {
        let off = largest_difference(&given.vertices(&node.depth, &node.tilt), &node.wrenches);
        assert!(off <= 1e-9 * scale, "{off:.3e} N off at a node");
    }
    let mut rng = Rng::new(5);
    for _ in 0..50 {
        let (depth, tilt) = (rng.uniform(-0.04, -0.001), rng.uniform(-0.5, 0.5));
        let off = largest_difference(
            &given.vertices(&depth, &tilt),
            &fitted.vertices(&depth, &tilt),
        );
        assert!(
            off <= 1e-9 * scale,
            "{off:.3e} N from the fit at ({depth}, {tilt})"
        );
    }

    // One weight changed: the model misses its node, refused naming it; nothing written.
    std::fs::remove_file(dir.path().join("out.yaml")).unwrap();
    let mut wrong = weights.clone();
    wrong[(3, 5)] += 10.0;
    std::fs::write(dir.path().join("weights.csv"), csv(&wrong)).unwrap();
    let output = import_with(
        dir.path(),
        &header_of(&data),
        &import::to_csv(&data),
        "--weights weights.csv",
    );
    assert_eq!(output.code(), 2, "{}", output.dump());
    assert!(
        output.stderr.contains("weights.csv") && output.stderr.contains("do not reproduce node"),
        "{}",
        output.stderr
    );
    assert!(!dir.path().join("out.yaml").exists());

    // Weights with the cubic kernel (fitted, with a tail): refused.
    let mut cubic = data.clone();
    cubic.interpolation.kernel = Kernel::Cubic;
    std::fs::write(dir.path().join("weights.csv"), csv(&weights)).unwrap();
    let output = import_with(
        dir.path(),
        &header_of(&cubic),
        &import::to_csv(&cubic),
        "--weights weights.csv",
    );
    assert_eq!(output.code(), 2, "{}", output.dump());
    assert!(
        output.stderr.contains("paper_linear or paper_gaussian"),
        "{}",
        output.stderr
    );
}
