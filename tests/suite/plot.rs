//! `loam plot` and the `loam::plot` library: every figure is produced from realistic data
//! (real `loam solve` plans; replays, sweep tables and DEM output synthesised from them until
//! the simulators write their own), decodes, has the size its SVG twin declares, is not blank
//! and touches no edge; bad folders and bad files give errors that name the file and line.

use crate::common;
use common::csv::read_quoted;

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

/// A copy of the committed planar run (the monopod's hop: `solution.json`, `trajectory.csv`)
/// in `dir/run`.
fn fixture_run(dir: &Path) -> std::path::PathBuf {
    let run = dir.join("run");
    std::fs::create_dir_all(&run).expect("mkdir");
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/planar_run");
    for name in ["solution.json", "trajectory.csv"] {
        std::fs::copy(source.join(name), run.join(name)).expect("copy fixture");
    }
    run
}

/// Writes a replay in the simulator's format (t, mode, then the plan's coordinates, inputs
/// and contact forces) from the plan's rows with every value scaled by `scale`, so that it is
/// visibly a different motion of the same shape; with its JSON record of the plan.
fn synthetic_replay(run: &Path, name: &str, scale: f64) {
    let (header, rows) = read_csv(&run.join("trajectory.csv"));
    let keep: Vec<usize> = (1..header.len())
        .filter(|&j| !matches!(header[j].as_str(), "phase" | "node"))
        .filter(|&j| !header[j].starts_with("dd_") && !header[j].starts_with("impulse_"))
        .collect();
    let mut out = String::from("t,mode");
    for &j in &keep {
        out += &format!(",{}", header[j]);
    }
    out.push('\n');
    for row in &rows {
        let value = |j: usize| row[j].parse::<f64>().expect("number");
        let mode = if value(1) == 1.0 { "flight" } else { "stance" };
        out += &format!("{},{mode}", value(0));
        for &j in &keep {
            out += &format!(",{:.9e}", value(j) * scale);
        }
        out.push('\n');
    }
    let csv = run.join(name);
    std::fs::write(&csv, out).expect("write replay");
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
    let run = fixture_run(dir.path());
    synthetic_replay(&run, "replay.csv", 1.01);
    synthetic_replay(&run, "replay-on-rigid.csv", 0.9);

    let report = plot_dir(&run, &PlotSettings::default()).expect("plot the run");
    let plots = run.join("plots");
    for stem in ["planar_run", "filmstrip", "planar_run-on-rigid"] {
        for ext in ["png", "svg"] {
            let file = plots.join(format!("{stem}.{ext}"));
            assert!(report.files.contains(&file), "{:?}", report.files);
        }
    }
    assert_eq!(
        report.replays.first(),
        Some(&run.join("replay.csv")),
        "own ground first"
    );
    assert!(report.replays.contains(&run.join("replay-on-rigid.csv")));
    check_figure(
        &plots.join("planar_run"),
        (1000, 800),
        10_000,
        &[
            "time t [s]",
            "plan (collocation nodes)",
            "replay.csv (simulated)",
            "limits",
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
    check_figure(
        &out.join("planar_run"),
        (1000, 800),
        5_000,
        &["no replay.csv in this folder"],
    );
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

/// The committed planar run in `dir` with `edit` applied to its trajectory's lines (header
/// first): solution.json records the edited file's plan_id, so the two files belong together
/// and the reading itself is what fails.
fn run_with(dir: &Path, edit: impl Fn(&mut Vec<String>)) {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/planar_run");
    let text = std::fs::read_to_string(source.join("trajectory.csv")).expect("fixture");
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    edit(&mut lines);
    let trajectory = lines.join("\n") + "\n";
    let mut solution: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(source.join("solution.json")).expect("fixture"),
    )
    .expect("JSON");
    solution["plan_id"] =
        loam::output::identity::plan_id(&solution["problem"], trajectory.as_bytes()).into();
    std::fs::write(dir.join("solution.json"), solution.to_string()).expect("write");
    std::fs::write(dir.join("trajectory.csv"), trajectory).expect("write");
}

/// Line `line`'s (1-based, header is 1) fields, edited by `f`.
fn edit_fields(lines: &mut [String], line: usize, f: impl Fn(&mut Vec<String>)) {
    let mut fields: Vec<String> = lines[line - 1].split(',').map(str::to_string).collect();
    f(&mut fields);
    lines[line - 1] = fields.join(",");
}

#[test]
fn a_malformed_csv_names_the_file_line_and_column() {
    let dir = TempDir::new("malformed");

    // A value that is not a number, on line 4 (header is line 1), column z.
    run_with(dir.path(), |lines| {
        edit_fields(lines, 4, |f| f[4] = "0.o5".into())
    });
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
                message.contains("column z:") && message.contains("0.o5"),
                "{message}"
            );
        }
        other => panic!("expected Csv, got {other:?}"),
    }
    let shown = error.to_string();
    assert!(shown.contains("trajectory.csv:4:"), "{shown}");

    // A record with a field too few, on line 3.
    run_with(dir.path(), |lines| {
        edit_fields(lines, 3, |f| {
            f.pop();
        })
    });
    let error = plot_dir(dir.path(), &PlotSettings::default()).expect_err("short row");
    assert!(
        matches!(&error, PlotError::Csv { line: 3, message, .. } if message.contains("25 fields") && message.contains("26")),
        "{error}"
    );

    // A column missing.
    run_with(dir.path(), |lines| {
        let j = lines[0]
            .split(',')
            .position(|c| c == "foot_fz")
            .expect("foot_fz");
        for line in 1..=lines.len() {
            edit_fields(lines, line, |f| {
                f.remove(j);
            });
        }
    });
    let error = plot_dir(dir.path(), &PlotSettings::default()).expect_err("no foot_fz");
    assert!(
        matches!(&error, PlotError::MissingColumn { column, .. } if column == "foot_fz"),
        "{error}"
    );

    // Time running backwards, on line 3.
    run_with(dir.path(), |lines| {
        edit_fields(lines, 3, |f| f[0] = "-0.01".into())
    });
    let error = plot_dir(dir.path(), &PlotSettings::default()).expect_err("backwards");
    assert!(
        matches!(&error, PlotError::Csv { line: 3, message, .. } if message.contains("must not decrease")),
        "{error}"
    );

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

    run_with(dir.path(), |_| {});
    let output = loam(&["plot", dir.path().to_str().expect("UTF-8"), "--png-only"]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(dir.path().join("plots/planar_run.png").is_file());
    assert!(!dir.path().join("plots/planar_run.svg").exists());
}
