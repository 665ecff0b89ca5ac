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
        let xs = pose
            .segments
            .iter()
            .flatten()
            .map(|a| a.0)
            .chain(frames.iter().map(|f| f.position[0]))
            .chain([com[0]]);
        let zs = pose
            .segments
            .iter()
            .flatten()
            .map(|a| a.1)
            .chain(frames.iter().map(|f| f.position[1]))
            .chain([com[1], 0.0]);
        let x_range = range_of(xs, 0.25);
        let (z_lo, z_hi) = range_of(zs, 0.1);
        let span = z_hi - z_lo;
        let mut chart = ground_chart(&rest, x_range, (z_lo.min(-0.05 * span), z_hi), 0.0)?;
        pose.draw(&mut chart, DARK, 4)?;
        let joints: Vec<(f64, f64)> = frames
            .iter()
            .skip(1)
            .map(|f| (f.position[0], f.position[1]))
            .collect();
        draw_markers(&mut chart, &joints, (Marker::Circle, true), 6, BLUE)?;
        for (b, frame) in frames.iter().enumerate().skip(1) {
            let name = &robot.coordinates[b + 2].name;
            chart
                .draw_series(std::iter::once(Text::new(
                    name.clone(),
                    // Right of the joint's marker.
                    (
                        frame.position[0] + 0.03 * span,
                        frame.position[1] + 0.01 * span,
                    ),
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
        for contact in &robot.contacts {
            let point = body.point(&self.q, contact.body, contact.point);
            chart
                .draw_series(std::iter::once(Text::new(
                    contact.name.clone(),
                    (point[0], point[1] - 0.04 * span),
                    font(TICK_SIZE).color(&DARK),
                )))
                .map_err(draw_error)?;
        }
        Ok(())
    }
}
