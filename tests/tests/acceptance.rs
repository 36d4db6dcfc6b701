//! Acceptance on functions of the kinds users bring (`tests/programs/acceptance.pinv` and
//! `tests/corpus/systems.pinv`): kinematics, statistics, finance, geometry, normalisation,
//! piecewise maps. Every inverse is sound and complete, the median function accepts ≥ 99% of
//! the θ drawn, and none accepts fewer than half.
//!
//! `PINV_CHECK_CASES` sets the sampled inputs per function (default 1000; at most 300 here).

use pinv::check::{check_function, CheckConfig, Status};
use pinv::Program;
use pinv_tests::corpus_dir;

#[test]
fn functions_users_bring_accept_almost_every_theta() {
    let config = CheckConfig {
        cases: pinv_tests::check_cases().min(300),
        ..CheckConfig::default()
    };
    let mut rates = Vec::new();
    let mut failures = Vec::new();
    for file in ["systems.pinv", "../programs/acceptance.pinv"] {
        let program = Program::load(corpus_dir().join(file)).expect("loads");
        for name in program.function_names() {
            let r = check_function(&program, name, &config);
            let sound = r.soundness.violations == 0 && r.soundness.errors == 0;
            let complete = r.completeness.recovered == r.completeness.trials;
            if !(sound && complete && r.status == Status::Ok) {
                failures.push(format!("{file} {name}: {:?} {:?}", r.status, r.message));
            }
            let rate = r.acceptance();
            if rate < 50.0 {
                failures.push(format!("{file} {name}: accepts {rate:.1}%"));
            }
            rates.push(rate);
        }
    }
    assert!(rates.len() >= 25, "{} functions", rates.len());
    rates.sort_by(f64::total_cmp);
    let median = rates[rates.len() / 2];
    assert!(median >= 99.0, "median acceptance {median:.1}%: {rates:?}");
    assert!(failures.is_empty(), "{failures:#?}");
}
