//! Side-view renders of the bed: an orthographic projection onto the x-z plane (x to the
//! right, z up, the viewer on the −y side looking along +y), grains as filled discs coloured
//! by speed with viridis, bodies as outlines, a colour bar, a scale bar and the time.
//!
//! The image is `width_px` wide: the plot on the left, a panel of [`PANEL_PX`] on the right
//! for the colour bar. The plot keeps the aspect of the view (one scale for x and z), so
//! its height is `(width_px − PANEL_PX) · (z span / x span)`, rounded; the image is at least
//! [`MIN_HEIGHT_PX`] tall so that the colour bar fits (the plot sits at the top).

use std::path::Path;

use ab_glyph::{point, Font, FontRef, PxScale, ScaleFont};

use crate::output::{write_atomic, OutputError};
use crate::sim::dem::sdf::{Sdf, Vec3};

/// Width of the colour-bar panel right of the plot.
pub const PANEL_PX: u32 = 110;
/// Least image height, so that the colour bar and its labels fit.
pub const MIN_HEIGHT_PX: u32 = 220;
/// Largest plot side accepted (a mistyped range should not ask for gigabytes).
pub const MAX_SIDE_PX: u32 = 8192;
/// The plot's background.
pub const BACKGROUND: [u8; 3] = [255, 255, 255];
/// Body outlines.
pub const OUTLINE: [u8; 3] = [30, 30, 30];

#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error(
        "render: particle arrays differ in length: {positions} positions, {radii} radii, \
         {velocities} velocities (each must have one entry per grain)"
    )]
    LengthMismatch {
        positions: usize,
        radii: usize,
        velocities: usize,
    },
    #[error("render: view.{field} = {value} is not accepted ({accepted})")]
    BadView {
        field: &'static str,
        value: String,
        accepted: String,
    },
    #[error("render: the built-in font could not be read: {0}")]
    Font(String),
    #[error("render: PNG encoding failed: {0}")]
    Encode(#[from] png::EncodingError),
    #[error(transparent)]
    Output(#[from] OutputError),
}

/// What part of the bed to draw, and how large.
#[derive(Clone, Debug, PartialEq)]
pub struct SideView {
    /// Horizontal extent [min, max] (m).
    pub x_range: [f64; 2],
    /// Vertical extent [min, max] (m).
    pub z_range: [f64; 2],
    /// Width of the whole image, colour-bar panel included (px).
    pub width_px: u32,
    /// Draw only grains with |y| < slab (m); `None` draws them all.
    pub slab: Option<f64>,
    /// Speeds mapped to the ends of the colour map (m/s); `None` takes [0, fastest grain].
    /// Fix it across the frames of an animation so that colours compare.
    pub speed_range: Option<[f64; 2]>,
}

impl SideView {
    /// A view of the given extents with every grain drawn and the colour scale fitted to
    /// the frame.
    pub fn new(x_range: [f64; 2], z_range: [f64; 2], width_px: u32) -> SideView {
        SideView {
            x_range,
            z_range,
            width_px,
            slab: None,
            speed_range: None,
        }
    }

    /// The image's (width, height) in pixels, after checking the view.
    pub fn image_size(&self) -> Result<(u32, u32), RenderError> {
        let layout = self.layout()?;
        Ok((self.width_px, layout.plot_h.max(MIN_HEIGHT_PX)))
    }

    fn layout(&self) -> Result<Layout, RenderError> {
        let bad = |field, value: String, accepted: String| RenderError::BadView {
            field,
            value,
            accepted,
        };
        for (field, [lo, hi]) in [("x_range", self.x_range), ("z_range", self.z_range)] {
            if !(lo.is_finite() && hi.is_finite() && hi > lo) {
                return Err(bad(
                    field,
                    format!("[{lo}, {hi}]"),
                    "finite [min, max] with max > min, in metres".into(),
                ));
            }
        }
        let least = PANEL_PX + 100;
        if !(least..=MAX_SIDE_PX).contains(&self.width_px) {
            return Err(bad(
                "width_px",
                self.width_px.to_string(),
                format!("{least} to {MAX_SIDE_PX} pixels, colour-bar panel of {PANEL_PX} included"),
            ));
        }
        if let Some(slab) = self.slab {
            if slab.is_nan() || slab <= 0.0 {
                return Err(bad(
                    "slab",
                    slab.to_string(),
                    "a positive half width in metres, or none".into(),
                ));
            }
        }
        if let Some([lo, hi]) = self.speed_range {
            if !(lo.is_finite() && hi.is_finite() && hi > lo) {
                return Err(bad(
                    "speed_range",
                    format!("[{lo}, {hi}]"),
                    "finite [min, max] with max > min, in m/s, or none".into(),
                ));
            }
        }
        let plot_w = self.width_px - PANEL_PX;
        let scale = plot_w as f64 / (self.x_range[1] - self.x_range[0]);
        let height = ((self.z_range[1] - self.z_range[0]) * scale).round();
        if height > MAX_SIDE_PX as f64 {
            return Err(bad(
                "z_range",
                format!("[{}, {}]", self.z_range[0], self.z_range[1]),
                format!(
                    "a range giving a plot at most {MAX_SIDE_PX} px tall at this width \
                     (this one gives {height} px)"
                ),
            ));
        }
        Ok(Layout {
            plot_w,
            plot_h: (height as u32).max(1),
            scale,
            x0: self.x_range[0],
            z1: self.z_range[1],
        })
    }
}

/// One frame to draw.
pub struct RenderInput<'a> {
    pub positions: &'a [Vec3],
    pub radii: &'a [f64],
    pub velocities: &'a [Vec3],
    /// Each body's field (in its own frame, unrotated: a [`Shape`](crate::sim::dem::sdf::Shape) or a
    /// mesh's `GridSdf`)
    /// and the position of its origin. The outline drawn is the body's section by the
    /// plane y = its origin's y.
    pub bodies: &'a [(&'a dyn Sdf, Vec3)],
    /// Simulated time (s), printed in the top-left corner.
    pub time: f64,
    pub view: SideView,
}

/// Pixel geometry of the plot: x right, z up, one scale (px per metre) for both.
struct Layout {
    plot_w: u32,
    plot_h: u32,
    scale: f64,
    x0: f64,
    z1: f64,
}

impl Layout {
    /// Continuous pixel coordinates (column, row) of a point of the x-z plane.
    fn to_pixel(&self, x: f64, z: f64) -> (f64, f64) {
        ((x - self.x0) * self.scale, (self.z1 - z) * self.scale)
    }

    /// The world (x, z) at the centre of pixel (i, j).
    fn to_world(&self, i: u32, j: u32) -> (f64, f64) {
        (
            self.x0 + (i as f64 + 0.5) / self.scale,
            self.z1 - (j as f64 + 0.5) / self.scale,
        )
    }
}

/// Renders a frame and writes it as PNG.
pub fn render_side_view(path: &Path, input: &RenderInput<'_>) -> Result<(), RenderError> {
    let png = render_png(input)?;
    write_atomic(path, &png)?;
    Ok(())
}

/// Renders a frame into PNG bytes.
pub fn render_png(input: &RenderInput<'_>) -> Result<Vec<u8>, RenderError> {
    let image = render_rgb(input)?;
    let mut bytes = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut bytes, image.width, image.height);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder.write_header()?;
        writer.write_image_data(&image.pixels)?;
        writer.finish()?;
    }
    Ok(bytes)
}

/// An RGB image, rows top to bottom.
pub struct Image {
    pub width: u32,
    pub height: u32,
    pub pixels: Vec<u8>,
}

impl Image {
    fn new(width: u32, height: u32, colour: [u8; 3]) -> Image {
        Image {
            width,
            height,
            pixels: colour.repeat((width * height) as usize),
        }
    }

    /// The colour at column x, row y.
    pub fn get(&self, x: u32, y: u32) -> [u8; 3] {
        let at = 3 * (y * self.width + x) as usize;
        [self.pixels[at], self.pixels[at + 1], self.pixels[at + 2]]
    }

    fn set(&mut self, x: i64, y: i64, colour: [u8; 3]) {
        if x >= 0 && y >= 0 && x < self.width as i64 && y < self.height as i64 {
            let at = 3 * (y as usize * self.width as usize + x as usize);
            self.pixels[at..at + 3].copy_from_slice(&colour);
        }
    }

    /// Mixes `colour` over the pixel with weight `alpha` in [0, 1].
    fn blend(&mut self, x: i64, y: i64, colour: [u8; 3], alpha: f32) {
        if x >= 0 && y >= 0 && x < self.width as i64 && y < self.height as i64 {
            let at = 3 * (y as usize * self.width as usize + x as usize);
            let a = alpha.clamp(0.0, 1.0);
            for (old, &new) in self.pixels[at..at + 3].iter_mut().zip(&colour) {
                let mixed = *old as f32 + (new as f32 - *old as f32) * a;
                *old = mixed.round() as u8;
            }
        }
    }

    fn fill_rect(&mut self, x0: i64, y0: i64, x1: i64, y1: i64, colour: [u8; 3], alpha: f32) {
        for y in y0..y1 {
            for x in x0..x1 {
                self.blend(x, y, colour, alpha);
            }
        }
    }
}

/// Renders a frame into an RGB image.
pub fn render_rgb(input: &RenderInput<'_>) -> Result<Image, RenderError> {
    let n = input.positions.len();
    if input.radii.len() != n || input.velocities.len() != n {
        return Err(RenderError::LengthMismatch {
            positions: n,
            radii: input.radii.len(),
            velocities: input.velocities.len(),
        });
    }
    let view = &input.view;
    let layout = view.layout()?;
    let (width, height) = view.image_size()?;
    let font = FontRef::try_from_slice(crate::output::DEJAVU_SANS)
        .map_err(|e| RenderError::Font(e.to_string()))?;
    let mut image = Image::new(width, height, BACKGROUND);

    let speeds: Vec<f64> = input
        .velocities
        .iter()
        .map(|v| (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt())
        .collect();
    let shown: Vec<usize> = (0..n)
        .filter(|&i| {
            let p = input.positions[i];
            p.iter().all(|x| x.is_finite())
                && input.radii[i].is_finite()
                && view.slab.is_none_or(|w| p[1].abs() < w)
        })
        .collect();
    let speed_range = view.speed_range.unwrap_or_else(|| {
        let fastest = shown.iter().map(|&i| speeds[i]).fold(0.0, f64::max);
        [0.0, if fastest > 0.0 { fastest } else { 1.0 }]
    });

    draw_grains(&mut image, &layout, input, &speeds, shown, speed_range);
    for (body, origin) in input.bodies {
        draw_outline(&mut image, &layout, *body, *origin);
    }
    draw_frame(&mut image, &layout);
    draw_time(&mut image, &font, input.time);
    draw_scale_bar(&mut image, &font, &layout);
    draw_colour_bar(&mut image, &font, &layout, speed_range);
    Ok(image)
}

/// The colour of a speed: viridis at its place in `range`, clamped to the ends.
pub fn speed_colour(speed: f64, range: [f64; 2]) -> [u8; 3] {
    viridis((speed - range[0]) / (range[1] - range[0]))
}

/// Grains far to near (the viewer is at −y), each a disc of its radius with a darker rim
/// when it is large enough to show one.
fn draw_grains(
    image: &mut Image,
    layout: &Layout,
    input: &RenderInput<'_>,
    speeds: &[f64],
    mut order: Vec<usize>,
    speed_range: [f64; 2],
) {
    order.sort_by(|&a, &b| input.positions[b][1].total_cmp(&input.positions[a][1]));
    let (w, h) = (layout.plot_w as i64, layout.plot_h as i64);
    for i in order {
        let p = input.positions[i];
        let (cx, cy) = layout.to_pixel(p[0], p[2]);
        let r = input.radii[i] * layout.scale;
        let colour = speed_colour(speeds[i], speed_range);
        let rim = colour.map(|c| (c as f64 * 0.7).round() as u8);
        if r < 0.5 {
            let (x, y) = (cx.floor() as i64, cy.floor() as i64);
            if (0..w).contains(&x) && (0..h).contains(&y) {
                image.set(x, y, colour);
            }
            continue;
        }
        let (x_lo, x_hi) = (
            ((cx - r).floor() as i64).max(0),
            ((cx + r).ceil() as i64).min(w),
        );
        let (y_lo, y_hi) = (
            ((cy - r).floor() as i64).max(0),
            ((cy + r).ceil() as i64).min(h),
        );
        let inner = if r >= 3.0 {
            (r - 1.0).powi(2)
        } else {
            f64::INFINITY
        };
        for y in y_lo..y_hi {
            for x in x_lo..x_hi {
                let d2 = (x as f64 + 0.5 - cx).powi(2) + (y as f64 + 0.5 - cy).powi(2);
                if d2 <= r * r {
                    image.set(x, y, if d2 > inner { rim } else { colour });
                }
            }
        }
    }
}

/// The zero contour of the body's field in the plane through its centre: pixels whose
/// centre lies within 0.75 px of the surface, about a 1.5 px line.
fn draw_outline(image: &mut Image, layout: &Layout, body: &dyn Sdf, origin: Vec3) {
    let half_line = 0.75 / layout.scale;
    for j in 0..layout.plot_h {
        for i in 0..layout.plot_w {
            let (x, z) = layout.to_world(i, j);
            let d = body.distance([x - origin[0], 0.0, z - origin[2]]);
            if d.abs() <= half_line {
                image.set(i as i64, j as i64, OUTLINE);
            }
        }
    }
}

fn draw_frame(image: &mut Image, layout: &Layout) {
    let grey = [150, 150, 150];
    let (w, h) = (layout.plot_w as i64, layout.plot_h as i64);
    for x in 0..w {
        image.set(x, 0, grey);
        image.set(x, h - 1, grey);
    }
    for y in 0..h {
        image.set(0, y, grey);
        image.set(w - 1, y, grey);
    }
}

const TEXT: [u8; 3] = [0, 0, 0];
const LABEL_PX: f32 = 14.0;
const TICK_PX: f32 = 12.0;

fn draw_time(image: &mut Image, font: &FontRef<'_>, time: f64) {
    let text = format!("t = {time:.3} s");
    let width = text_width(font, LABEL_PX, &text);
    image.fill_rect(4, 4, 14 + width.ceil() as i64, 26, BACKGROUND, 0.8);
    draw_text(image, font, LABEL_PX, 9.0, 20.0, &text, TEXT);
}

/// A bar of a round length (1, 2 or 5 × 10^k mm) near a fifth of the plot's width, in the
/// bottom-left corner.
fn draw_scale_bar(image: &mut Image, font: &FontRef<'_>, layout: &Layout) {
    let target_mm = 0.2 * layout.plot_w as f64 / layout.scale * 1e3;
    let length_mm = nice_below(target_mm);
    let length_px = (length_mm * 1e-3 * layout.scale).round() as i64;
    let label = format!("{} mm", format_number(length_mm));
    let label_w = text_width(font, LABEL_PX, &label).ceil() as i64;
    let (x0, bottom) = (12i64, layout.plot_h as i64 - 10);
    let box_w = length_px.max(label_w) + 10;
    image.fill_rect(
        x0 - 5,
        bottom - 30,
        x0 - 5 + box_w,
        bottom + 4,
        BACKGROUND,
        0.8,
    );
    image.fill_rect(x0, bottom - 5, x0 + length_px, bottom, TEXT, 1.0);
    let label_x = x0 + (length_px - label_w) / 2;
    draw_text(
        image,
        font,
        LABEL_PX,
        label_x.max(x0) as f32,
        (bottom - 10) as f32,
        &label,
        TEXT,
    );
}

/// The largest of 1, 2, 5 × 10^k not above `x` (x > 0).
fn nice_below(x: f64) -> f64 {
    let decade = 10f64.powf(x.log10().floor());
    [5.0, 2.0, 1.0]
        .into_iter()
        .map(|m| m * decade)
        .find(|&v| v <= x * (1.0 + 1e-12))
        .unwrap_or(decade)
}

/// A step of 1, 2 or 5 × 10^k giving about four intervals over `span`.
fn nice_step(span: f64) -> f64 {
    nice_below(span / 4.0)
}

fn format_number(x: f64) -> String {
    let text = format!("{x:.6}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    if text == "-0" {
        "0".into()
    } else {
        text.into()
    }
}

fn draw_colour_bar(image: &mut Image, font: &FontRef<'_>, layout: &Layout, range: [f64; 2]) {
    let left = layout.plot_w as i64 + 14;
    let bar_w = 18i64;
    let top = 34i64;
    let bottom = image.height as i64 - 14;
    draw_text(
        image,
        font,
        LABEL_PX,
        (left - 6) as f32,
        20.0,
        "speed [m/s]",
        TEXT,
    );
    let span = (bottom - top - 1) as f64;
    for y in top..bottom {
        let t = (bottom - 1 - y) as f64 / span;
        let colour = viridis(t);
        for x in left..left + bar_w {
            image.set(x, y, colour);
        }
    }
    let step = nice_step(range[1] - range[0]);
    let first = (range[0] / step).ceil() as i64;
    let last = (range[1] / step + 1e-9).floor() as i64;
    for k in first..=last {
        let value = k as f64 * step;
        let t = (value - range[0]) / (range[1] - range[0]);
        let y = (bottom - 1) as f64 - t * span;
        let yi = y.round() as i64;
        image.fill_rect(left + bar_w, yi, left + bar_w + 5, yi + 1, TEXT, 1.0);
        let label = format_number(value);
        draw_text(
            image,
            font,
            TICK_PX,
            (left + bar_w + 8) as f32,
            (y + 4.0) as f32,
            &label,
            TEXT,
        );
    }
}

fn text_width(font: &FontRef<'_>, px: f32, text: &str) -> f32 {
    let scaled = font.as_scaled(PxScale::from(px));
    let mut width = 0.0;
    let mut previous = None;
    for c in text.chars() {
        let id = scaled.glyph_id(c);
        if let Some(p) = previous {
            width += scaled.kern(p, id);
        }
        width += scaled.h_advance(id);
        previous = Some(id);
    }
    width
}

/// Draws `text` with its baseline at row `baseline`, starting at column `x`.
fn draw_text(
    image: &mut Image,
    font: &FontRef<'_>,
    px: f32,
    x: f32,
    baseline: f32,
    text: &str,
    colour: [u8; 3],
) {
    let scaled = font.as_scaled(PxScale::from(px));
    let mut caret = x;
    let mut previous = None;
    for c in text.chars() {
        let id = scaled.glyph_id(c);
        if let Some(p) = previous {
            caret += scaled.kern(p, id);
        }
        let glyph = id.with_scale_and_position(px, point(caret, baseline));
        caret += scaled.h_advance(id);
        previous = Some(id);
        if let Some(outline) = font.outline_glyph(glyph) {
            let bounds = outline.px_bounds();
            outline.draw(|gx, gy, coverage| {
                image.blend(
                    bounds.min.x as i64 + gx as i64,
                    bounds.min.y as i64 + gy as i64,
                    colour,
                    coverage,
                );
            });
        }
    }
}

/// Matplotlib's viridis (CC0; van der Walt and Smith), 256 entries, interpolated
/// linearly: t = 0 is dark purple, t = 1 yellow; t outside [0, 1] (or NaN) is clamped.
pub fn viridis(t: f64) -> [u8; 3] {
    let t = if t.is_nan() { 0.0 } else { t.clamp(0.0, 1.0) };
    let x = t * 255.0;
    let i = (x.floor() as usize).min(254);
    let f = x - i as f64;
    let (a, b) = (VIRIDIS[i], VIRIDIS[i + 1]);
    [0, 1, 2].map(|c| (a[c] as f64 + (b[c] as f64 - a[c] as f64) * f).round() as u8)
}

/// Sampled from matplotlib 3.11's `colormaps["viridis"]` at i / 255, rounded to 8 bits.
#[rustfmt::skip]
const VIRIDIS: [[u8; 3]; 256] = [
    [68, 1, 84], [68, 2, 86], [69, 4, 87], [69, 5, 89], [70, 7, 90], [70, 8, 92], [70, 10, 93], [70, 11, 94],
    [71, 13, 96], [71, 14, 97], [71, 16, 99], [71, 17, 100], [71, 19, 101], [72, 20, 103], [72, 22, 104], [72, 23, 105],
    [72, 24, 106], [72, 26, 108], [72, 27, 109], [72, 28, 110], [72, 29, 111], [72, 31, 112], [72, 32, 113], [72, 33, 115],
    [72, 35, 116], [72, 36, 117], [72, 37, 118], [72, 38, 119], [72, 40, 120], [72, 41, 121], [71, 42, 122], [71, 44, 122],
    [71, 45, 123], [71, 46, 124], [71, 47, 125], [70, 48, 126], [70, 50, 126], [70, 51, 127], [70, 52, 128], [69, 53, 129],
    [69, 55, 129], [69, 56, 130], [68, 57, 131], [68, 58, 131], [68, 59, 132], [67, 61, 132], [67, 62, 133], [66, 63, 133],
    [66, 64, 134], [66, 65, 134], [65, 66, 135], [65, 68, 135], [64, 69, 136], [64, 70, 136], [63, 71, 136], [63, 72, 137],
    [62, 73, 137], [62, 74, 137], [62, 76, 138], [61, 77, 138], [61, 78, 138], [60, 79, 138], [60, 80, 139], [59, 81, 139],
    [59, 82, 139], [58, 83, 139], [58, 84, 140], [57, 85, 140], [57, 86, 140], [56, 88, 140], [56, 89, 140], [55, 90, 140],
    [55, 91, 141], [54, 92, 141], [54, 93, 141], [53, 94, 141], [53, 95, 141], [52, 96, 141], [52, 97, 141], [51, 98, 141],
    [51, 99, 141], [50, 100, 142], [50, 101, 142], [49, 102, 142], [49, 103, 142], [49, 104, 142], [48, 105, 142], [48, 106, 142],
    [47, 107, 142], [47, 108, 142], [46, 109, 142], [46, 110, 142], [46, 111, 142], [45, 112, 142], [45, 113, 142], [44, 113, 142],
    [44, 114, 142], [44, 115, 142], [43, 116, 142], [43, 117, 142], [42, 118, 142], [42, 119, 142], [42, 120, 142], [41, 121, 142],
    [41, 122, 142], [41, 123, 142], [40, 124, 142], [40, 125, 142], [39, 126, 142], [39, 127, 142], [39, 128, 142], [38, 129, 142],
    [38, 130, 142], [38, 130, 142], [37, 131, 142], [37, 132, 142], [37, 133, 142], [36, 134, 142], [36, 135, 142], [35, 136, 142],
    [35, 137, 142], [35, 138, 141], [34, 139, 141], [34, 140, 141], [34, 141, 141], [33, 142, 141], [33, 143, 141], [33, 144, 141],
    [33, 145, 140], [32, 146, 140], [32, 146, 140], [32, 147, 140], [31, 148, 140], [31, 149, 139], [31, 150, 139], [31, 151, 139],
    [31, 152, 139], [31, 153, 138], [31, 154, 138], [30, 155, 138], [30, 156, 137], [30, 157, 137], [31, 158, 137], [31, 159, 136],
    [31, 160, 136], [31, 161, 136], [31, 161, 135], [31, 162, 135], [32, 163, 134], [32, 164, 134], [33, 165, 133], [33, 166, 133],
    [34, 167, 133], [34, 168, 132], [35, 169, 131], [36, 170, 131], [37, 171, 130], [37, 172, 130], [38, 173, 129], [39, 173, 129],
    [40, 174, 128], [41, 175, 127], [42, 176, 127], [44, 177, 126], [45, 178, 125], [46, 179, 124], [47, 180, 124], [49, 181, 123],
    [50, 182, 122], [52, 182, 121], [53, 183, 121], [55, 184, 120], [56, 185, 119], [58, 186, 118], [59, 187, 117], [61, 188, 116],
    [63, 188, 115], [64, 189, 114], [66, 190, 113], [68, 191, 112], [70, 192, 111], [72, 193, 110], [74, 193, 109], [76, 194, 108],
    [78, 195, 107], [80, 196, 106], [82, 197, 105], [84, 197, 104], [86, 198, 103], [88, 199, 101], [90, 200, 100], [92, 200, 99],
    [94, 201, 98], [96, 202, 96], [99, 203, 95], [101, 203, 94], [103, 204, 92], [105, 205, 91], [108, 205, 90], [110, 206, 88],
    [112, 207, 87], [115, 208, 86], [117, 208, 84], [119, 209, 83], [122, 209, 81], [124, 210, 80], [127, 211, 78], [129, 211, 77],
    [132, 212, 75], [134, 213, 73], [137, 213, 72], [139, 214, 70], [142, 214, 69], [144, 215, 67], [147, 215, 65], [149, 216, 64],
    [152, 216, 62], [155, 217, 60], [157, 217, 59], [160, 218, 57], [162, 218, 55], [165, 219, 54], [168, 219, 52], [170, 220, 50],
    [173, 220, 48], [176, 221, 47], [178, 221, 45], [181, 222, 43], [184, 222, 41], [186, 222, 40], [189, 223, 38], [192, 223, 37],
    [194, 223, 35], [197, 224, 33], [200, 224, 32], [202, 225, 31], [205, 225, 29], [208, 225, 28], [210, 226, 27], [213, 226, 26],
    [216, 226, 25], [218, 227, 25], [221, 227, 24], [223, 227, 24], [226, 228, 24], [229, 228, 25], [231, 228, 25], [234, 229, 26],
    [236, 229, 27], [239, 229, 28], [241, 229, 29], [244, 230, 30], [246, 230, 32], [248, 230, 33], [251, 231, 35], [253, 231, 37],
];
