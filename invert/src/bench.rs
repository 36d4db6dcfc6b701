//! Measuring pinv: nanoseconds per call of a function and of its inverse, in the interpreter and
//! as native code, next to a hand-written Rust inverse where [`mod@reference`] has one, and the
//! latency from source text to a native inverse. `pinv bench FILE FUNC` prints [`fn@bench`]'s
//! report; the criterion benches (`invert/benches/`) measure the same calls.
//!
//! # The workload
//!
//! Inputs x are sampled as `pinv check` samples them; y = f(x) and θ = pgf(x), so every inverse
//! call succeeds and returns x. Calls cycle through the cases. Native calls go through
//! [`CompiledFunction::call_into`] (no allocation for up to 8 arguments and results), the
//! interpreter through [`Interpreter::call_traced`], both reading θ from a rewound
//! [`TapeSource`]. The hand-written inverse reads the same tape values; only cases where it gives
//! bit for bit the same x as pinv's inverse are kept (it follows the inverse's usual path, not
//! every rounding fallback), and then every inverse column uses those cases.

use crate::error::{Error, Result};
use crate::program::Program;
use pinv_core::interp::{InterpConfig, Interpreter, TapeSource};
use pinv_core::ir::{Const, Type};
use pinv_core::jit::CompiledFunction;
use pinv_core::SourceFile;
use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};
use serde::Serialize;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// How to measure.
#[derive(Clone, Debug, PartialEq)]
pub struct BenchConfig {
    /// Sampled inputs (cases cycle).
    pub cases: usize,
    pub seed: u64,
    /// Time spent measuring each column.
    pub budget: Duration,
    /// Source-to-native compilations timed (the median is reported).
    pub compile_runs: usize,
}

impl Default for BenchConfig {
    fn default() -> BenchConfig {
        BenchConfig {
            cases: 64,
            seed: 0,
            budget: Duration::from_millis(300),
            compile_runs: 21,
        }
    }
}

/// The measurements of one function. Times are nanoseconds per call (medians over rounds).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct BenchReport {
    pub function: String,
    /// Cases the inverse columns ran on.
    pub cases: usize,
    pub forward_interp: f64,
    pub forward_native: f64,
    pub inverse_interp: Option<f64>,
    pub inverse_native: Option<f64>,
    pub hand_written: Option<f64>,
    /// Median time from source text to a callable native inverse: parse, check, lower,
    /// reorient, compile.
    pub compile_inverse: Option<Duration>,
    /// Median time to compile the forward function to native code (from IR).
    pub compile_forward: Duration,
    /// Why a column is missing.
    pub notes: Vec<String>,
}

impl BenchReport {
    /// Interpreted time over native time, for the inverse.
    pub fn inverse_speedup(&self) -> Option<f64> {
        Some(self.inverse_interp? / self.inverse_native?)
    }

    /// Native inverse time over hand-written time.
    pub fn hand_ratio(&self) -> Option<f64> {
        Some(self.inverse_native? / self.hand_written?)
    }
}

/// Nanoseconds per call of `call` (given the call's number): the median of several rounds.
pub fn time_per_call(budget: Duration, mut call: impl FnMut(usize)) -> f64 {
    // Warm up, and size a round at about a tenth of the budget.
    let start = Instant::now();
    let mut n = 0usize;
    while start.elapsed() < budget / 20 || n < 16 {
        call(n);
        n += 1;
    }
    let per_round = (n * 2).max(16);
    let mut rounds = Vec::new();
    let end = Instant::now() + budget;
    while rounds.len() < 5 || (Instant::now() < end && rounds.len() < 51) {
        let t = Instant::now();
        for i in 0..per_round {
            call(i);
        }
        rounds.push(t.elapsed().as_nanos() as f64 / per_round as f64);
    }
    rounds.sort_by(f64::total_cmp);
    rounds[rounds.len() / 2]
}

fn sample(rng: &mut Xoshiro256PlusPlus, ty: Type) -> Const {
    match ty {
        Type::F64 => Const::F64(rng.random_range(-10.0..=10.0)),
        Type::I64 => Const::I64(rng.random_range(-100..=100)),
        Type::Bool => Const::Bool(rng.random_bool(0.5)),
    }
}

fn median(mut ds: Vec<Duration>) -> Duration {
    ds.sort();
    ds.get(ds.len() / 2).copied().unwrap_or_default()
}

/// The calls a benchmark makes, prepared: inputs, y and θ, compiled code, scratch space. Each
/// method runs the next case once (cases cycle; no division on the way).
pub struct Workload {
    pub function: String,
    program: Program,
    limits: InterpConfig,
    id: pinv_core::ir::FuncId,
    inputs: Vec<Vec<Const>>,
    forward: CompiledFunction,
    out: Vec<Const>,
    inverse: Option<InverseWork>,
    /// The next case.
    cursor: usize,
    /// Why something is missing.
    pub notes: Vec<String>,
}

struct InverseWork {
    inverse: crate::program::Inverse,
    native: CompiledFunction,
    /// (y, θ) with f⁻¹(y, θ) = x.
    cases: Vec<(Vec<Const>, Vec<Const>)>,
    tapes: Vec<TapeSource>,
    hand: Option<reference::HandInverse>,
    out: Vec<Const>,
}

impl Workload {
    /// Compiles `function` of `source` and its inverse, and prepares `cases` sampled inputs.
    pub fn new(source: &SourceFile, function: &str, cases: usize, seed: u64) -> Result<Workload> {
        let program = Program::from_source(source.clone())?;
        let (id, f) = program.function(function)?;
        let name = f.name.clone();
        let (params, returns) = (f.sig.params.clone(), f.sig.returns.clone());
        let limits = InterpConfig::default().with_step_limit(crate::DEFAULT_STEP_LIMIT);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let inputs: Vec<Vec<Const>> = (0..cases.max(1))
            .map(|_| params.iter().map(|&t| sample(&mut rng, t)).collect())
            .collect();
        let forward = program.native(function)?;
        let mut notes = Vec::new();
        let inverse = match program.invert(function) {
            Ok(inverse) => Some(prepare_inverse(inverse, &inputs, &mut notes)?),
            Err(e) => {
                notes.push(format!("no inverse: {e}"));
                None
            }
        };
        if let Some(w) = &inverse {
            if w.cases.is_empty() {
                notes.push("no case where the inverse gives x back".into());
            }
            if w.hand.is_none() {
                notes.push(format!("no hand-written inverse of `{name}`"));
            }
        }
        Ok(Workload {
            function: name,
            program,
            limits,
            id,
            inputs,
            forward,
            out: vec![Const::Bool(false); returns.len()],
            inverse: inverse.filter(|w| !w.cases.is_empty()),
            cursor: 0,
            notes,
        })
    }

    /// The next case index below `n`.
    fn next(&mut self, n: usize) -> usize {
        self.cursor += 1;
        if self.cursor >= n {
            self.cursor = 0;
        }
        self.cursor
    }

    /// Cases the inverse runs on (0 without an inverse).
    pub fn inverse_cases(&self) -> usize {
        self.inverse.as_ref().map_or(0, |w| w.cases.len())
    }

    pub fn has_inverse(&self) -> bool {
        self.inverse.is_some()
    }

    pub fn has_hand_written(&self) -> bool {
        self.inverse.as_ref().is_some_and(|w| w.hand.is_some())
    }

    pub fn forward_interp(&mut self) {
        let k = self.next(self.inputs.len());
        let x = &self.inputs[k];
        let interp = Interpreter::new(self.program.module()).with_config(self.limits);
        let _ = black_box(interp.call_traced(self.id, black_box(x), None));
    }

    pub fn forward_native(&mut self) {
        let k = self.next(self.inputs.len());
        let x = &self.inputs[k];
        let _ = black_box(
            self.forward
                .call_into(&self.limits, black_box(x), None, &mut self.out),
        );
    }

    pub fn inverse_interp(&mut self) {
        let k = self.next(self.inverse_cases());
        if let Some(w) = &mut self.inverse {
            let interp = Interpreter::new(w.inverse.module()).with_config(self.limits);
            let tape = &mut w.tapes[k];
            tape.rewind();
            let _ = black_box(interp.call_traced(
                w.inverse.inverse_id(),
                black_box(&w.cases[k].0),
                Some(tape),
            ));
        }
    }

    pub fn inverse_native(&mut self) {
        let k = self.next(self.inverse_cases());
        if let Some(w) = &mut self.inverse {
            let tape = &mut w.tapes[k];
            tape.rewind();
            let _ = black_box(w.native.call_into(
                &self.limits,
                black_box(&w.cases[k].0),
                Some(tape),
                &mut w.out,
            ));
        }
    }

    pub fn hand_written(&mut self) {
        let k = self.next(self.inverse_cases());
        if let Some(w) = &self.inverse {
            if let Some(hand) = w.hand {
                let (y, theta) = &w.cases[k];
                let _ = black_box(hand(black_box(y), black_box(theta)));
            }
        }
    }
}

fn prepare_inverse(
    inverse: crate::program::Inverse,
    inputs: &[Vec<Const>],
    notes: &mut Vec<String>,
) -> Result<InverseWork> {
    let native = inverse
        .native()
        .map_err(|e| Error::Internal(e.to_string()))?;
    let hand = reference::inverse(inverse.function());
    let mut cases = Vec::new();
    let mut hand_differs = 0;
    for x in inputs {
        let (Ok(y), Ok(theta)) = (inverse.forward(x), inverse.pgf(x)) else {
            continue;
        };
        let Ok(back) = inverse.call_with_tape(&y, &theta) else {
            continue;
        };
        if let Some(hand) = hand {
            if hand(&y, &theta).as_deref() != Some(&back[..]) {
                hand_differs += 1;
                continue;
            }
        }
        cases.push((y, theta));
    }
    if hand_differs > 0 {
        notes.push(format!(
            "{hand_differs} of {} cases left out: the hand-written inverse takes only the usual path",
            inputs.len()
        ));
    }
    let tapes = cases
        .iter()
        .map(|(_, theta)| TapeSource::new(theta.clone()))
        .collect();
    let out = vec![Const::Bool(false); inverse.input_types().len()];
    Ok(InverseWork {
        inverse,
        native,
        cases,
        tapes,
        hand,
        out,
    })
}

/// Median time from source text to a callable native inverse (`None` if it does not invert).
pub fn compile_latency(source: &SourceFile, function: &str, runs: usize) -> Option<Duration> {
    let mut times = Vec::new();
    for _ in 0..runs.max(1) {
        let t = Instant::now();
        let program = Program::from_source(source.clone()).ok()?;
        let inverse = program.invert(function).ok()?;
        inverse.native().ok()?;
        times.push(t.elapsed());
    }
    Some(median(times))
}

/// Measures `function` of the program in `source`.
/// What [`bench_with`] is measuring, reported before each column starts (for progress bars).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    ForwardInterp,
    ForwardNative,
    CompileForward,
    InverseInterp,
    InverseNative,
    HandWritten,
    CompileInverse,
}

impl Phase {
    /// Every phase, in the order they run.
    pub const ALL: [Phase; 7] = [
        Phase::ForwardInterp,
        Phase::ForwardNative,
        Phase::CompileForward,
        Phase::InverseInterp,
        Phase::InverseNative,
        Phase::HandWritten,
        Phase::CompileInverse,
    ];

    /// The phase's position in [`Phase::ALL`].
    pub fn index(self) -> usize {
        Phase::ALL.iter().position(|&p| p == self).unwrap_or(0)
    }

    pub fn label(self) -> &'static str {
        match self {
            Phase::ForwardInterp => "forward, interpreted",
            Phase::ForwardNative => "forward, native",
            Phase::CompileForward => "compiling forward",
            Phase::InverseInterp => "inverse, interpreted",
            Phase::InverseNative => "inverse, native",
            Phase::HandWritten => "hand-written inverse",
            Phase::CompileInverse => "source → native inverse",
        }
    }
}

/// Measures `function` of `source` (see the module docs).
pub fn bench(source: &SourceFile, function: &str, config: &BenchConfig) -> Result<BenchReport> {
    bench_with(source, function, config, &mut |_| {})
}

/// [`fn@bench`], telling `observe` which phase starts (phases that do not apply are skipped).
pub fn bench_with(
    source: &SourceFile,
    function: &str,
    config: &BenchConfig,
    observe: &mut dyn FnMut(Phase),
) -> Result<BenchReport> {
    let mut w = Workload::new(source, function, config.cases, config.seed)?;
    let mut report = BenchReport {
        function: w.function.clone(),
        cases: w.inverse_cases(),
        ..BenchReport::default()
    };
    observe(Phase::ForwardInterp);
    report.forward_interp = time_per_call(config.budget, |_| w.forward_interp());
    observe(Phase::ForwardNative);
    report.forward_native = time_per_call(config.budget, |_| w.forward_native());
    observe(Phase::CompileForward);
    let module = std::sync::Arc::new(w.program.module().clone());
    report.compile_forward = median(
        (0..config.compile_runs.max(1))
            .map(|_| {
                let t = Instant::now();
                let code = pinv_core::jit::compile(std::sync::Arc::clone(&module), w.id);
                let d = t.elapsed();
                drop(code);
                d
            })
            .collect(),
    );
    if w.has_inverse() {
        observe(Phase::InverseInterp);
        report.inverse_interp = Some(time_per_call(config.budget, |_| w.inverse_interp()));
        observe(Phase::InverseNative);
        report.inverse_native = Some(time_per_call(config.budget, |_| w.inverse_native()));
        if w.has_hand_written() {
            observe(Phase::HandWritten);
            report.hand_written = Some(time_per_call(config.budget, |_| w.hand_written()));
        }
        observe(Phase::CompileInverse);
        report.compile_inverse = compile_latency(source, function, config.compile_runs);
    }
    report.notes = w.notes.clone();
    Ok(report)
}

/// Hand-written Rust inverses of corpus functions, reading θ as pinv's generated inverse does on
/// its usual path (so the same tape gives the same x), with the same soundness check at the end:
/// f(x) = y within 1e-9 relative.
///
/// They return `None` where the generated inverse would leave its usual path (a zero or NaN
/// intermediate, θ out of its domain) or the check fails.
pub mod reference {
    use pinv_core::ir::Const;

    /// The hand-written inverse of the corpus function `name`: (y, θ) → x.
    pub type HandInverse = fn(&[Const], &[Const]) -> Option<Vec<Const>>;

    /// The hand-written inverse of a corpus function, if there is one.
    pub fn inverse(name: &str) -> Option<HandInverse> {
        Some(match name {
            "mul_add" => mul_add,
            "lin" => lin,
            "square" => square,
            "quad" => quad,
            "arm3" => arm3,
            "triangle" => triangle,
            "f2" => f2,
            "splitmix" => splitmix,
            "scale_rotate" => scale_rotate,
            "cubic" => cubic,
            _ => return None,
        })
    }

    fn f(c: Option<&Const>) -> Option<f64> {
        c?.as_f64()
    }

    fn i(c: Option<&Const>) -> Option<i64> {
        c?.as_i64()
    }

    /// pinv's tolerance: equal, both NaN, or |a − b| ≤ 1e-9 · max(1, |b|).
    fn close(a: f64, b: f64) -> bool {
        pinv_core::ir::f64_close(a, b, 1e-9)
    }

    fn nonzero(x: f64) -> Option<f64> {
        (x != 0.0).then_some(x)
    }

    /// `mul_add(x, y, z) = x * y + z`. θ: z, then x (nonzero); y = (y₀ − z) / x.
    pub fn mul_add(y: &[Const], t: &[Const]) -> Option<Vec<Const>> {
        let out = f(y.first())?;
        let z = f(t.first())?;
        let p = out - z;
        if p == 0.0 || p.is_nan() {
            return None;
        }
        let a = nonzero(f(t.get(1))?)?;
        let b = p / a;
        close(a * b + z, out).then(|| vec![Const::F64(a), Const::F64(b), Const::F64(z)])
    }

    /// `lin(x, y) = x * 2 + y * 3`. θ: the value of y * 3.
    pub fn lin(y: &[Const], t: &[Const]) -> Option<Vec<Const>> {
        let out = f(y.first())?;
        let r = f(t.first())?;
        let x = (out - r) / 2.0;
        let y = r / 3.0;
        close(x * 2.0 + y * 3.0, out).then(|| vec![Const::F64(x), Const::F64(y)])
    }

    /// ±√s by a sign choice (0: +, 1: −).
    fn signed_root(s: f64, choice: i64) -> Option<f64> {
        if s < 0.0 {
            return None;
        }
        match choice {
            0 => Some(s.sqrt()),
            1 => Some(-s.sqrt()),
            _ => None,
        }
    }

    /// `square(x) = x * x`. θ: the sign of the root.
    pub fn square(y: &[Const], t: &[Const]) -> Option<Vec<Const>> {
        let out = f(y.first())?;
        let x = signed_root(out, i(t.first())?)?;
        close(x * x, out).then(|| vec![Const::F64(x)])
    }

    /// `quad(x) = x * x + 3 * x = (x + 1.5)² − 2.25`. θ: the sign of the root.
    pub fn quad(y: &[Const], t: &[Const]) -> Option<Vec<Const>> {
        let out = f(y.first())?;
        let x = signed_root(out + 2.25, i(t.first())?)? - 1.5;
        close(x * x + 3.0 * x, out).then(|| vec![Const::F64(x)])
    }

    /// `triangle(x) = 0 + 1 + … + x`, inverted as pinv scans its trip count: θ is which
    /// candidate trip count k (r after k trips is y), then x from the bounds that stop the
    /// loop after k trips (x < 0 for none, else x = k − 1).
    pub fn triangle(y: &[Const], t: &[Const]) -> Option<Vec<Const>> {
        let out = i(y.first())?;
        let (pick, x) = (i(t.first())?, i(t.get(1))?);
        let (mut r, mut k, mut seen) = (0i64, 0i64, 0i64);
        loop {
            if r == out {
                if seen == pick {
                    break;
                }
                seen += 1;
            }
            if r > out {
                return None;
            }
            r = r.checked_add(k)?;
            k += 1;
        }
        let (lo, hi) = if k == 0 {
            (i64::MIN, -1)
        } else {
            (k - 1, k - 1)
        };
        (lo <= x && x <= hi).then(|| vec![Const::I64(x)])
    }

    fn arm3_forward(t1: f64, t2: f64, t3: f64) -> (f64, f64) {
        let a1 = t1;
        let a2 = a1 + t2;
        let a3 = a2 + t3;
        let x = a1.cos() + 2.0 * a2.cos() + 0.5 * a3.cos();
        let y = a1.sin() + 2.0 * a2.sin() + 0.5 * a3.sin();
        (x, y)
    }

    /// `arm3(t1, t2, t3) -> (x, y)`, a planar arm, inverted as pinv solves planar chains
    /// (`pinv::egraph::polar`): θ is the angle a3 of the shortest link, then the elbow and the
    /// whole turns of a1 and a2, which the two-link solution (law of cosines) gives from the
    /// point the first two links must reach.
    pub fn arm3(y: &[Const], t: &[Const]) -> Option<Vec<Const>> {
        let (ox, oy) = (f(y.first())?, f(y.get(1))?);
        let a3 = f(t.first())?;
        let lower = match i(t.get(1))? {
            0 => false,
            1 => true,
            _ => return None,
        };
        let (k1, k2) = (i(t.get(2))?, i(t.get(3))?);
        // The wrist: the hand minus the last link.
        let (rx, ry) = (ox - 0.5 * a3.cos(), oy - 0.5 * a3.sin());
        // Links of length 1 and 2: |w|² = 1 + 4 + 4·cos δ.
        let c = (rx * rx + ry * ry - 5.0) / 4.0;
        if !(-1.000000001..=1.000000001).contains(&c) {
            return None;
        }
        let c = c.clamp(-1.0, 1.0);
        let s = (1.0 - c * c).sqrt();
        let s = if lower { -s } else { s };
        let a = ry.atan2(rx) - (2.0 * s).atan2(1.0 + 2.0 * c);
        let b = a + s.atan2(c);
        let tau = std::f64::consts::TAU;
        let a1 = a + k1 as f64 * tau;
        let a2 = b + k2 as f64 * tau;
        let (t1, t2, t3) = (a1, a2 - a1, a3 - a2);
        let (fx, fy) = arm3_forward(t1, t2, t3);
        (close(fx, ox) && close(fy, oy))
            .then(|| vec![Const::F64(t1), Const::F64(t2), Const::F64(t3)])
    }

    fn f2_forward(a: f64, b: f64, c: f64) -> f64 {
        let x = a + b + 3.0;
        let y = a * c;
        if x > 3.0 {
            x + x / y
        } else {
            y + x
        }
    }

    /// `f2(a, b, c)`: `x + x / y` or `y + x` with x = a + b + 3, y = a·c. θ: the branch, then
    /// x / y (then-branch) or x (else-branch), then a (nonzero).
    pub fn f2(y: &[Const], t: &[Const]) -> Option<Vec<Const>> {
        let out = f(y.first())?;
        let (x, yv) = match i(t.first())? {
            0 => {
                let q = f(t.get(1))?;
                let x = out - q;
                let yv = x / q;
                if x <= 3.0 || x.is_nan() {
                    return None;
                }
                (x, yv)
            }
            1 => {
                let x = f(t.get(1))?;
                if x > 3.0 {
                    return None;
                }
                (x, out - x)
            }
            _ => return None,
        };
        if yv == 0.0 || yv.is_nan() {
            return None;
        }
        let a = nonzero(f(t.get(2))?)?;
        let c = yv / a;
        let b = (x - 3.0) - a;
        close(f2_forward(a, b, c), out).then(|| vec![Const::F64(a), Const::F64(b), Const::F64(c)])
    }

    /// The inverse of odd `u` modulo 2⁶⁴.
    const fn odd_inverse(u: u64) -> u64 {
        let mut v = u;
        let mut i = 0;
        while i < 6 {
            v = v.wrapping_mul(2u64.wrapping_sub(u.wrapping_mul(v)));
            i += 1;
        }
        v
    }

    /// The inverse of `x ^ (x >> k)` (logical shift): the classic unshift loop.
    fn unshift(y: u64, k: u32) -> u64 {
        let mut x = y;
        let mut s = k;
        while s < 64 {
            x ^= x >> s;
            s *= 2;
        }
        x
    }

    const M1: u64 = 0xbf58_476d_1ce4_e5b9;
    const M2: u64 = 0x94d0_49bb_1331_11eb;

    fn splitmix_forward(x: u64) -> u64 {
        let z = (x ^ (x >> 30)).wrapping_mul(M1);
        let z = (z ^ (z >> 27)).wrapping_mul(M2);
        z ^ (z >> 31)
    }

    /// `splitmix(x)`, the splitmix64 finaliser, a bijection: unshift, multiply by the modular
    /// inverse, twice, and unshift once more. No θ.
    pub fn splitmix(y: &[Const], _: &[Const]) -> Option<Vec<Const>> {
        let out = i(y.first())? as u64;
        let z = unshift(out, 31).wrapping_mul(const { odd_inverse(M2) });
        let z = unshift(z, 27).wrapping_mul(const { odd_inverse(M1) });
        let x = unshift(z, 30);
        (splitmix_forward(x) == out).then(|| vec![Const::I64(x as i64)])
    }

    /// `cubic(x) = x³ + 2x` (`docs/gallery.pinv`). θ is a start point: returned at once where
    /// it gives y exactly, as pinv's numeric root does (the PGF's θ is x itself); otherwise
    /// Newton's method from it (the cubic is increasing, so it converges from any start).
    pub fn cubic(y: &[Const], t: &[Const]) -> Option<Vec<Const>> {
        let out = f(y.first())?;
        let forward = |x: f64| x * x * x + 2.0 * x;
        let mut x = f(t.first())?;
        if forward(x) != out {
            for _ in 0..100 {
                let step = (forward(x) - out) / (3.0 * x * x + 2.0);
                x -= step;
                if step.abs() <= 1e-15 * x.abs().max(1.0) {
                    break;
                }
            }
        }
        close(forward(x), out).then(|| vec![Const::F64(x)])
    }

    /// `scale_rotate(x, y, s, t)`: θ is t, then s (nonzero); (x, y) solves the 2×2 system
    /// `[[c, −d], [d, c]]·(x, y) = y` with c = s·cos t, d = s·sin t, by elimination with
    /// partial pivoting, as pinv's run-time linear solver does.
    pub fn scale_rotate(y: &[Const], t: &[Const]) -> Option<Vec<Const>> {
        let (o0, o1) = (f(y.first())?, f(y.get(1))?);
        let angle = f(t.first())?;
        let s = nonzero(f(t.get(1))?)?;
        let (c, d) = (s * angle.cos(), s * angle.sin());
        let (mut a00, mut a01, mut a10, mut a11) = (c, -d, d, c);
        let (mut r0, mut r1) = (o0 - 0.0, o1 - 0.0);
        let scale = [a00, a01, a10, a11]
            .iter()
            .fold(f64::MIN_POSITIVE, |m, v| m.max(v.abs()));
        if a10.abs() > a00.abs() {
            std::mem::swap(&mut a00, &mut a10);
            std::mem::swap(&mut a01, &mut a11);
            std::mem::swap(&mut r0, &mut r1);
        }
        if a00.abs() <= scale * 1e-12 {
            return None;
        }
        let k = a10 / a00;
        let a11 = a11 - k * a01;
        let r1 = r1 - k * r0;
        if a11.abs() <= scale * 1e-12 {
            return None;
        }
        let v = r1 / a11;
        let u = (r0 - a01 * v) / a00;
        let (fx, fy) = (c * u - d * v, d * u + c * v);
        (close(fx, o0) && close(fy, o1)).then(|| {
            vec![
                Const::F64(u),
                Const::F64(v),
                Const::F64(s),
                Const::F64(angle),
            ]
        })
    }
}
