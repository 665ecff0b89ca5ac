//! `loam plot` on a planar robot's run (the monopod hop, a committed fixture): the
//! `planar_run` and `filmstrip` figures are written as PNG and SVG, decode and are not blank,
//! with and without a `replay.csv` beside the plan.

use crate::common;

use common::run::write_record;
use common::temp_dir::TempDir;
use std::collections::HashSet;
use std::path::Path;
use std::process::Command;

const FIGURES: [&str; 2] = ["planar_run", "filmstrip"];

/// A copy of the fixture run in a fresh folder.
fn fixture(label: &str) -> TempDir {
    let dir = TempDir::new(label);
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/planar_run");
    for name in ["solution.json", "trajectory.csv"] {
        std::fs::copy(source.join(name), dir.path().join(name)).expect("copy fixture");
    }
    dir
}

fn plot(dir: &Path) {
    let output = Command::new(env!("CARGO_BIN_EXE_loam"))
        .arg("plot")
        .arg(dir)
        .output()
        .expect("run loam");
    assert!(
        output.status.success(),
        "loam plot failed: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Decodes `path` and checks that its middle (the plot area) holds several colours.
fn check_png(path: &Path) {
    let image = image::open(path)
        .unwrap_or_else(|e| panic!("{} does not decode: {e}", path.display()))
        .to_rgb8();
    let (w, h) = image.dimensions();
    assert!(
        w >= 600 && h >= 400,
        "{}: {w}x{h} is too small",
        path.display()
    );
    let mut colours = HashSet::new();
    for y in h / 10..h * 9 / 10 {
        for x in w / 10..w * 9 / 10 {
            colours.insert(image.get_pixel(x, y).0);
        }
    }
    assert!(
        colours.len() >= 8,
        "{}: only {} distinct colours in the plot area",
        path.display(),
        colours.len()
    );
    let svg = path.with_extension("svg");
    let text = std::fs::read_to_string(&svg)
        .unwrap_or_else(|e| panic!("{} unreadable: {e}", svg.display()));
    assert!(
        text.starts_with("<svg") && text.contains("</svg>"),
        "{} is not an SVG",
        svg.display()
    );
}

#[test]
fn planar_run_plots_plan() {
    let dir = fixture("plan");
    plot(dir.path());
    for figure in FIGURES {
        check_png(&dir.path().join("plots").join(format!("{figure}.png")));
    }
    // The hopper's figure is not drawn for a planar robot.
    assert!(!dir.path().join("plots/run.png").exists());
}

/// A replay.csv as the simulator writes it: t, mode, the coordinates, inputs and contact
/// forces, here the plan's own rows slightly perturbed; with its record of the plan.
#[test]
fn planar_run_plots_replay_overlay() {
    let dir = fixture("replay");
    let plan = std::fs::read_to_string(dir.path().join("trajectory.csv")).expect("read plan");
    let mut lines = plan.lines();
    let header: Vec<&str> = lines.next().expect("header").split(',').collect();
    let keep: Vec<usize> = (0..header.len())
        .filter(|&j| !matches!(header[j], "phase" | "node"))
        .filter(|&j| !header[j].starts_with("dd_") && !header[j].starts_with("impulse_"))
        .collect();
    let mut replay = String::from("t,mode");
    for &j in &keep[1..] {
        replay += &format!(",{}", header[j]);
    }
    replay.push('\n');
    for line in lines {
        let fields: Vec<&str> = line.split(',').collect();
        let value = |j: usize| fields[j].parse::<f64>().expect("number");
        replay += &format!(
            "{},{}",
            value(keep[0]),
            if value(1) == 1.0 { "flight" } else { "stance" }
        );
        for &j in &keep[1..] {
            replay += &format!(",{}", value(j) * 1.03);
        }
        replay.push('\n');
    }
    let csv = dir.write("replay.csv", &replay);
    write_record(&dir.path().join("replay.json"), &csv, Some(dir.path()));
    plot(dir.path());
    for figure in FIGURES {
        check_png(&dir.path().join("plots").join(format!("{figure}.png")));
    }
}

/// `--animate` adds `animation.gif`: at least 4 s of frames at 25 per second (the monopod's
/// 0.87 s hop is slowed down), every frame the figure's size, and the robot moves between
/// the first and the last.
#[test]
fn animate_writes_a_moving_gif() {
    let dir = fixture("animate");
    let output = Command::new(env!("CARGO_BIN_EXE_loam"))
        .args(["plot", "--animate", "--png-only"])
        .arg(dir.path())
        .output()
        .expect("run loam");
    assert!(output.status.success(), "{output:?}");
    let path = dir.path().join("plots/animation.gif");
    let mut options = gif::DecodeOptions::new();
    options.set_color_output(gif::ColorOutput::RGBA);
    let mut decoder = options
        .read_info(std::fs::File::open(&path).expect("animation.gif written"))
        .expect("a GIF");
    let (w, h) = (decoder.width(), decoder.height());
    assert!(w >= 600 && h >= 400, "{w}x{h}");
    let mut frames: Vec<Vec<u8>> = Vec::new();
    let mut playback = 0.0;
    while let Some(frame) = decoder.read_next_frame().expect("a frame") {
        assert_eq!((frame.width, frame.height), (w, h));
        playback += frame.delay as f64 / 100.0;
        frames.push(frame.buffer.to_vec());
    }
    assert!(frames.len() >= 100, "{} frames", frames.len());
    assert!(playback >= 4.0, "plays for {playback} s");
    let (first, last) = (&frames[0], frames.last().unwrap());
    let differing = first
        .chunks(4)
        .zip(last.chunks(4))
        .filter(|(a, b)| a != b)
        .count();
    assert!(
        differing > 1000,
        "only {differing} pixels differ between the first and the last frame"
    );
    // The other figures are drawn as without the flag.
    assert!(dir.path().join("plots/filmstrip.png").exists());
}
