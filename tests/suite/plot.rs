//! `loam plot` and the `loam::plot` library: every figure is produced from realistic data
//! (real `loam solve` plans; replays, sweep tables and DEM output synthesised from them until
//! the simulators write their own), decodes, has the size its SVG twin declares, is not blank
//! and touches no edge; bad folders and bad files give errors that name the file and line.

use crate::common;

use common::csv::read_csv;
use common::run::write_record;
use common::temp_dir::TempDir;
use std::path::Path;
use std::process::Command;

use loam::plot::{plot_dir, PlotError, PlotSettings};

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

fn loam(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_loam"))
        .args(args)
        .output()
        .expect("run loam")
}

/// Solves a shipped problem with the apex height `apex` into `out`; panics unless loam wrote
/// its result files (a plan that does not converge still writes them, with exit 1).
fn solve(problem: &str, apex: f64, out: &Path) {
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("problems")
        .join(problem);
    let output = loam(&[
        "solve",
        file.to_str().expect("UTF-8 path"),
        "--set",
        &format!("task.apex_height={apex}"),
        "--out",
        out.to_str().expect("UTF-8 path"),
        "-q",
    ]);
    assert!(
        out.join("trajectory.csv").is_file() && out.join("solution.json").is_file(),
        "loam solve wrote no result in {}: {}",
        out.display(),
        String::from_utf8_lossy(&output.stderr)
    );
}

const REPLAY_COLUMNS: [&str; 12] = [
    "z_m",
    "v_m",
    "z_r",
    "v_r",
    "z_f",
    "v_f",
    "e",
    "z_d",
    "u",
    "F_m",
    "F_s",
    "F_terrain",
];

/// Writes a replay in the simulator's format: the plan sampled every 0.5 ms (linear between
/// nodes), heights scaled by `scale` about their start and time stretched by `stretch`, so
/// that it is visibly a different motion of the same shape; with its JSON record of the plan.
fn synthetic_replay(run: &Path, name: &str, scale: f64, stretch: f64) {
    let (header, rows) = read_csv(&run.join("trajectory.csv"));
    let col = |name: &str| header.iter().position(|h| h == name).expect("column");
    let num = |r: &Vec<String>, c: usize| r[c].parse::<f64>().expect("number");
    let t: Vec<f64> = rows.iter().map(|r| num(r, col("t"))).collect();
    let stance_end = rows
        .iter()
        .filter(|r| r[col("phase")] == "stance")
        .map(|r| num(r, col("t")))
        .fold(0.0, f64::max);
    let mut out = String::from("t,domain,");
    out += &REPLAY_COLUMNS.join(",");
    out.push('\n');
    let end = t[t.len() - 1] * stretch;
    let steps = (end / 5e-4).floor() as usize;
    for step in 0..=steps {
        let time = step as f64 * 5e-4;
        let plan_time = time / stretch;
        let i = t.partition_point(|&x| x < plan_time).clamp(1, t.len() - 1);
        let a = if t[i] > t[i - 1] {
            ((plan_time - t[i - 1]) / (t[i] - t[i - 1])).clamp(0.0, 1.0)
        } else {
            1.0
        };
        let domain = if plan_time <= stance_end {
            "stance"
        } else {
            "flight"
        };
        out += &format!("{time:.6},{domain}");
        for name in REPLAY_COLUMNS {
            let c = col(name);
            let mut v = (1.0 - a) * num(&rows[i - 1], c) + a * num(&rows[i], c);
            if name.starts_with("z_") && name != "z_d" {
                let start = num(&rows[0], c);
                v = start + scale * (v - start);
            }
            out += &format!(",{v:.9e}");
        }
        out.push('\n');
    }
    std::fs::write(run.join(name), out).expect("write replay");
    let csv = run.join(name);
    write_record(&csv.with_extension("json"), &csv, Some(run));
}

/// What a PNG shows, in numbers.
struct Picture {
    width: u32,
    height: u32,
    distinct_colours: usize,
    non_white_fraction: f64,
    /// Non-white pixels within 2 px of the image's border.
    edge_ink: usize,
    /// Pixels of a clear colour (channels apart by more than 60): data, legend samples and
    /// phase shading, never text, axes or grid lines, which are grey.
    coloured: usize,
}

fn look_at(png: &Path) -> Picture {
    let image = image::open(png)
        .unwrap_or_else(|e| panic!("{} does not decode: {e}", png.display()))
        .to_rgb8();
    let (width, height) = image.dimensions();
    let mut colours = std::collections::HashSet::new();
    let mut non_white = 0usize;
    let mut edge_ink = 0usize;
    let mut coloured = 0usize;
    for (x, y, pixel) in image.enumerate_pixels() {
        let [r, g, b] = pixel.0;
        if r.max(g).max(b) - r.min(g).min(b) > 60 {
            coloured += 1;
        }
        colours.insert(pixel.0);
        let white = pixel.0.iter().all(|&c| c >= 250);
        if !white {
            non_white += 1;
            if x < 2 || y < 2 || x + 2 >= width || y + 2 >= height {
                edge_ink += 1;
            }
        }
    }
    Picture {
        width,
        height,
        distinct_colours: colours.len(),
        non_white_fraction: non_white as f64 / (width as f64 * height as f64),
        edge_ink,
        coloured,
    }
}

/// Checks `<stem>.png` and `<stem>.svg`: the PNG decodes to the size the SVG declares (at
/// least `min`), has many colours (lines, shading, anti-aliased text), is neither blank nor
/// flooded, draws nothing on its border, and has at least `coloured` pixels of clear colour
/// (the legend samples alone have a few hundred); the SVG keeps its text as text. Returns the
/// SVG.
fn check_figure(stem: &Path, min: (u32, u32), coloured: usize, texts: &[&str]) -> String {
    let png = stem.with_extension("png");
    let svg_path = stem.with_extension("svg");
    let picture = look_at(&png);
    eprintln!(
        "{}: {}x{}, {} colours, {:.1}% ink, {} coloured pixels",
        png.display(),
        picture.width,
        picture.height,
        picture.distinct_colours,
        100.0 * picture.non_white_fraction,
        picture.coloured
    );
    assert!(
        picture.coloured >= coloured,
        "{}: {} pixels of clear colour, expected at least {coloured}: no data drawn?",
        png.display(),
        picture.coloured
    );
    let svg = std::fs::read_to_string(&svg_path)
        .unwrap_or_else(|e| panic!("{}: {e}", svg_path.display()));
    let declared = format!(
        "<svg width=\"{}\" height=\"{}\"",
        picture.width, picture.height
    );
    assert!(
        svg.contains(&declared),
        "{} does not start with {declared}: {}",
        svg_path.display(),
        &svg[..svg.len().min(200)]
    );
    assert!(
        picture.width >= min.0 && picture.height >= min.1,
        "{}: {}x{} is smaller than {}x{}",
        png.display(),
        picture.width,
        picture.height,
        min.0,
        min.1
    );
    assert!(
        picture.distinct_colours >= 100,
        "{}: only {} colours",
        png.display(),
        picture.distinct_colours
    );
    assert!(
        (0.01..0.9).contains(&picture.non_white_fraction),
        "{}: {:.1}% of the pixels are not white",
        png.display(),
        100.0 * picture.non_white_fraction
    );
    assert_eq!(
        picture.edge_ink,
        0,
        "{}: something is drawn on the border (clipped?)",
        png.display()
    );
    assert!(svg.matches("<text").count() >= 10, "SVG text is not text");
    for text in texts {
        assert!(
            svg.contains(text),
            "{} has no text `{text}`",
            svg_path.display()
        );
    }
    svg
}

// ---------------------------------------------------------------------------
// Figures
// ---------------------------------------------------------------------------

#[test]
fn a_run_with_replays_gives_the_run_figure() {
    let dir = TempDir::new("run");
    let run = dir.path().join("run");
    solve("hopper_granular.yaml", 0.06, &run);
    synthetic_replay(&run, "replay.csv", 1.01, 1.0);
    synthetic_replay(&run, "replay-on-rigid.csv", 1.25, 0.93);

    let report = plot_dir(&run, &PlotSettings::default()).expect("plot the run");
    let plots = run.join("plots");
    assert_eq!(
        report.files,
        vec![plots.join("run.png"), plots.join("run.svg")]
    );
    assert_eq!(
        report.replays,
        vec![run.join("replay.csv"), run.join("replay-on-rigid.csv")],
        "own-terrain replay first"
    );
    check_figure(
        &plots.join("run"),
        (1200, 1000),
        20_000,
        &[
            "time t [s]",
            "height [mm]",
            "force [N]",
            "[m/s]",
            "stance (plan",
            "flight (plan",
            "apex target",
            "replay on rigid",
            "replay on poppy_seeds (its own terrain), takeoff ",
            "plan (collocation nodes)",
        ],
    );

    // Without replays the plan alone is drawn, and the figure says so.
    std::fs::remove_file(run.join("replay.csv")).expect("rm");
    std::fs::remove_file(run.join("replay-on-rigid.csv")).expect("rm");
    let out = dir.path().join("elsewhere");
    let settings = PlotSettings {
        out_dir: Some(out.clone()),
        formats: loam::plot::Formats {
            png: true,
            svg: true,
        },
        animate: false,
    };
    let report = plot_dir(&run, &settings).expect("plot the plan alone");
    assert!(report.replays.is_empty());
    check_figure(&out.join("run"), (1200, 1000), 10_000, &["no replay"]);
}

/// A CSV whose fields may be quoted (a sweep's varied section, `"{model: rigid}"`), as
/// (header, rows of fields).
fn read_quoted(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text.lines().map(loam::plot::table::fields_of);
    let header = lines.next().expect("a header");
    (header, lines.collect())
}

/// A planar sweep of two heights on both grounds (real plans of problems/hopper_granular.yaml on
/// coarse meshes), its `replays.csv` rewritten with apexes chosen so that each group's mean
/// absolute error is known; its `sweep.csv` naming one more plan whose folder is not there.
#[test]
fn a_sweep_gives_the_apex_and_command_figures_with_each_groups_error() {
    let dir = TempDir::new("sweep");
    let sweep = dir.path().join("sw");
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("problems/hopper_granular.yaml");
    let output = loam(&[
        "sweep",
        file.to_str().expect("UTF-8 path"),
        "--set",
        "schedule.0.nodes=15",
        "--set",
        "schedule.1.nodes=15",
        "--vary",
        "task.apex_rise=0.04,0.07",
        "--vary",
        "terrain=[{model: added_mass, medium: poppy_seeds, foot_radius: 0.038}, {model: rigid}]",
        "--out",
        sweep.to_str().expect("UTF-8 path"),
        "-q",
    ]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );

    // (plan ground, replay ground) -> achieved = commanded + offset [m], per height; the
    // granular plans' replays on rigid ground left out.
    let offsets = [
        ("rigid", "rigid", [0.002, -0.004]),
        ("rigid", "poppy_seeds", [-0.012, -0.030]),
        ("poppy_seeds", "poppy_seeds", [0.001, 0.003]),
    ];
    let (header, rows) = read_quoted(&sweep.join("replays.csv"));
    let col = |name: &str| header.iter().position(|h| h == name).expect(name);
    let line = |fields: &[String]| -> String {
        let quoted: Vec<String> = fields.iter().map(|f| loam::output::csv_field(f)).collect();
        quoted.join(",") + "\n"
    };
    let mut csv = header.join(",") + "\n";
    for row in &rows {
        let (plan, replay) = (&row[col("plan_terrain")], &row[col("replay_terrain")]);
        let Some((_, _, offset)) = offsets.iter().find(|o| o.0 == plan && o.1 == replay) else {
            continue;
        };
        let target: f64 = row[col("apex_target_m")].parse().unwrap();
        let offset = offset[if target < 0.05 { 0 } else { 1 }];
        let mut row = row.clone();
        row[col("achieved_apex_m")] = format!("{}", target + offset);
        row[col("error_m")] = format!("{offset}");
        csv += &line(&row);
    }
    // A plan that did not converge, replayed with no apex: counted, not drawn.
    let mut failed = rows
        .iter()
        .find(|r| r[col("plan_terrain")] == "poppy_seeds")
        .expect("a granular plan")
        .clone();
    for (column, value) in [
        ("apex_target_m", "0.1"),
        ("status", "Infeasible_Problem_Detected"),
        ("converged", "false"),
        ("replay_terrain", "poppy_seeds"),
        ("achieved_apex_m", "nan"),
        ("error_m", "nan"),
    ] {
        failed[col(column)] = value.into();
    }
    csv += &line(&failed);
    std::fs::write(sweep.join("replays.csv"), csv).expect("write replays.csv");
    // sweep.csv names a fifth plan, whose folder is not here.
    let table = std::fs::read_to_string(sweep.join("sweep.csv")).unwrap();
    let last = table.lines().last().unwrap().to_string();
    let missing = last.replacen("0.07,", "0.1,", 1).replace(
        "apex_rise=0.07-terrain=model_rigid",
        "apex_rise=0.1-terrain=model_rigid",
    );
    std::fs::write(sweep.join("sweep.csv"), format!("{table}{missing}\n")).unwrap();

    let report = plot_dir(&sweep, &PlotSettings::default()).expect("plot the sweep");
    let labels: Vec<&str> = report
        .sweep_groups
        .iter()
        .map(|g| g.label.as_str())
        .collect();
    assert_eq!(
        labels,
        [
            "rigid plan on rigid ground",
            "granular plan on poppy seeds",
            "rigid plan on poppy seeds"
        ]
    );
    // Mean |offset| in mm, over the converged plans.
    let expected = [3.0, 2.0, 21.0];
    for (group, mae) in report.sweep_groups.iter().zip(expected) {
        let got = group.mean_abs_error_mm.expect("a converged plan");
        assert!((got - mae).abs() < 1e-9, "{}: {got} mm", group.label);
        assert_eq!(group.converged, 2, "{}", group.label);
    }
    assert_eq!(report.sweep_groups[1].failed, 1);

    let plots = sweep.join("plots");
    let apex = check_figure(
        &plots.join("sweep_apex"),
        (900, 700),
        1000,
        &[
            "commanded apex rise [mm]",
            "achieved apex rise [mm]",
            "rigid plan on poppy seeds: mean |error| 21.0 mm (n = 2)",
            "achieved = commanded",
            "reached no apex",
        ],
    );
    assert!(!apex.contains("granular plan on rigid ground"));
    let commands = check_figure(
        &plots.join("sweep_commands"),
        (1200, 600),
        4000,
        &[
            "planned for rigid ground",
            "planned for poppy_seeds (added mass)",
            "time t [s]",
            "commanded stroke z_d [mm]",
            "task.apex_rise [m]",
            "1 plan(s) without trajectory.csv",
        ],
    );
    // The legend names each height (the SVG writes a text's words on a line of their own).
    for height in ["0.04", "0.07"] {
        assert!(commands.lines().any(|l| l.trim() == height), "{height}");
    }
    // One line per plan: its command at every node of its trajectory.csv, one colour per
    // height on both grounds (the legend's samples are wider, the grid black).
    let mut lines: Vec<(String, usize)> = Vec::new();
    for polyline in commands.split("<polyline").skip(1) {
        let attribute = |name: &str| {
            let start = polyline.find(&format!("{name}=\"")).unwrap() + name.len() + 2;
            let end = start + polyline[start..].find('"').unwrap();
            polyline[start..end].to_string()
        };
        if attribute("stroke-width") == "2" {
            let points = attribute("points").split_whitespace().count();
            lines.push((attribute("stroke"), points));
        }
    }
    let mut drawn: Vec<usize> = lines.iter().map(|l| l.1).collect();
    drawn.sort();
    let mut nodes: Vec<usize> = std::fs::read_dir(&sweep)
        .unwrap()
        .map(|e| e.unwrap().path().join("trajectory.csv"))
        .filter(|t| t.is_file())
        .map(|t| read_csv(&t).1.len())
        .collect();
    nodes.sort();
    assert_eq!(nodes.len(), 4);
    assert_eq!(drawn, nodes, "one line per plan, every node");
    let mut colours: Vec<&String> = lines.iter().map(|l| &l.0).collect();
    colours.sort();
    colours.dedup();
    assert_eq!(colours.len(), 2, "{lines:?}");
}

#[test]
fn a_dem_replay_gives_the_bed_force_figure() {
    let dir = TempDir::new("dem");
    // A foot pressed 20 mm into the bed and pulled out over 0.1 s, then flying; the bed's force
    // follows the model's with a 10% ripple.
    let mut csv = String::from("t,z_m,v_m,z_r,v_r,z_f,v_f,z_d,F_m,F_s,F_bed,F_added_mass\n");
    for i in 0..=2000 {
        let t = i as f64 * 1e-4;
        let phase = std::f64::consts::PI * t / 0.1;
        let (z_f, model) = if t < 0.1 {
            (-0.02 * phase.sin(), 30.0 * phase.sin())
        } else {
            (0.3 * (t - 0.1) - 4.9 * (t - 0.1).powi(2), 0.0)
        };
        let bed = model * (1.0 + 0.1 * (40.0 * t).sin());
        csv += &format!(
            "{t},{},0,{},0,{z_f},0,0,0,0,{bed},{model}\n",
            z_f + 0.08,
            z_f + 0.05
        );
    }
    let bodies = dir.path().join("dem_bodies.csv");
    std::fs::write(&bodies, csv).expect("write");
    // No plan above this folder: dem.json ties the CSV to itself only.
    write_record(&dir.path().join("dem.json"), &bodies, None);
    let report = plot_dir(dir.path(), &PlotSettings::default()).expect("plot DEM");
    assert_eq!(report.files.len(), 2);
    check_figure(
        &dir.path().join("plots/dem"),
        (1200, 800),
        4000,
        &[
            "foot depth",
            "[mm]",
            "force on the foot, up [N]",
            "F_bed (DEM)",
            "F_added_mass (model)",
        ],
    );
}

// ---------------------------------------------------------------------------
// Bad folders and bad files
// ---------------------------------------------------------------------------

#[test]
fn a_folder_without_loam_files_is_not_a_loam_result() {
    let dir = TempDir::new("empty");
    std::fs::write(dir.path().join("notes.txt"), "hello").expect("write");
    match plot_dir(dir.path(), &PlotSettings::default()) {
        Err(PlotError::NotALoamResult { path, missing }) => {
            assert_eq!(path, dir.path());
            assert!(missing.contains("solution.json"), "{missing}");
        }
        other => panic!("expected NotALoamResult, got {other:?}"),
    }
    assert!(!dir.path().join("plots").exists());

    // Half a run names the other half.
    std::fs::write(dir.path().join("solution.json"), "{}").expect("write");
    let error = plot_dir(dir.path(), &PlotSettings::default()).expect_err("half a run");
    assert!(
        matches!(&error, PlotError::NotALoamResult { missing, .. } if missing.contains("trajectory.csv is missing")),
        "{error}"
    );

    let nowhere = dir.path().join("nowhere");
    let error = plot_dir(&nowhere, &PlotSettings::default()).expect_err("no folder");
    assert!(
        matches!(&error, PlotError::NotAFolder { path } if *path == nowhere),
        "{error}"
    );
}

/// A run folder whose files are good but for what each case changes: the two files belong
/// together (solution.json records their plan_id), so the reading itself is what fails.
fn run_with(dir: &Path, trajectory: &str) {
    let mut solution: serde_json::Value = serde_json::from_str(
        r#"{"problem": {"name": "t", "task": {"apex_height": 0.05},
            "terrain": {"model": "rigid"}},
            "converged": true, "apex_rise_m": 0.05,
            "phases": [{"domain": "stance", "nodes": 2, "duration_s": 0.1},
                       {"domain": "flight", "nodes": 2, "duration_s": 0.1}]}"#,
    )
    .expect("JSON");
    solution["plan_id"] =
        loam::output::identity::plan_id(&solution["problem"], trajectory.as_bytes()).into();
    std::fs::write(dir.join("solution.json"), solution.to_string()).expect("write");
    std::fs::write(dir.join("trajectory.csv"), trajectory).expect("write");
}

const HEADER: &str = "t,phase,node,z_m,v_m,z_r,v_r,z_f,v_f,e,z_d,u,F_m,F_s,F_terrain\n";
const ROW: &str = ",0,0.02,0,0.05,0,0,0,0.06,0,0,10,11,11\n";

#[test]
fn a_malformed_csv_names_the_file_line_and_column() {
    let dir = TempDir::new("malformed");
    let good = |t: &str, phase: &str| format!("{t},{phase}{ROW}");

    // A value that is not a number, on line 4 (header is line 1).
    let text = format!(
        "{HEADER}{}{}{}",
        good("0", "stance"),
        good("0.1", "stance"),
        good("0.2", "flight").replace("0.05", "0.o5")
    );
    run_with(dir.path(), &text);
    let error = plot_dir(dir.path(), &PlotSettings::default()).expect_err("bad number");
    match &error {
        PlotError::Csv {
            path,
            line,
            message,
        } => {
            assert_eq!(path, &dir.path().join("trajectory.csv"));
            assert_eq!(*line, 4);
            assert!(
                message.contains("z_r") && message.contains("0.o5"),
                "{message}"
            );
        }
        other => panic!("expected Csv, got {other:?}"),
    }
    let shown = error.to_string();
    assert!(shown.contains("trajectory.csv:4:"), "{shown}");

    // A record with a field too few, on line 3.
    let text = format!(
        "{HEADER}{}{}",
        good("0", "stance"),
        good("0.1", "stance").replacen(",0", "", 1)
    );
    run_with(dir.path(), &text);
    let error = plot_dir(dir.path(), &PlotSettings::default()).expect_err("short row");
    assert!(
        matches!(&error, PlotError::Csv { line: 3, message, .. } if message.contains("14 fields") && message.contains("15")),
        "{error}"
    );

    // A column missing.
    let text = format!(
        "{}{}",
        HEADER.replace(",F_s", ""),
        good("0", "stance").replacen(",11", "", 1)
    );
    run_with(dir.path(), &text);
    let error = plot_dir(dir.path(), &PlotSettings::default()).expect_err("no F_s");
    assert!(
        matches!(&error, PlotError::MissingColumn { column, .. } if column == "F_s"),
        "{error}"
    );

    // Time running backwards, on line 3.
    let text = format!(
        "{HEADER}{}{}",
        good("0.1", "stance"),
        good("0.05", "flight")
    );
    run_with(dir.path(), &text);
    let error = plot_dir(dir.path(), &PlotSettings::default()).expect_err("backwards");
    assert!(matches!(&error, PlotError::Csv { line: 3, .. }), "{error}");

    // A sweep with an unknown terrain, on line 2.
    let sweep = TempDir::new("bad-sweep");
    std::fs::write(
        sweep.path().join("sweep.csv"),
        "plan_terrain,apex_target_m,status,converged,planned_apex_m,solve_s,iterations,\
         replay_terrain,achieved_apex_m,error_m,run_dir\n\
         sand,0.05,Solve_Succeeded,true,0.05,0.3,100,rigid,0.05,0,x\n",
    )
    .expect("write");
    let error = plot_dir(sweep.path(), &PlotSettings::default()).expect_err("sand");
    let shown = error.to_string();
    assert!(
        shown.contains("sweep.csv:2:") && shown.contains("rigid, poppy_seeds"),
        "{shown}"
    );
}

#[test]
fn the_command_line_plots_or_refuses_with_exit_code_2() {
    let dir = TempDir::new("cli");
    let output = loam(&["plot", dir.path().to_str().expect("UTF-8")]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.starts_with("error: ") && stderr.contains("is not a loam result"),
        "{stderr}"
    );

    let text = format!("{HEADER}0,stance{ROW}0.1,stance{ROW}0.2,flight{ROW}");
    run_with(dir.path(), &text);
    let output = loam(&["plot", dir.path().to_str().expect("UTF-8"), "--png-only"]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(dir.path().join("plots/run.png").is_file());
    assert!(!dir.path().join("plots/run.svg").exists());
}
