//! The long run of the generated-programs property test: `cargo run --release -p pinv-tests
//! --example gen_check -- [COUNT] [FIRST_SEED] [CASES]` inverts every function of COUNT random
//! valid programs (`pinv_tests::gen`) and checks each with CASES sampled inputs (default 30),
//! printing the counts the issue asks for and every failure with its seed. `--print SEED`
//! prints one program. With `GEN_CHECK_EACH` set it prints every function's counts (to diff
//! two builds); with `GEN_CHECK_LAZY` set it inverts with the PGFs left for when `check` first
//! needs them (`ReorientOptions::lazy_pgf`), which must not change a count; with
//! `GEN_CHECK_EXACT` set, every step names exact floats (`EmitOptions::exact_floats`), to find
//! where that mode is not yet exact (it is the loops' mode, not the default).

use pinv::check::{check_inverse, CheckConfig};
use pinv::{Error, Program};
use pinv_tests::gen;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--print") {
        let seed = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(0);
        print!("{}", gen::program(seed));
        return;
    }
    let count: u64 = args.first().and_then(|s| s.parse().ok()).unwrap_or(1000);
    let first: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let cases: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(30);
    let config = CheckConfig {
        cases,
        ..CheckConfig::default()
    };
    let (mut functions, mut inverted, mut unsupported) = (0, 0, 0);
    let (mut violations, mut errors, mut incomplete, mut internal) = (0, 0, 0, 0);
    let (mut trials, mut accepted) = (0usize, 0usize);
    let started = std::time::Instant::now();
    for seed in first..first + count {
        let text = gen::program(seed);
        let program = match Program::parse("gen.pinv", &text) {
            Ok(p) => p,
            Err(e) => {
                println!("seed {seed}: does not compile: {e}");
                internal += 1;
                continue;
            }
        };
        for name in program.function_names() {
            functions += 1;
            let mut options = pinv::reorient::ReorientOptions {
                lazy_pgf: std::env::var_os("GEN_CHECK_LAZY").is_some(),
                ..Default::default()
            };
            options.emit.exact_floats = std::env::var_os("GEN_CHECK_EXACT").is_some();
            let inverse = match program.invert_with(name, &program.stack(), &options) {
                Ok(inverse) => inverse,
                Err(Error::Unsupported { .. } | Error::NoRule { .. }) => {
                    unsupported += 1;
                    continue;
                }
                Err(e) => {
                    internal += 1;
                    println!("seed {seed} `{name}`: inversion failed: {e}");
                    continue;
                }
            };
            inverted += 1;
            let r = check_inverse(&inverse, &config);
            if std::env::var_os("GEN_CHECK_EACH").is_some() {
                println!(
                    "each {seed} {name}: {} of {} accepted, {}/{} recovered, {} θ",
                    r.soundness.accepted,
                    r.soundness.trials,
                    r.completeness.recovered,
                    r.completeness.trials,
                    r.theta
                );
            }
            trials += r.soundness.trials;
            accepted += r.soundness.accepted;
            violations += r.soundness.violations;
            errors += r.soundness.errors;
            if r.completeness.recovered != r.completeness.trials {
                incomplete += 1;
            }
            if r.soundness.violations > 0
                || r.soundness.errors > 0
                || r.completeness.recovered != r.completeness.trials
            {
                println!(
                    "seed {seed} `{name}`: {} violations, {} errors, {}/{} recovered: {}",
                    r.soundness.violations,
                    r.soundness.errors,
                    r.completeness.recovered,
                    r.completeness.trials,
                    r.message.as_deref().unwrap_or("")
                );
            }
        }
    }
    println!(
        "{count} programs, {functions} functions ({inverted} inverted, {unsupported} unsupported) \
         in {:.1} s: {violations} violations, {incomplete} incomplete, {errors} run-time errors \
         escaping an inverse, {internal} internal errors; acceptance {:.1}%",
        started.elapsed().as_secs_f64(),
        100.0 * accepted as f64 / trials.max(1) as f64
    );
}
