//! `animation.gif`: a planar robot's run as a moving stick figure (`loam plot RUN --animate`).
//!
//! Frames are drawn at equal time steps of the run (a plan or an MDP simulation), each pose
//! interpolated linearly between the run's rows, on fixed axes at equal scale that hold every
//! pose, with the ground, the centre of mass's path (faint ahead, solid behind) and the feet
//! (filled on the ground). Runs shorter than [`MIN_PLAYBACK`] play in slow motion so a hop
//! can be followed; the title says how slow. The GIF is written by the `gif` crate (pure
//! Rust), each frame quantised to its own 256-colour palette.

use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::RGBColor;

use super::planar::{ground_chart, stick_figure, touching, PlanarRun, Pose};
use super::style::{
    draw_error, draw_line, font, range_of, register_font, Stroke, BLUE, TITLE_SIZE, VERMILION,
};
use super::PlotError;

/// Frames per second of the GIF.
const FPS: f64 = 25.0;
/// The shortest playback [s]: a shorter run is slowed down to last this long.
const MIN_PLAYBACK: f64 = 4.0;
/// The most frames written (a long run plays faster than real time rather than grow).
const MAX_FRAMES: usize = 400;
const WIDTH: u32 = 900;
const HEIGHT: u32 = 560;
const TITLE: u32 = 36;

/// The animation of one run.
pub struct Animation<'a> {
    run: &'a PlanarRun,
    /// Per frame: its time and pose.
    frames: Vec<Pose>,
    com: Vec<(f64, f64)>,
    x_range: (f64, f64),
    z_range: (f64, f64),
    /// Playback speed relative to real time (1 = real time, 0.25 = four times slower).
    speed: f64,
}

impl<'a> Animation<'a> {
    pub fn new(run: &'a PlanarRun) -> Animation<'a> {
        let plan = &run.plan;
        let n = plan.t.len();
        let (t0, t1) = (
            plan.t.first().copied().unwrap_or(0.0),
            plan.t.last().copied().unwrap_or(0.0),
        );
        let duration = (t1 - t0).max(0.0);
        let playback = duration.max(MIN_PLAYBACK);
        let count = ((playback * FPS).round() as usize).clamp(2, MAX_FRAMES);
        let speed = duration / ((count - 1) as f64 / FPS);
        let frames = (0..count)
            .map(|k| {
                let t = t0 + duration * k as f64 / (count - 1) as f64;
                // The rows around t (rows may repeat a time at a phase boundary).
                let i = plan.t.partition_point(|&s| s < t).min(n.saturating_sub(1));
                let (a, b) = (i.saturating_sub(1), i);
                let w = if plan.t[b] > plan.t[a] {
                    ((t - plan.t[a]) / (plan.t[b] - plan.t[a])).clamp(0.0, 1.0)
                } else {
                    1.0
                };
                let (qa, qb) = (plan.configuration(a), plan.configuration(b));
                let q: Vec<f64> = qa.iter().zip(&qb).map(|(x, y)| x + w * (y - x)).collect();
                let row = if w < 0.5 { a } else { b };
                let mut pose = stick_figure(&run.robot, &q, &touching(run, row));
                pose.t = t;
                pose
            })
            .collect::<Vec<_>>();
        let com = (0..n)
            .map(|i| {
                let c = run.robot.body.centre_of_mass(&plan.configuration(i));
                (c[0], c[1])
            })
            .collect::<Vec<_>>();
        let points = || {
            frames
                .iter()
                .flat_map(|p: &Pose| p.segments.iter().flatten().copied())
                .chain(com.iter().copied())
        };
        let x_range = range_of(points().map(|p| p.0), 0.08);
        let (z_lo, z_hi) = range_of(points().map(|p| p.1).chain([0.0]), 0.05);
        let span = z_hi - z_lo;
        Animation {
            run,
            frames,
            com,
            x_range,
            z_range: (z_lo.min(-0.04 * span), z_hi + 0.05 * span),
            speed,
        }
    }

    fn draw_frame<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        k: usize,
    ) -> Result<(), PlotError> {
        let pose = &self.frames[k];
        let (title_area, rest) = root.split_vertically(TITLE);
        let pace = if (self.speed - 1.0).abs() > 1e-3 {
            format!(", {:.2}x speed", self.speed)
        } else {
            String::new()
        };
        title_area
            .draw(&Text::new(
                format!("{}: t = {:.3} s{pace}", self.run.name, pose.t),
                (16, 8),
                font(TITLE_SIZE),
            ))
            .map_err(draw_error)?;
        let mut chart = ground_chart(&rest, self.x_range, self.z_range, self.run.slope, "x [m]")?;
        // The centre of mass's path: faint ahead, solid behind.
        let now = self.run.plan.t.partition_point(|&s| s <= pose.t);
        draw_line(
            &mut chart,
            &self.com,
            RGBColor(240, 190, 170),
            Stroke::Solid,
            1,
        )?;
        draw_line(&mut chart, &self.com[..now], VERMILION, Stroke::Solid, 2)?;
        pose.draw(&mut chart, BLUE, 4)
    }

    /// Writes the GIF to `path` (atomically) and returns it.
    pub fn save(&self, path: &Path) -> Result<PathBuf, PlotError> {
        register_font()?;
        let render = |message: String| PlotError::Render {
            path: path.to_path_buf(),
            message,
        };
        let (w, h) = (WIDTH as u16, HEIGHT as u16);
        let mut bytes = Vec::new();
        {
            let mut encoder =
                gif::Encoder::new(&mut bytes, w, h, &[]).map_err(|e| render(e.to_string()))?;
            encoder
                .set_repeat(gif::Repeat::Infinite)
                .map_err(|e| render(e.to_string()))?;
            let delay = (100.0 / FPS).round() as u16;
            let mut pixels = vec![0u8; WIDTH as usize * HEIGHT as usize * 3];
            for k in 0..self.frames.len() {
                {
                    let root = BitMapBackend::with_buffer(&mut pixels, (WIDTH, HEIGHT))
                        .into_drawing_area();
                    root.fill(&WHITE).map_err(draw_error)?;
                    self.draw_frame(&root, k)
                        .map_err(|e| render(e.to_string()))?;
                    root.present().map_err(draw_error)?;
                }
                let mut frame = gif::Frame::from_rgb_speed(w, h, &pixels, 20);
                // Hold the last pose a second before the loop starts again.
                frame.delay = if k + 1 == self.frames.len() {
                    100
                } else {
                    delay
                };
                encoder
                    .write_frame(&frame)
                    .map_err(|e| render(e.to_string()))?;
            }
        }
        crate::output::write_atomic(path, &bytes)?;
        Ok(path.to_path_buf())
    }
}
