//! Differential: the interpreter and native code agree bit for bit on the whole corpus.
//!
//! - **Forward**: every function of every `tests/corpus/*.pinv` (declared `inverse`s and `pgf`s
//!   included) on random inputs (special values, NaN and infinities among them).
//! - **Inverse**: for every `fn` that inverts on this branch, `f⁻¹(y, θ)` on y = f(x) for random x
//!   and on random y, with θ drawn by the sampler (recorded in the interpreter, replayed to both
//!   engines as a tape), with garbage tapes (wrong types, out of range, too short), and with
//!   the PGF's tape.
//! - **PGF**: the tape recorded for random x.
//!
//! Results must have the same bits, steps, θ reads and depth; errors the same kind, function,
//! span and backtrace (for the step limit, the same kind); the tape must be read as far. Large
//! units are compiled quickly and recompiled after enough calls: inverses and PGFs run both.
//!
//! `PINV_DIFF_CASES` sets the cases per function (default 1,000: about 3 s in a debug build).

use pinv::{Program, Sampler};
use pinv_core::interp::{
    InterpConfig, Outcome, RuntimeError, RuntimeErrorKind, TapeRecorder, TapeSource,
};
use pinv_core::ir::{Const, FuncId, FuncKind, Module, Type};
use pinv_core::jit::{Engine, Runner};
use pinv_tests::{corpus_dir, pinv_files};
use std::sync::Arc;

fn cases() -> usize {
    std::env::var("PINV_DIFF_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1000)
}

/// The shared generator, with the values this test draws.
struct Rng(pinv_core::rng::Rng);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0.next_u64()
    }
    fn below(&mut self, n: u64) -> u64 {
        self.0.below(n)
    }
    fn value(&mut self, ty: Type) -> Const {
        match ty {
            Type::F64 => Const::F64(match self.below(6) {
                0 => [
                    0.0,
                    -0.0,
                    f64::INFINITY,
                    f64::NEG_INFINITY,
                    f64::NAN,
                    1e-310,
                ][self.below(6) as usize],
                1 => f64::from_bits(self.next()),
                _ => (self.below(4001) as f64 - 2000.0) / 100.0,
            }),
            Type::I64 => Const::I64(match self.below(4) {
                0 => [0, 1, -1, i64::MIN, i64::MAX, 64][self.below(6) as usize],
                1 => self.next() as i64,
                _ => self.below(401) as i64 - 200,
            }),
            Type::Bool => Const::Bool(self.below(2) == 0),
        }
    }
    fn values(&mut self, types: &[Type]) -> Vec<Const> {
        types.iter().map(|&t| self.value(t)).collect()
    }
}

/// Limits for every run: loops whose trip count comes from an input stop here.
fn config() -> InterpConfig {
    InterpConfig::default().with_step_limit(20_000)
}

struct Engines {
    interp: Runner,
    jit: Runner,
}

impl Engines {
    fn new(module: Arc<Module>) -> Engines {
        Engines {
            interp: Runner::new(Arc::clone(&module), Engine::Interp).with_config(config()),
            jit: Runner::new(module, Engine::Jit).with_config(config()),
        }
    }

    /// Runs `f` in both engines with what `theta` makes for each run, and compares.
    fn agree(
        &self,
        what: &str,
        f: FuncId,
        args: &[Const],
        theta: &Theta,
    ) -> Result<Outcome, RuntimeError> {
        if let Err(e) = self.jit.compiled(f) {
            panic!("{what}: does not compile: {e}");
        }
        let (want, want_theta) = theta.run(&self.interp, f, args);
        let (got, got_theta) = theta.run(&self.jit, f, args);
        let context = || format!("{what}{args:?} with {theta:?}");
        match (&want, &got) {
            (Ok(w), Ok(g)) => {
                assert_eq!(
                    w,
                    g,
                    "{}: bits {:x?} vs {:x?}",
                    context(),
                    w.results.iter().map(|c| c.bits()).collect::<Vec<_>>(),
                    g.results.iter().map(|c| c.bits()).collect::<Vec<_>>()
                );
                assert_eq!(want_theta, got_theta, "θ: {}", context());
            }
            (Err(w), Err(g)) => {
                assert_eq!(w.kind, g.kind, "{}", context());
                if !matches!(w.kind, RuntimeErrorKind::StepLimit { .. }) {
                    assert_eq!(w, g, "{}", context());
                }
            }
            (w, g) => panic!("{}: interpreter {w:?}, native {g:?}", context()),
        }
        got
    }
}

/// The θ source of a run.
#[derive(Debug)]
enum Theta {
    None,
    Tape(Vec<Const>),
    Recorder,
}

impl Theta {
    /// Runs and returns what the source saw: the tape position, or the recorded tape.
    fn run(
        &self,
        runner: &Runner,
        f: FuncId,
        args: &[Const],
    ) -> (Result<Outcome, RuntimeError>, Vec<Const>) {
        match self {
            Theta::None => (runner.call_traced(f, args, None), Vec::new()),
            Theta::Tape(values) => {
                let mut tape = TapeSource::new(values.clone());
                let r = runner.call_traced(f, args, Some(&mut tape));
                (r, vec![Const::I64(tape.pos() as i64)])
            }
            Theta::Recorder => {
                let mut rec = TapeRecorder::new();
                let r = runner.call_traced(f, args, Some(&mut rec));
                (r, rec.into_values())
            }
        }
    }
}

/// Counts of what the test reached, so that it cannot pass by comparing nothing.
#[derive(Debug, Default)]
struct Reached {
    forward: usize,
    inverses: usize,
    inverse_ok: usize,
    inverse_err: usize,
    pgf_ok: usize,
}

#[test]
fn corpus_agrees_in_both_engines() {
    let n = cases();
    let mut reached = Reached::default();
    for path in pinv_files(&corpus_dir()) {
        let file = path.file_name().and_then(|n| n.to_str()).unwrap_or("?");
        let program = Program::load(&path).unwrap_or_else(|e| panic!("{file}: {e}"));
        let module = Arc::new(program.module().clone());
        let engines = Engines::new(Arc::clone(&module));
        let mut rng = Rng(pinv_core::rng::Rng::new(0x1234_5678 ^ file.len() as u64));

        for (id, f) in module.iter() {
            for _ in 0..n {
                let args = rng.values(&f.sig.params);
                let _ = engines.agree(&format!("{file}: {}", f.name), id, &args, &Theta::None);
                reached.forward += 1;
            }
        }

        for (id, f) in module.iter() {
            if f.kind != FuncKind::Fn {
                continue;
            }
            let Ok(inverse) = program.invert(&f.name) else {
                continue;
            };
            reached.inverses += 1;
            let inv_module = Arc::new(inverse.module().clone());
            let inv = Engines::new(Arc::clone(&inv_module));
            let what = format!("{file}: {}.inv", f.name);
            let pgf = inverse.pgf_id().ok();
            let mut sampler = Sampler::new(rng.next());
            for case in 0..n {
                if case == n / 2 {
                    // Large units are compiled quickly first and recompiled after enough
                    // calls: the second half of the cases runs the recompiled code.
                    for g in std::iter::once(inverse.inverse_id()).chain(pgf) {
                        if let Ok(code) = inv.jit.compiled(g) {
                            code.tier_up_now();
                        }
                    }
                }
                let x = rng.values(&f.sig.params);
                let y = match engines.interp.call(id, &x) {
                    Ok(y) if case % 4 != 3 => y,
                    _ => rng.values(&f.sig.returns),
                };
                // θ drawn from the domains, as the interpreter read it.
                sampler.take_drawn();
                let _ = inv
                    .interp
                    .call_traced(inverse.inverse_id(), &y, Some(&mut sampler));
                let mut tape = sampler.take_drawn();
                match case % 5 {
                    // Too short, or garbage of random types.
                    3 => {
                        tape.truncate(rng.below(tape.len() as u64 + 1) as usize);
                    }
                    4 => {
                        let len = rng.below(6) as usize;
                        tape = (0..len)
                            .map(|_| {
                                let ty = Type::ALL[rng.below(3) as usize];
                                rng.value(ty)
                            })
                            .collect();
                    }
                    _ => {}
                }
                match inv.agree(&what, inverse.inverse_id(), &y, &Theta::Tape(tape)) {
                    Ok(_) => reached.inverse_ok += 1,
                    Err(_) => reached.inverse_err += 1,
                }
                if let Some(pgf) = pgf {
                    let what = format!("{file}: {}.pgf", f.name);
                    if inv.agree(&what, pgf, &x, &Theta::Recorder).is_ok() {
                        reached.pgf_ok += 1;
                        // The PGF's tape, replayed to the inverse.
                        let mut rec = TapeRecorder::new();
                        if inv.interp.call_with_theta(pgf, &x, &mut rec).is_ok() {
                            if let Ok(y) = engines.interp.call(id, &x) {
                                let _ = inv.agree(
                                    &what,
                                    inverse.inverse_id(),
                                    &y,
                                    &Theta::Tape(rec.into_values()),
                                );
                            }
                        }
                    }
                }
            }
        }
    }
    eprintln!("{reached:?}");
    assert!(reached.forward > 0 && reached.inverses >= 10, "{reached:?}");
    assert!(
        reached.inverse_ok > 0 && reached.inverse_err > 0,
        "{reached:?}"
    );
    assert!(reached.pgf_ok > 0, "{reached:?}");
}
