use pinv::check::{check_function, CheckConfig};
use pinv::Program;

#[test]
fn scratch() {
    let text = std::env::var("SRC").unwrap_or_else(|_| {
        "
fn cube(x: f64) -> f64 { x * x * x }
fn imix(a: i64) -> i64 { a * 3 + a }
fn imix2(a: i64, b: i64) -> i64 { a * b + a }
fn two(x: f64, y: f64) -> (f64, f64) { (x + y, x * y + x) }
fn br(x: f64) -> f64 { if x > 0.0 { x * x + x } else { x } }
fn expo(x: f64, y: f64) -> f64 { exp(x) * exp(y) + exp(x) }
fn lg(x: f64) -> f64 { log(x * x + 1.0) + x * x }
fn sinf(x: f64) -> f64 { sin(x) + sin(x) * 2.0 }
fn big(a: f64, b: f64, c: f64) -> f64 { a * b + a * c + b * c + a }
fn quart(x: f64) -> f64 { x * x * x * x - 2.0 * x * x }
"
        .to_string()
    });
    let program = Program::parse("s.pinv", &text).unwrap();
    for name in program.function_names() {
        let t = std::time::Instant::now();
        match program.invert(name) {
            Ok(inv) => {
                for r in inv.isolation() {
                    print!("{}", r.summary());
                }
            }
            Err(e) => println!("{name}: {e}"),
        }
        let r = check_function(
            &program,
            name,
            &CheckConfig {
                cases: 300,
                ..CheckConfig::default()
            },
        );
        println!(
            "{name}: {:?} acc {:.1}% {:?} {:?} {:?} ({:.2}s)\n",
            r.status,
            r.acceptance(),
            r.soundness,
            r.completeness,
            r.message,
            t.elapsed().as_secs_f64()
        );
    }
}
