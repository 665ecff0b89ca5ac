//! `loam robot draw`: a robot file's robot in its standing posture, at equal scale on the
//! ground: the links, the feet (a flat sole drawn as its sole), each joint named, the centre
//! of mass marked.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::planar::{ground_chart, stick_figure};
use super::style::{
    draw_error, draw_markers, font, range_of, Figure, Marker, BLUE, DARK, TICK_SIZE, TITLE_SIZE,
    VERMILION,
};
use super::PlotError;
use crate::model::planar::PlanarRobot;

/// A robot at one configuration.
pub struct RobotDrawing<'a> {
    pub robot: &'a PlanarRobot,
    /// The configuration drawn (the standing posture for `loam robot draw`).
    pub q: Vec<f64>,
}

const WIDTH: u32 = 900;
const HEIGHT: u32 = 760;
const TITLE: u32 = 64;

impl Figure for RobotDrawing<'_> {
    fn size(&self) -> (u32, u32) {
        (WIDTH, HEIGHT)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError> {
        let robot = self.robot;
        let body = &robot.body;
        let (title_area, rest) = root.split_vertically(TITLE);
        let com = body.centre_of_mass(&self.q);
        title_area
            .draw(&Text::new(
                format!(
                    "robot `{}`: {} bodies, {} degrees of freedom, {} actuators, {:.3} kg",
                    robot.name,
                    body.bodies.len(),
                    robot.n_q(),
                    robot.inputs.len(),
                    body.total_mass()
                ),
                (16, 8),
                font(TITLE_SIZE),
            ))
            .map_err(draw_error)?;
        title_area
            .draw(&Text::new(
                format!(
                    "standing posture; centre of mass (x, z) = ({:.3}, {:.3}) m (red); joints in blue",
                    com[0], com[1]
                ),
                (16, 36),
                font(TICK_SIZE),
            ))
            .map_err(draw_error)?;
        let touching = vec![true; robot.contacts.len()];
        let pose = stick_figure(robot, &self.q, &touching);
        let frames = body.frames(&self.q);
        // Everything drawn: the links' ends, the joints, the centre of mass.
        let drawn: Vec<(f64, f64)> = pose
            .segments
            .iter()
            .flatten()
            .copied()
            .chain(frames.iter().map(|f| (f.position[0], f.position[1])))
            .chain([(com[0], com[1])])
            .collect();
        let xs = drawn.iter().map(|p| p.0);
        let zs = drawn.iter().map(|p| p.1).chain([0.0]);
        // Room on the right for the joints' labels.
        let (x_lo, x_hi) = range_of(xs, 0.25);
        let x_range = (x_lo, x_hi + 0.5 * (x_hi - x_lo));
        let (z_lo, z_hi) = range_of(zs, 0.1);
        let span = z_hi - z_lo;
        let mut chart = ground_chart(&rest, x_range, (z_lo.min(-0.05 * span), z_hi), 0.0, "x [m]")?;
        pose.draw(&mut chart, DARK, 4)?;
        let joints: Vec<(f64, f64)> = frames
            .iter()
            .skip(1)
            .map(|f| (f.position[0], f.position[1]))
            .collect();
        draw_markers(&mut chart, &joints, (Marker::Circle, true), 6, BLUE)?;
        // Joints of legs that coincide in the plane (left and right) share one label.
        let joint_names = frames
            .iter()
            .enumerate()
            .skip(1)
            .map(|(b, f)| (f.position, robot.coordinates[b + 2].name.clone()));
        for ([x, z], label) in coincident(joint_names) {
            // Right of the joint's marker.
            let at = (x + 0.03 * span, z + 0.01 * span);
            chart
                .draw_series(std::iter::once(Text::new(
                    label,
                    at,
                    font(TICK_SIZE).color(&BLUE),
                )))
                .map_err(draw_error)?;
        }
        draw_markers(
            &mut chart,
            &[(com[0], com[1])],
            (Marker::Circle, false),
            9,
            VERMILION,
        )?;
        let contact_names = robot
            .contacts
            .iter()
            .map(|c| (body.point(&self.q, c.body, c.point), c.name.clone()));
        for ([x, z], label) in coincident(contact_names) {
            let at = (x, z - 0.04 * span);
            chart
                .draw_series(std::iter::once(Text::new(
                    label,
                    at,
                    font(TICK_SIZE).color(&DARK),
                )))
                .map_err(draw_error)?;
        }
        Ok(())
    }
}

/// Named points, those at the same place (within 1 µm) joined into one label `a / b`.
fn coincident(points: impl Iterator<Item = ([f64; 2], String)>) -> Vec<([f64; 2], String)> {
    let mut groups: Vec<([f64; 2], String)> = Vec::new();
    for (p, name) in points {
        let same = |q: &[f64; 2]| (p[0] - q[0]).hypot(p[1] - q[1]) < 1e-6;
        match groups.iter_mut().find(|(q, _)| same(q)) {
            Some((_, label)) => {
                label.push_str(" / ");
                label.push_str(&name);
            }
            None => groups.push((p, name)),
        }
    }
    groups
}
