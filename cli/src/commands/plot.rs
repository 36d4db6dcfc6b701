//! `pinv plot FILE FUNC --y V[,V...] --out FILE.svg|png`: a picture of the preimage set of y.

use crate::commands::invert::{load_inverse, parse_list};
use crate::draws::{draw, DiscreteRead, DrawConfig, Draws, Preimage};
use crate::output;
use crate::progress::Progress;
use crate::values::{format_value, format_values};
use crate::Outcome;
use clap::Args;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Plot the preimage set of y: sample preimages (as `pinv sample` does) and draw them.
///
/// One input: a strip of points on its axis. Two: a scatter in the plane. Three or more: two
/// of them, chosen with `--inputs` by parameter name (default: the first two). Points are
/// coloured by the discrete choices θ made (path choices and bool θ: branch, root, loop count),
/// listed with their counts in a legend; with no discrete θ they all have one colour. The
/// title names the function and y, the axes the inputs.
///
/// The format comes from the extension of `--out`: `.svg` or `.png`.
///
/// Example: `pinv plot tests/corpus/unary.pinv wave --y 0.5 --out wave.png --xlim -20,20` draws
/// the solutions of sin(x) = 0.5 in [−20, 20], coloured by the branch θ chose (asin or π − asin).
#[derive(Args, Debug)]
pub struct PlotArgs {
    /// The .pinv file (`-`: standard input).
    pub file: PathBuf,
    /// The function to invert.
    pub function: String,
    /// The output to invert: one value per output, separated by commas.
    #[arg(long, value_name = "V[,V...]")]
    pub y: String,
    /// The picture to write: `.svg` or `.png`.
    #[arg(long, short = 'o', value_name = "FILE.svg|png")]
    pub out: PathBuf,
    /// How many preimages to draw.
    #[arg(long, short = 'n', default_value_t = 500)]
    pub samples: usize,
    /// Seed of the θ sampler.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Which inputs to plot, by parameter name: one (a strip) or two (x axis, y axis).
    #[arg(long, value_name = "A[,B]")]
    pub inputs: Option<String>,
    /// Give up after this many θ draws [default: 100 × samples, at least 10000].
    #[arg(long, value_name = "DRAWS")]
    pub max_draws: Option<usize>,
    /// The horizontal axis's range [default: all the points]; points outside are counted, not
    /// drawn.
    #[arg(long, value_name = "LO,HI")]
    pub xlim: Option<String>,
    /// The vertical axis's range [default: all the points]; points outside are counted, not
    /// drawn.
    #[arg(long, value_name = "LO,HI")]
    pub ylim: Option<String>,
    /// Print a summary of what was drawn as JSON.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub jobs: crate::jobs::JobsArg,
    #[command(flatten)]
    pub engine: crate::engine::EngineArg,
    #[command(flatten)]
    pub limits: crate::limits::LimitsArg,
}

/// The picture formats, from the extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    Svg,
    Png,
}

impl Format {
    fn of(path: &Path) -> Option<Format> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "svg" => Some(Format::Svg),
            "png" => Some(Format::Png),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Format::Svg => "svg",
            Format::Png => "png",
        }
    }
}

pub fn run(args: &PlotArgs) -> Outcome {
    let deadline = args.limits.deadline(std::time::Instant::now());
    let Some(format) = Format::of(&args.out) else {
        let message = format!(
            "cannot tell the picture format of `{}`: --out must end in `.svg` or `.png`",
            args.out.display()
        );
        return output::plain_error(args.json, "arguments", &message, Outcome::BadInput);
    };
    let (loaded, inverse) = match load_inverse(
        &args.file,
        &args.function,
        args.json,
        &args.limits,
        deadline,
        true,
    ) {
        Ok((loaded, inverse)) => (loaded, inverse.with_engine(args.engine.engine)),
        Err(outcome) => return outcome,
    };
    let y = match parse_list(&args.y, inverse.output_types(), "--y") {
        Ok(y) => y,
        Err(m) => return output::plain_error(args.json, "arguments", &m, Outcome::BadInput),
    };
    let names = match loaded.input_names(&args.function) {
        Ok(names) => names,
        Err(e) => return output::library_error(&loaded.file, &e, args.json),
    };
    let axes = match choose_inputs(&names, args.inputs.as_deref(), &args.function) {
        Ok(axes) => axes,
        Err(m) => return output::plain_error(args.json, "arguments", &m, Outcome::BadInput),
    };
    let limits = match (
        limit(args.xlim.as_deref(), "--xlim"),
        limit(args.ylim.as_deref(), "--ylim"),
    ) {
        (Ok(x), Ok(y)) => Limits { x, y },
        (Err(m), _) | (_, Err(m)) => {
            return output::plain_error(args.json, "arguments", &m, Outcome::BadInput)
        }
    };
    let config =
        DrawConfig::new(args.samples, args.seed, args.max_draws, args.jobs.get()).until(deadline);
    let progress = Progress::new(args.samples as u64, args.json, "sampling");
    let draws = match draw(&inverse, &y, &config, &progress) {
        Ok(d) => d,
        Err(e) => return output::library_error(&loaded.file, &e, args.json),
    };
    if draws.preimages.is_empty() {
        let message = format!(
            "none of the {} θ drawn gave a preimage of y = {}: nothing to plot",
            draws.drawn,
            format_values(&y)
        );
        if !args.json {
            eprintln!("error: {message}");
            if let Some(e) = &draws.first_rejection {
                eprintln!("the first rejected θ was rejected here:");
                output::library_error(&loaded.file, e, false);
            }
            return Outcome::Failure;
        }
        return output::plain_error(true, "domain", &message, Outcome::Failure);
    }

    let mut spec = PlotSpec::new(String::new(), &names, &axes, &draws, &limits);
    spec.title = format!(
        "{}({}) = {}: {} preimages",
        args.function,
        names.join(", "),
        format_values(&y),
        spec.points()
    );
    if spec.outside > 0 {
        spec.title += &format!(" in view, {} outside", spec.outside);
    }
    let written = match format {
        Format::Svg => render_svg(&spec).map(String::into_bytes),
        Format::Png => render_png(&spec),
    };
    let bytes = match written {
        Ok(b) => b,
        Err(m) => {
            let message = format!("cannot draw the plot: {m}");
            return output::plain_error(args.json, "internal", &message, Outcome::Failure);
        }
    };
    if let Err(e) = std::fs::write(&args.out, bytes) {
        let message = format!("cannot write `{}`: {e}", args.out.display());
        return output::plain_error(args.json, "output", &message, Outcome::BadInput);
    }

    let short = draws.preimages.len() < args.samples;
    if args.json {
        let categories: Vec<serde_json::Value> = spec
            .series
            .iter()
            .map(|s| serde_json::json!({ "label": s.label, "count": s.points.len() }))
            .collect();
        let value = serde_json::json!({
            "out": args.out.display().to_string(),
            "format": format.name(),
            "function": args.function,
            "inputs": axes.iter().map(|&i| &names[i]).collect::<Vec<_>>(),
            "points": spec.points(),
            "not_finite": spec.not_finite,
            "outside": spec.outside,
            "drawn": draws.drawn,
            "accepted": draws.preimages.len(),
            "rejected": draws.rejected,
            "limited": draws.limited,
            "timed_out": draws.timed_out,
            "acceptance": draws.acceptance() / 100.0,
            "categories": categories,
        });
        outln!("{value}");
    } else {
        outln!(
            "wrote {}: {} preimage(s) of y = {} from {} θ drawn (acceptance {:.1}%), {} colour(s)",
            args.out.display(),
            spec.points(),
            format_values(&y),
            draws.drawn,
            draws.acceptance(),
            spec.series.len()
        );
        if spec.outside > 0 {
            outln!(
                "({} preimage(s) outside --xlim/--ylim are not drawn)",
                spec.outside
            );
        }
        if spec.not_finite > 0 {
            outln!(
                "({} preimage(s) with a non-finite coordinate are not drawn)",
                spec.not_finite
            );
        }
        if short {
            eprintln!(
                "warning: found only {} of {} preimages in {} draws ({})",
                draws.preimages.len(),
                args.samples,
                draws.drawn,
                if draws.timed_out {
                    "the time limit came; raise --time-limit for more"
                } else {
                    "raise --max-draws for more"
                }
            );
        }
    }
    Outcome::Success
}

/// The indices of the inputs to plot: the named ones, or the first two.
fn choose_inputs(
    names: &[String],
    chosen: Option<&str>,
    function: &str,
) -> Result<Vec<usize>, String> {
    let Some(chosen) = chosen else {
        return Ok((0..names.len().min(2)).collect());
    };
    let wanted: Vec<&str> = chosen.split(',').map(str::trim).collect();
    if wanted.is_empty() || wanted.len() > 2 {
        return Err(format!(
            "--inputs takes one or two parameter names, not {}",
            wanted.len()
        ));
    }
    let mut axes = Vec::new();
    for name in wanted {
        match names.iter().position(|n| n == name) {
            Some(i) if axes.contains(&i) => {
                return Err(format!("--inputs names `{name}` twice"));
            }
            Some(i) => axes.push(i),
            None => {
                return Err(format!(
                    "--inputs: `{function}` has no parameter `{name}`; its parameters are {}",
                    names.join(", ")
                ))
            }
        }
    }
    Ok(axes)
}

/// Colours a reader can tell apart (Okabe and Ito's palette), then grey for the rest.
const PALETTE: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(0, 0, 0),
    RGBColor(240, 228, 66),
];
const OTHER: RGBColor = RGBColor(150, 150, 150);

/// The points of one colour.
struct Series {
    label: String,
    color: RGBColor,
    points: Vec<(f64, f64)>,
}

/// What an axis shows: reals get ticks anywhere; integers only at whole numbers; bools only at
/// `false` and `true`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AxisKind {
    Real,
    Int,
    Bool,
}

impl AxisKind {
    fn of(ty: Option<pinv::Type>) -> AxisKind {
        match ty {
            Some(pinv::Type::I64) => AxisKind::Int,
            Some(pinv::Type::Bool) => AxisKind::Bool,
            _ => AxisKind::Real,
        }
    }

    /// The tick label at `v`: empty where this kind has no value (a tick's position may be a
    /// rounding away from a whole number).
    fn tick(self, v: &f64) -> String {
        let whole = v.round();
        let at_whole = (v - whole).abs() <= 1e-9 * whole.abs().max(1.0);
        match self {
            AxisKind::Real => tick(v),
            AxisKind::Int if at_whole => tick(&whole),
            AxisKind::Bool if at_whole && whole == 0.0 => "false".to_string(),
            AxisKind::Bool if at_whole && whole == 1.0 => "true".to_string(),
            AxisKind::Int | AxisKind::Bool => String::new(),
        }
    }

    /// How many ticks to ask for: a bool axis needs only its two values (and the halves
    /// between, unlabelled).
    fn labels(self) -> usize {
        match self {
            AxisKind::Bool => 5,
            AxisKind::Real | AxisKind::Int => 10,
        }
    }

    /// The range drawn, from the data's: bools always show both values; integers get half a
    /// step of room so that points are not on the frame.
    fn range(self, (lo, hi): (f64, f64)) -> (f64, f64) {
        match self {
            AxisKind::Real => (lo, hi),
            AxisKind::Bool => (-0.5, 1.5),
            AxisKind::Int => (lo.floor() - 0.5, hi.ceil() + 0.5),
        }
    }
}

/// Everything the picture shows.
struct PlotSpec {
    title: String,
    x_name: String,
    /// `None` for a strip of one input.
    y_name: Option<String>,
    x_kind: AxisKind,
    y_kind: AxisKind,
    series: Vec<Series>,
    /// Whether θ made any discrete choice (then the legend is drawn).
    legend: bool,
    not_finite: usize,
    /// Points outside the limits (not drawn).
    outside: usize,
    limits: Limits,
}

/// Fixed axis ranges, if given.
#[derive(Clone, Copy, Debug, Default)]
struct Limits {
    x: Option<(f64, f64)>,
    y: Option<(f64, f64)>,
}

fn inside(range: Option<(f64, f64)>, v: f64) -> bool {
    range.is_none_or(|(lo, hi)| lo <= v && v <= hi)
}

/// Parses `LO,HI`.
fn limit(text: Option<&str>, what: &str) -> Result<Option<(f64, f64)>, String> {
    let Some(text) = text else { return Ok(None) };
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    let bad = || {
        format!(
            "{what} takes two finite numbers LO,HI with LO < HI, not `{}`",
            text.trim()
        )
    };
    let [lo, hi] = parts[..] else {
        return Err(bad());
    };
    match (lo.parse::<f64>(), hi.parse::<f64>()) {
        (Ok(lo), Ok(hi)) if lo.is_finite() && hi.is_finite() && lo < hi => Ok(Some((lo, hi))),
        _ => Err(bad()),
    }
}

impl PlotSpec {
    fn new(
        title: String,
        names: &[String],
        axes: &[usize],
        draws: &Draws,
        limits: &Limits,
    ) -> PlotSpec {
        let coordinate = |p: &Preimage, axis: Option<&usize>| match axis {
            Some(&i) => as_f64(p.x[i]),
            None => 0.0,
        };
        // Group by the discrete choices.
        let mut groups: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
        let mut not_finite = 0;
        let mut outside = 0;
        let mut legend = false;
        for p in &draws.preimages {
            legend |= !p.discrete.is_empty();
            let point = (coordinate(p, axes.first()), coordinate(p, axes.get(1)));
            if !(point.0.is_finite() && point.1.is_finite()) {
                not_finite += 1;
                continue;
            }
            if !(inside(limits.x, point.0) && (axes.len() < 2 || inside(limits.y, point.1))) {
                outside += 1;
                continue;
            }
            groups.entry(label(&p.discrete)).or_default().push(point);
        }
        // Up to eight groups get a colour each; beyond that the seven most frequent do and the
        // rest are lumped together in grey.
        let mut by_count: Vec<(String, Vec<(f64, f64)>)> = groups.into_iter().collect();
        by_count.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(&b.0)));
        let own_colours = if by_count.len() <= PALETTE.len() {
            PALETTE.len()
        } else {
            PALETTE.len() - 1
        };
        let rest: Vec<(String, Vec<(f64, f64)>)> = if by_count.len() > own_colours {
            by_count.split_off(own_colours)
        } else {
            Vec::new()
        };
        by_count.sort_by(|a, b| a.0.cmp(&b.0));
        let mut series: Vec<Series> = by_count
            .into_iter()
            .zip(PALETTE)
            .map(|((label, points), color)| Series {
                label,
                color,
                points,
            })
            .collect();
        if !rest.is_empty() {
            series.push(Series {
                label: format!("{} other choices", rest.len()),
                color: OTHER,
                points: rest.into_iter().flat_map(|(_, p)| p).collect(),
            });
        }
        let kind = |axis: Option<&usize>| {
            AxisKind::of(axis.and_then(|&i| draws.preimages.first().map(|p| p.x[i].ty())))
        };
        PlotSpec {
            title,
            x_name: names[axes[0]].clone(),
            y_name: axes.get(1).map(|&i| names[i].clone()),
            x_kind: kind(axes.first()),
            y_kind: kind(axes.get(1)),
            series,
            legend,
            not_finite,
            outside,
            limits: *limits,
        }
    }

    fn points(&self) -> usize {
        self.series.iter().map(|s| s.points.len()).sum()
    }

    fn range(&self, coord: impl Fn(&(f64, f64)) -> f64) -> (f64, f64) {
        let values = self.series.iter().flat_map(|s| s.points.iter().map(&coord));
        let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
        if !(lo.is_finite() && hi.is_finite()) {
            return (-1.0, 1.0);
        }
        let span = hi - lo;
        let pad = if span > 0.0 {
            span * 0.06
        } else {
            lo.abs().max(1.0) * 0.5
        };
        (lo - pad, hi + pad)
    }
}

fn as_f64(c: pinv::Const) -> f64 {
    match c {
        pinv::Const::F64(x) => x,
        pinv::Const::I64(i) => i as f64,
        pinv::Const::Bool(b) => f64::from(u8::from(b)),
    }
}

/// A legend label for a list of discrete reads: `role = value` each, with repeats of the same
/// read counted (`go round = 1 ×3` for a loop that went round three times).
fn label(reads: &[DiscreteRead]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < reads.len() {
        let mut j = i + 1;
        while j < reads.len() && reads[j] == reads[i] {
            j += 1;
        }
        let r = &reads[i];
        let role = if r.role.is_empty() { "θ" } else { &r.role };
        let read = describe(role, &format_value(r.value));
        parts.push(if j - i > 1 {
            format!("{read} ×{}", j - i)
        } else {
            read
        });
        i = j;
    }
    if parts.is_empty() {
        "no discrete θ".to_string()
    } else {
        parts.join(", ")
    }
}

/// One discrete read as `role = value`; a role that lists its values' meanings, as in
/// `sin: branch (0: asin z, 1: π − asin z)`, becomes `sin: branch = 1 (π − asin z)`.
fn describe(role: &str, value: &str) -> String {
    if let (Some(open), true) = (role.find(" ("), role.ends_with(')')) {
        let head = &role[..open];
        let meanings = &role[open + 2..role.len() - 1];
        for item in meanings.split(", ") {
            if let Some((k, meaning)) = item.split_once(": ") {
                if k.trim() == value {
                    return format!("{head} = {value} ({meaning})");
                }
            }
        }
    }
    format!("{role} = {value}")
}

const FONT: &[u8] = include_bytes!("../../assets/DejaVuSans-subset.ttf");
const LEGEND_WIDTH: u32 = 300;

fn register_font() -> Result<(), String> {
    static REGISTERED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| {
        plotters::style::register_font("sans-serif", FontStyle::Normal, FONT).is_ok()
    });
    if ok {
        Ok(())
    } else {
        Err("the embedded font is invalid".to_string())
    }
}

fn size(spec: &PlotSpec) -> (u32, u32) {
    let chart = if spec.y_name.is_some() {
        (760, 680)
    } else {
        (760, 300)
    };
    let legend = if spec.legend { LEGEND_WIDTH } else { 0 };
    (chart.0 + legend, chart.1)
}

fn render_svg(spec: &PlotSpec) -> Result<String, String> {
    register_font()?;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size(spec)).into_drawing_area();
        render(&root, spec)?;
    }
    Ok(svg)
}

fn render_png(spec: &PlotSpec) -> Result<Vec<u8>, String> {
    register_font()?;
    let (w, h) = size(spec);
    let mut rgb = vec![0u8; w as usize * h as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, (w, h)).into_drawing_area();
        render(&root, spec)?;
    }
    let mut png = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut png, w, h);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder.write_header().map_err(|e| e.to_string())?;
        writer.write_image_data(&rgb).map_err(|e| e.to_string())?;
        writer.finish().map_err(|e| e.to_string())?;
    }
    Ok(png)
}

fn render<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    spec: &PlotSpec,
) -> Result<(), String> {
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    root.fill(&WHITE).map_err(err)?;
    let (w, _) = root.dim_in_pixel();
    let (chart_area, legend_area) = if spec.legend {
        let (a, b) = root.split_horizontally(w - LEGEND_WIDTH);
        (a, Some(b))
    } else {
        (root.clone(), None)
    };
    let (x0, x1) = spec
        .limits
        .x
        .unwrap_or_else(|| spec.x_kind.range(spec.range(|p| p.0)));
    let (y0, y1) = if spec.y_name.is_some() {
        spec.limits
            .y
            .unwrap_or_else(|| spec.y_kind.range(spec.range(|p| p.1)))
    } else {
        (-1.0, 1.0)
    };
    let (x_kind, y_kind) = (spec.x_kind, spec.y_kind);
    let x_tick = move |v: &f64| x_kind.tick(v);
    let y_tick = move |v: &f64| y_kind.tick(v);
    let mut chart = ChartBuilder::on(&chart_area)
        .caption(&spec.title, ("sans-serif", 20))
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(if spec.y_name.is_some() { 64 } else { 0 })
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(err)?;
    {
        let mut mesh = chart.configure_mesh();
        mesh.x_desc(spec.x_name.as_str())
            .x_label_formatter(&x_tick)
            .y_label_formatter(&y_tick)
            .x_labels(x_kind.labels())
            .y_labels(y_kind.labels())
            .axis_desc_style(("sans-serif", 16))
            .label_style(("sans-serif", 13))
            .light_line_style(RGBColor(235, 235, 235));
        match &spec.y_name {
            Some(name) => {
                mesh.y_desc(name.as_str());
            }
            None => {
                mesh.disable_y_mesh().disable_y_axis();
            }
        }
        mesh.draw().map_err(err)?;
    }
    if spec.y_name.is_none() {
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(x0, 0.0), (x1, 0.0)],
                RGBColor(120, 120, 120),
            )))
            .map_err(err)?;
    }
    // Bigger groups first, so smaller ones stay visible on top.
    let mut order: Vec<&Series> = spec.series.iter().collect();
    order.sort_by_key(|s| std::cmp::Reverse(s.points.len()));
    let radius = match (spec.y_name.is_some(), spec.points() > 2000) {
        (false, _) => 5,
        (true, true) => 2,
        (true, false) => 3,
    };
    for s in order {
        let style = s.color.mix(0.7).filled();
        chart
            .draw_series(s.points.iter().map(|&p| Circle::new(p, radius, style)))
            .map_err(err)?;
    }
    if let Some(area) = legend_area {
        draw_legend(&area, spec).map_err(err)?;
    }
    root.present().map_err(err)?;
    Ok(())
}

/// Splits `text` into at most `lines` lines of about `width` characters, at spaces.
fn wrap(text: &str, width: usize, lines: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            out.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    out.push(line);
    if out.len() > lines {
        out.truncate(lines);
        if let Some(last) = out.last_mut() {
            last.push_str(" …");
        }
    }
    out
}

/// A tick label: `800` rather than `800.0`, and at most four decimals.
fn tick(v: &f64) -> String {
    let v = if *v == 0.0 { 0.0 } else { *v };
    if v.fract() == 0.0 && v.abs() < 1e15 {
        return format!("{v:.0}");
    }
    let text = format!("{v:.4}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    if text == "-0" {
        "0".to_string()
    } else {
        text.to_string()
    }
}

/// The legend, beside the chart: a colour swatch (a square, so the picture's circles are only
/// the points), the choices and how many points made them.
fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    spec: &PlotSpec,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    area.draw(&Text::new(
        "discrete θ (count)",
        (8, 48),
        ("sans-serif", 15).into_font().color(&BLACK),
    ))?;
    let mut top = 76;
    for s in &spec.series {
        area.draw(&Rectangle::new(
            [(10, top), (24, top + 14)],
            s.color.mix(0.85).filled(),
        ))?;
        for line in wrap(&format!("{} ({})", s.label, s.points.len()), 36, 3) {
            area.draw(&Text::new(
                line,
                (32, top),
                ("sans-serif", 13).into_font().color(&BLACK),
            ))?;
            top += 17;
        }
        top += 8;
    }
    Ok(())
}
