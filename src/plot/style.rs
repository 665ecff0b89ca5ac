//! What every figure shares: the embedded font, sizes, colours, line kinds, the legend drawn
//! beside a panel (never over its data), and rendering one drawing to PNG and SVG.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::{FontStyle, RGBColor};

use super::PlotError;
use crate::output::DEJAVU_SANS;

/// The family every text style names; the SVG files name it too, so viewers use their own
/// sans-serif face for the text, which stays text.
pub const FONT: &str = "sans-serif";

pub const TITLE_SIZE: f64 = 22.0;
pub const LABEL_SIZE: f64 = 18.0;
pub const TICK_SIZE: f64 = 15.0;
pub const LEGEND_SIZE: f64 = 15.0;

/// Registers the embedded font with plotters once per process.
pub fn register_font() -> Result<(), PlotError> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| {
        plotters::style::register_font(FONT, FontStyle::Normal, DEJAVU_SANS).is_ok()
    });
    if ok {
        Ok(())
    } else {
        Err(PlotError::Font)
    }
}

pub fn font(size: f64) -> TextStyle<'static> {
    (FONT, size).into_font().color(&BLACK)
}

// A qualitative palette (Okabe-Ito), readable by colour-blind readers.
pub const BLUE: RGBColor = RGBColor(0, 114, 178);
pub const ORANGE: RGBColor = RGBColor(230, 159, 0);
pub const GREEN: RGBColor = RGBColor(0, 158, 115);
pub const VERMILION: RGBColor = RGBColor(213, 94, 0);
pub const PURPLE: RGBColor = RGBColor(204, 121, 167);
pub const GREY: RGBColor = RGBColor(110, 110, 110);
pub const DARK: RGBColor = RGBColor(50, 50, 50);

/// Phase shading.
pub const STANCE_FILL: RGBColor = RGBColor(250, 235, 207);
pub const FLIGHT_FILL: RGBColor = RGBColor(221, 235, 250);

/// A sequential colour map (viridis, sampled), for colour by a number in [0, 1].
pub fn sequential(x: f64) -> RGBColor {
    const STOPS: [(f64, f64, f64); 6] = [
        (68.0, 1.0, 84.0),
        (65.0, 68.0, 135.0),
        (42.0, 120.0, 142.0),
        (34.0, 168.0, 132.0),
        (122.0, 209.0, 81.0),
        (230.0, 205.0, 30.0),
    ];
    let x = if x.is_finite() {
        x.clamp(0.0, 1.0)
    } else {
        0.5
    };
    let s = x * (STOPS.len() - 1) as f64;
    let i = (s.floor() as usize).min(STOPS.len() - 2);
    let f = s - i as f64;
    let mix = |a: f64, b: f64| (a + (b - a) * f).round() as u8;
    let (a, b) = (STOPS[i], STOPS[i + 1]);
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// How a line is drawn.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Stroke {
    Solid,
    /// Dash length and gap, in pixels.
    Dashed(u32, u32),
}

/// A marker at data points.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Marker {
    Circle,
    Triangle,
    Square,
    Diamond,
}

/// One legend row: a sample of the line and/or marker, then the text.
#[derive(Clone, Debug)]
pub struct LegendEntry {
    pub label: String,
    pub color: RGBColor,
    pub stroke: Option<Stroke>,
    pub width: u32,
    pub marker: Option<(Marker, bool)>,
    /// A filled swatch (for shaded regions) instead of a line.
    pub swatch: bool,
}

impl LegendEntry {
    pub fn line(label: impl Into<String>, color: RGBColor, stroke: Stroke, width: u32) -> Self {
        LegendEntry {
            label: label.into(),
            color,
            stroke: Some(stroke),
            width,
            marker: None,
            swatch: false,
        }
    }

    pub fn marker(label: impl Into<String>, color: RGBColor, marker: Marker, filled: bool) -> Self {
        LegendEntry {
            label: label.into(),
            color,
            stroke: None,
            width: 2,
            marker: Some((marker, filled)),
            swatch: false,
        }
    }

    pub fn swatch(label: impl Into<String>, color: RGBColor) -> Self {
        LegendEntry {
            label: label.into(),
            color,
            stroke: None,
            width: 1,
            marker: None,
            swatch: true,
        }
    }

    /// Text alone, indented like the other rows.
    pub fn note(label: impl Into<String>) -> Self {
        LegendEntry {
            label: label.into(),
            color: GREY,
            stroke: None,
            width: 1,
            marker: None,
            swatch: false,
        }
    }

    pub fn with_marker(mut self, marker: Marker, filled: bool) -> Self {
        self.marker = Some((marker, filled));
        self
    }
}

/// Height of one legend row in pixels.
pub const LEGEND_ROW: i32 = 22;
/// Width of the line sample.
const SAMPLE: i32 = 34;

/// Draws `entries` in a column from the top-left of `area` (in pixels), with an optional
/// heading; rows that do not fit are not drawn (callers size the area for them).
pub fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    heading: Option<&str>,
    entries: &[LegendEntry],
) -> Result<(), PlotError> {
    let mut y = 6;
    let x = 6;
    if let Some(heading) = heading {
        area.draw(&Text::new(heading.to_string(), (x, y), font(LEGEND_SIZE)))
            .map_err(draw_error)?;
        y += LEGEND_ROW;
    }
    for entry in entries {
        draw_sample(area, entry, (x, y + LEGEND_ROW / 2 - 3))?;
        area.draw(&Text::new(
            entry.label.clone(),
            (x + SAMPLE + 8, y),
            font(LEGEND_SIZE),
        ))
        .map_err(draw_error)?;
        y += LEGEND_ROW;
    }
    Ok(())
}

/// Height of a figure's title band and of a one-row legend band below it [px].
pub const TITLE_BAND: u32 = 44;
pub const LEGEND_BAND: u32 = 34;

/// A figure's heading: `title` in a band at the top of `root` and, when `legend` is not
/// empty, the entries in one row below it; returns the area left under them.
pub fn draw_heading<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    legend: &[LegendEntry],
) -> Result<DrawingArea<DB, Shift>, PlotError> {
    let (title_area, rest) = root.split_vertically(TITLE_BAND);
    title_area
        .draw(&Text::new(title.to_string(), (16, 10), font(TITLE_SIZE)))
        .map_err(draw_error)?;
    if legend.is_empty() {
        return Ok(rest);
    }
    let (legend_area, rest) = rest.split_vertically(LEGEND_BAND);
    draw_legend_row(&legend_area, (16, 4), legend)?;
    Ok(rest)
}

/// Draws `entries` in a row from the left of `area`; returns the x after the last entry.
pub fn draw_legend_row<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    (mut x, y): (i32, i32),
    entries: &[LegendEntry],
) -> Result<i32, PlotError> {
    for entry in entries {
        draw_sample(area, entry, (x, y + LEGEND_ROW / 2 - 3))?;
        let text = font(LEGEND_SIZE);
        let (w, _) = area
            .estimate_text_size(&entry.label, &text)
            .map_err(draw_error)?;
        area.draw(&Text::new(entry.label.clone(), (x + SAMPLE + 8, y), text))
            .map_err(draw_error)?;
        x += SAMPLE + 8 + w as i32 + 24;
    }
    Ok(x)
}

fn draw_sample<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entry: &LegendEntry,
    (x, y): (i32, i32),
) -> Result<(), PlotError> {
    if entry.swatch {
        area.draw(&Rectangle::new(
            [(x, y - 7), (x + SAMPLE, y + 7)],
            entry.color.filled(),
        ))
        .map_err(draw_error)?;
        area.draw(&Rectangle::new(
            [(x, y - 7), (x + SAMPLE, y + 7)],
            GREY.stroke_width(1),
        ))
        .map_err(draw_error)?;
    }
    let style = entry.color.stroke_width(entry.width);
    match entry.stroke {
        Some(Stroke::Solid) => area
            .draw(&PathElement::new(vec![(x, y), (x + SAMPLE, y)], style))
            .map_err(draw_error)?,
        Some(Stroke::Dashed(d, g)) => area
            .draw(&DashedPathElement::new(
                vec![(x, y), (x + SAMPLE, y)],
                d as i32,
                g as i32,
                style,
            ))
            .map_err(draw_error)?,
        None => {}
    }
    if let Some((marker, filled)) = entry.marker {
        draw_marker_at(area, (marker, filled), (x + SAMPLE / 2, y), 5, entry.color)?;
    }
    Ok(())
}

/// The chart type of every panel: f64 against f64.
pub type Chart<'a, DB> = ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// The light grid, ticks and axis labels of a single-panel chart (the sweep and DEM figures):
/// `labels` ticks per axis, each axis's tick text from its formatter.
pub fn draw_grid<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    (x_desc, y_desc): (&str, &str),
    labels: usize,
    x_format: &dyn Fn(&f64) -> String,
    y_format: &dyn Fn(&f64) -> String,
) -> Result<(), PlotError> {
    chart
        .configure_mesh()
        .x_labels(labels)
        .y_labels(labels)
        .max_light_lines(1)
        .light_line_style(RGBColor(240, 240, 240))
        .bold_line_style(RGBColor(215, 215, 215))
        .label_style(font(TICK_SIZE))
        .axis_desc_style(font(LABEL_SIZE))
        .x_desc(x_desc)
        .y_desc(y_desc)
        .x_label_formatter(x_format)
        .y_label_formatter(y_format)
        .draw()
        .map_err(draw_error)
}

/// Pixel offsets of a marker's outline around its centre; `None` for a circle.
fn marker_outline(marker: Marker, size: i32) -> Option<Vec<(i32, i32)>> {
    let s = size;
    match marker {
        Marker::Circle => None,
        Marker::Triangle => Some(vec![(0, -s - 1), (s + 1, s), (-s - 1, s)]),
        Marker::Square => Some(vec![(-s, -s), (s, -s), (s, s), (-s, s)]),
        Marker::Diamond => Some(vec![(0, -s - 2), (s + 1, 0), (0, s + 2), (-s - 1, 0)]),
    }
}

/// Draws a marker centred on pixel `(x, y)` of `area`.
fn draw_marker_at<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    (marker, filled): (Marker, bool),
    (x, y): (i32, i32),
    size: i32,
    color: RGBColor,
) -> Result<(), PlotError> {
    let style = if filled {
        color.filled()
    } else {
        color.stroke_width(2)
    };
    match marker_outline(marker, size) {
        None => area.draw(&Circle::new((x, y), size, style)),
        Some(outline) => {
            let mut points: Vec<(i32, i32)> =
                outline.iter().map(|(dx, dy)| (x + dx, y + dy)).collect();
            if filled {
                area.draw(&Polygon::new(points, style))
            } else {
                points.push(points[0]);
                area.draw(&PathElement::new(points, style))
            }
        }
    }
    .map_err(draw_error)
}

/// Draws a marker at each data point of `chart`.
pub fn draw_markers<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    points: &[(f64, f64)],
    (marker, filled): (Marker, bool),
    size: i32,
    color: RGBColor,
) -> Result<(), PlotError> {
    let style = if filled {
        color.filled()
    } else {
        color.stroke_width(2)
    };
    match marker_outline(marker, size) {
        None => chart
            .draw_series(points.iter().map(|&p| Circle::new(p, size, style)))
            .map(|_| ()),
        Some(outline) if filled => chart
            .draw_series(
                points
                    .iter()
                    .map(|&p| EmptyElement::at(p) + Polygon::new(outline.clone(), style)),
            )
            .map(|_| ()),
        Some(mut outline) => {
            outline.push(outline[0]);
            chart
                .draw_series(
                    points
                        .iter()
                        .map(|&p| EmptyElement::at(p) + PathElement::new(outline.clone(), style)),
                )
                .map(|_| ())
        }
    }
    .map_err(draw_error)
}

/// Draws a polyline through `points` on `chart`.
pub fn draw_line<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    points: &[(f64, f64)],
    color: RGBColor,
    stroke: Stroke,
    width: u32,
) -> Result<(), PlotError> {
    let style = color.stroke_width(width);
    match stroke {
        Stroke::Solid => chart
            .draw_series(LineSeries::new(points.iter().copied(), style))
            .map(|_| ()),
        Stroke::Dashed(d, g) => chart
            .draw_series(DashedLineSeries::new(
                points.iter().copied(),
                d as i32,
                g as i32,
                style,
            ))
            .map(|_| ()),
    }
    .map_err(draw_error)
}

/// The grid and tick labels of a panel over time t [s]; only the bottom panel (`last`) names
/// the time axis.
pub fn draw_time_mesh<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    y_desc: &str,
    desc_size: f64,
    last: bool,
) -> Result<(), PlotError> {
    let mut mesh = chart.configure_mesh();
    mesh.x_labels(12)
        .y_labels(6)
        .max_light_lines(4)
        .light_line_style(RGBColor(232, 232, 232).mix(0.6))
        .bold_line_style(RGBColor(190, 190, 190).mix(0.6))
        .label_style(font(TICK_SIZE))
        .axis_desc_style(font(desc_size))
        .y_desc(y_desc)
        .x_label_formatter(&|t| format!("{t:.2}"))
        .y_label_formatter(&|y| trim_number(*y));
    if last {
        mesh.x_desc("time t [s]");
    }
    mesh.draw().map_err(draw_error)
}

pub fn draw_error<E: std::fmt::Display>(error: E) -> PlotError {
    PlotError::Draw {
        message: error.to_string(),
    }
}

/// A padded range around the finite values of `values`; a unit range around a constant.
pub fn range_of(values: impl IntoIterator<Item = f64>, pad: f64) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values.into_iter().filter(|v| v.is_finite()) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    let span = hi - lo;
    if span <= 1e-12 * (1.0 + hi.abs()) {
        return (lo - 0.5 - lo.abs() * 0.05, hi + 0.5 + hi.abs() * 0.05);
    }
    (lo - pad * span, hi + pad * span)
}

/// A figure drawn the same way on any backend.
pub trait Figure {
    /// Width and height in pixels (the SVG's user units).
    fn size(&self) -> (u32, u32);
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError>;
}

/// The formats a figure is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Formats {
    pub png: bool,
    pub svg: bool,
}

impl Default for Formats {
    /// Both.
    fn default() -> Self {
        Formats {
            png: true,
            svg: true,
        }
    }
}

/// Renders `figure` to `<stem>.png` and `<stem>.svg` (as `formats` asks), each written
/// atomically; returns the files written.
pub fn save<F: Figure>(
    figure: &F,
    stem: &Path,
    formats: Formats,
) -> Result<Vec<PathBuf>, PlotError> {
    register_font()?;
    let (w, h) = figure.size();
    let mut written = Vec::new();
    let with_path = |path: &Path| {
        let path = path.to_path_buf();
        move |e: PlotError| match e {
            PlotError::Draw { message } => PlotError::Render { path, message },
            other => other,
        }
    };
    if formats.png {
        let path = stem.with_extension("png");
        let mut pixels = vec![0u8; w as usize * h as usize * 3];
        {
            let root = BitMapBackend::with_buffer(&mut pixels, (w, h)).into_drawing_area();
            root.fill(&WHITE)
                .map_err(draw_error)
                .map_err(with_path(&path))?;
            figure.draw(&root).map_err(with_path(&path))?;
            root.present()
                .map_err(draw_error)
                .map_err(with_path(&path))?;
        }
        let mut bytes = Vec::new();
        image::ImageEncoder::write_image(
            image::codecs::png::PngEncoder::new(&mut bytes),
            &pixels,
            w,
            h,
            image::ColorType::Rgb8,
        )
        .map_err(draw_error)
        .map_err(with_path(&path))?;
        crate::output::write_atomic(&path, &bytes)?;
        written.push(path);
    }
    if formats.svg {
        let path = stem.with_extension("svg");
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, (w, h)).into_drawing_area();
            root.fill(&WHITE)
                .map_err(draw_error)
                .map_err(with_path(&path))?;
            figure.draw(&root).map_err(with_path(&path))?;
            root.present()
                .map_err(draw_error)
                .map_err(with_path(&path))?;
        }
        crate::output::write_atomic(&path, svg.as_bytes())?;
        written.push(path);
    }
    Ok(written)
}

/// Tick labels without trailing zeros (`40`, `2.5`, `-0.25`).
pub fn trim_number(y: f64) -> String {
    let text = format!("{y:.3}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    if text == "-0" {
        "0".into()
    } else {
        text.to_string()
    }
}
