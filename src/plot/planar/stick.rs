//! A planar robot's stick figure at one configuration, and which of its feet touch the ground.

use plotters::prelude::*;
use plotters::style::RGBColor;

use super::PlanarRun;
use crate::model::multibody::Multibody;
use crate::model::planar::PlanarRobot;
use crate::plot::style::{draw_line, draw_markers, Chart, Marker, Stroke};
use crate::plot::PlotError;

/// Shorter than this a segment is drawn as nothing [m].
const DEGENERATE: f64 = 1e-3;

/// What a pose is drawn with, in world coordinates [m].
pub(in crate::plot) struct Pose {
    pub t: f64,
    pub segments: Vec<[(f64, f64); 2]>,
    /// Feet: (point, sole end points if a flat sole, in contact in the plan's phase).
    pub feet: Vec<((f64, f64), Option<[(f64, f64); 2]>, bool)>,
}

impl Pose {
    /// The pose moved right by `dx` \[m\].
    pub(in crate::plot) fn shift(&mut self, dx: f64) {
        for segment in &mut self.segments {
            for p in segment.iter_mut() {
                p.0 += dx;
            }
        }
        for (point, sole, _) in &mut self.feet {
            point.0 += dx;
            if let Some(ends) = sole {
                for p in ends.iter_mut() {
                    p.0 += dx;
                }
            }
        }
    }

    /// Draws the pose's segments `width` px wide, flat soles and feet markers 2 px wider
    /// (a foot on the ground filled).
    pub(in crate::plot) fn draw<DB: DrawingBackend>(
        &self,
        chart: &mut Chart<DB>,
        color: RGBColor,
        width: u32,
    ) -> Result<(), PlotError> {
        for seg in &self.segments {
            draw_line(chart, seg, color, Stroke::Solid, width)?;
        }
        for &(point, sole, touching) in &self.feet {
            if let Some(sole) = sole {
                draw_line(chart, &sole, color, Stroke::Solid, width + 2)?;
            }
            draw_markers(
                chart,
                &[point],
                (Marker::Circle, touching),
                width as i32 + 2,
                color,
            )?;
        }
        Ok(())
    }
}

/// The segments and feet of `robot` at `q`.
pub(in crate::plot) fn stick_figure(robot: &PlanarRobot, q: &[f64], touching: &[bool]) -> Pose {
    let body: &Multibody = &robot.body;
    let frames = body.frames(q);
    let p = |a: [f64; 2]| (a[0], a[1]);
    let long = |a: (f64, f64), b: (f64, f64)| (a.0 - b.0).hypot(a.1 - b.1) > DEGENERATE;
    let mut segments = Vec::new();
    let mut feet = Vec::new();
    for (b, frame) in frames.iter().enumerate() {
        let origin = p(frame.position);
        let mut drawn = false;
        let mut has_child_or_contact = false;
        for (c, child) in body.bodies.iter().enumerate() {
            if child.joint.as_ref().is_some_and(|j| j.parent == b) {
                has_child_or_contact = true;
                let end = p(frames[c].position);
                if long(origin, end) {
                    segments.push([origin, end]);
                    drawn = true;
                }
            }
        }
        for (k, contact) in robot.contacts.iter().enumerate() {
            if contact.body != b {
                continue;
            }
            has_child_or_contact = true;
            let point = p(frame.transform(contact.point));
            if long(origin, point) {
                segments.push([origin, point]);
                drawn = true;
            }
            let sole = (contact.half_width > 0.0).then(|| {
                let h = contact.half_width;
                [
                    p(frame.transform([contact.point[0] - h, contact.point[1]])),
                    p(frame.transform([contact.point[0] + h, contact.point[1]])),
                ]
            });
            feet.push((point, sole, touching.get(k).copied().unwrap_or(false)));
        }
        if !has_child_or_contact {
            let com = p(frame.transform(body.bodies[b].com));
            if long(origin, com) {
                segments.push([origin, com]);
                drawn = true;
            }
        }
        if !drawn && !has_child_or_contact {
            // Nothing to join: a short stub along the body's x axis.
            let h = 0.03;
            segments.push([p(frame.transform([-h, 0.0])), p(frame.transform([h, 0.0]))]);
        } else if !drawn && b == 0 && joints_at_origin(body) {
            // A base whose joints sit at its own origin: the bar with its mass and inertia
            // (length √(12 I / m)) along its x axis, so that its pitch shows.
            let bb = &body.bodies[b];
            let h = if bb.mass > 0.0 && bb.inertia > 0.0 {
                (0.5 * (12.0 * bb.inertia / bb.mass).sqrt()).clamp(0.02, 0.5)
            } else {
                0.05
            };
            segments.push([p(frame.transform([-h, 0.0])), p(frame.transform([h, 0.0]))]);
        }
    }
    Pose {
        t: 0.0,
        segments,
        feet,
    }
}

/// Whether every joint on the base is a revolute one at the base's origin, so that the base
/// has no segment of its own in any pose (a base whose prismatic child passes through its
/// origin, the hopper's motor at mid-stroke, has one in every other pose: no bar then).
fn joints_at_origin(body: &Multibody) -> bool {
    body.bodies
        .iter()
        .filter_map(|b| b.joint.as_ref())
        .filter(|j| j.parent == 0)
        .all(|j| j.origin == [0.0, 0.0] && j.kind == crate::model::multibody::JointKind::Revolute)
}

/// Per contact, whether it is on the ground at row `i` of the run: in the plan's phase, or
/// (a simulation, which has no phases) carrying a normal force.
pub(in crate::plot) fn touching(run: &PlanarRun, i: usize) -> Vec<bool> {
    let phase = run.plan.phase.get(i).and_then(|&p| run.phases.get(p));
    run.robot
        .contacts
        .iter()
        .enumerate()
        .map(|(c, contact)| {
            phase.is_some_and(|p| p.contacts.contains(&contact.name))
                || run.plan.fz.get(c).and_then(|f| f.as_ref()?.get(i).copied()) > Some(0.0)
        })
        .collect()
}
