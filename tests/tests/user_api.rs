//! A property test written only with the public API, as a user of the `pinv` library would:
//! load a program, invert a function, and check `f(f⁻¹(y, θ)) = y` and `f⁻¹(f(x), pgf(x)) = x`.

use pinv::check::close;
use pinv::strategy::{inputs, theta};
use pinv::{Const, Program};
use proptest::prelude::*;

const SOURCE: &str = "
fn pose(angle: f64, reach: f64, lift: f64) -> (f64, f64) {
    let r = reach * 2.0 + 1.0;
    (r * cos(angle) + lift, r * sin(angle) - lift)
}
fn shift(a: i64, b: i64) -> i64 { (a + 7) * 3 - b }
";

fn all_close(a: &[Const], b: &[Const], tol: f64) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(&x, &y)| close(x, y, tol))
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn shift_inverse_is_sound_and_complete(
        x in inputs(&[pinv::Type::I64, pinv::Type::I64]),
        mut t in theta(1),
    ) {
        let program = Program::parse("user.pinv", SOURCE).expect("compiles");
        let inverse = program.invert("shift").expect("invertible");
        let y = inverse.forward(&x).expect("runs");
        if let Ok(x2) = inverse.call(&y, &mut t) {
            prop_assert_eq!(inverse.forward(&x2).expect("runs"), y.clone());
        }
        let back = inverse.call_with_tape(&y, &inverse.pgf(&x).expect("pgf")).expect("in domain");
        prop_assert_eq!(back, x);
    }

    #[test]
    fn pose_inverse_is_sound(
        x in inputs(&[pinv::Type::F64, pinv::Type::F64, pinv::Type::F64]),
        mut t in theta(4),
    ) {
        let program = Program::parse("user.pinv", SOURCE).expect("compiles");
        let inverse = program.invert("pose").expect("invertible");
        let y = inverse.forward(&x).expect("runs");
        if let Ok(x2) = inverse.call(&y, &mut t) {
            let y2 = inverse.forward(&x2).expect("runs");
            prop_assert!(all_close(&y2, &y, 1e-9), "{:?} ↦ {:?} ≠ {:?}", x2, y2, y);
        }
        let back = inverse.call_with_tape(&y, &inverse.pgf(&x).expect("pgf")).expect("in domain");
        prop_assert!(all_close(&back, &x, 1e-6), "{:?} ≠ {:?}", back, x);
    }
}
