//! Times the isolation pass on generated straight-line functions of 10, 100 and 1,000
//! instructions (and the whole inversion, with and without isolation).
//!
//! ```text
//! cargo run --release -p pinv --example isolation_bench [SAMPLES]
//! ```
//!
//! Each function has 4 f64 inputs and random `fadd`/`fsub`/`fmul`/`fdiv`/`fneg` instructions
//! whose operands are earlier values (biased towards recent ones), so values are reused all
//! over: fan-out everywhere, the hard case. The output sums the last few values so that most
//! instructions are live.

use pinv::egraph::{isolate_function, IsolationConfig};
use pinv::reorient::{reorient, ReorientOptions};
use pinv_core::ir::{Const, FuncKind, Function, Module, Opcode, Signature, Type, Value};
use pinv_core::Span;
use pinv_primitives::Stack;
use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};
use std::time::{Duration, Instant};

/// A random function of `n` instructions.
pub fn generate(n: usize, seed: u64) -> Module {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let sig = Signature {
        params: vec![Type::F64; 4],
        returns: vec![Type::F64],
    };
    let mut f = Function::new(format!("gen{n}"), FuncKind::Fn, sig);
    f.param_names = ["a", "b", "c", "d"].iter().map(|s| s.to_string()).collect();
    let b = f.create_entry();
    let mut values: Vec<Value> = f.blocks[b].params.clone();
    let span = Span::default();
    let mut count = 0;
    while count < n {
        let pick = |rng: &mut Xoshiro256PlusPlus, values: &[Value]| {
            if rng.random_bool(0.3) {
                return values[rng.random_range(0..4usize)];
            }
            let len = values.len();
            let back = (rng.random_range(0.0..1.0f64).powi(3) * len as f64) as usize;
            values[len - 1 - back.min(len - 1)]
        };
        let v = match rng.random_range(0..16u32) {
            0 => {
                let c = f64::from(rng.random_range(1..=9i32)) * 0.5;
                f.ins_const(b, Const::F64(c), span)
            }
            1 => {
                let a = pick(&mut rng, &values);
                f.ins_prim(b, Opcode::Fneg, vec![a], span)
            }
            k => {
                let op = [Opcode::Fadd, Opcode::Fsub, Opcode::Fmul, Opcode::Fdiv][(k % 4) as usize];
                let x = pick(&mut rng, &values);
                let y = pick(&mut rng, &values);
                f.ins_prim(b, op, vec![x, y], span)
            }
        };
        values.push(v);
        count += 1;
    }
    let mut out = values[values.len() - 1];
    for &v in values.iter().rev().skip(1).take(3) {
        out = f.ins_prim(b, Opcode::Fadd, vec![out, v], span);
    }
    f.ins_return(b, vec![out], span);
    let mut m = Module::new();
    m.add(f).expect("one function");
    m
}

fn main() {
    let samples: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(5);
    let config = IsolationConfig::default();
    println!(
        "limits: {} nodes, {} iterations, {:?} per run, {:?} per function, {} pivots",
        config.node_limit,
        config.iter_limit,
        config.run_time_limit,
        config.function_time_limit,
        config.max_pivots
    );
    // The fan-out corpus.
    let corpus = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/corpus/fanout.pinv");
    if let Ok(program) = pinv::Program::load(corpus) {
        for name in program.function_names() {
            let (id, _) = program.function(name).expect("exists");
            let t = Instant::now();
            let iso = isolate_function(program.module(), id, &config);
            println!(
                "fanout.pinv {name:>10}: {:>8.2}ms  {:?}",
                t.elapsed().as_secs_f64() * 1e3,
                iso.report.outcome
            );
        }
    }
    println!(
        "{:>6} {:>8} {:>10} {:>10} {:>10} {:>12} {:>12}  outcomes",
        "insts", "samples", "iso min", "iso median", "iso max", "invert (iso)", "invert (off)"
    );
    for n in [10, 100, 1000] {
        let mut times = Vec::new();
        let mut with = Vec::new();
        let mut without = Vec::new();
        let mut outcomes = std::collections::BTreeMap::new();
        for s in 0..samples {
            let m = generate(n, s as u64);
            let id = m.iter().next().expect("a function").0;
            let t = Instant::now();
            let iso = isolate_function(&m, id, &config);
            times.push(t.elapsed());
            let key = match iso.report.outcome {
                pinv::egraph::Outcome::NotIsolated => format!(
                    "not isolated ({})",
                    iso.report
                        .last_stop()
                        .map_or("-".to_string(), |s| s.to_string())
                ),
                ref o => format!("{o:?}"),
            };
            *outcomes.entry(key).or_insert(0) += 1;
            let stack = Stack::standard();
            let t = Instant::now();
            let ok = reorient(&m, id, &stack, &ReorientOptions::default()).is_ok();
            with.push((t.elapsed(), ok));
            let off = ReorientOptions {
                isolation: IsolationConfig::disabled(),
                ..ReorientOptions::default()
            };
            let t = Instant::now();
            let ok = reorient(&m, id, &stack, &off).is_ok();
            without.push((t.elapsed(), ok));
        }
        times.sort();
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        let median = |v: &[(Duration, bool)]| {
            let mut d: Vec<Duration> = v.iter().map(|x| x.0).collect();
            d.sort();
            d[d.len() / 2]
        };
        println!(
            "{:>6} {:>8} {:>8.1}ms {:>8.1}ms {:>8.1}ms {:>10.1}ms {:>10.1}ms  {:?}",
            n,
            samples,
            ms(times[0]),
            ms(times[times.len() / 2]),
            ms(times[times.len() - 1]),
            ms(median(&with)),
            ms(median(&without)),
            outcomes
        );
    }
}
