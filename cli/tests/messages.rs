//! What pinv says in every way a run can fail, as a user sees it: bad programs, run-time
//! errors, limits, domain errors, bad input, inversion that is not supported, and a failed
//! check. Snapshot: `snapshots/failure_modes.txt`; after an intended change run
//! `UPDATE_EXPECT=1 cargo test -p pinv-cli --test messages` and review the diff.

mod common;

use common::{pinv, stderr, stdout};

#[test]
fn every_failure_mode_says_what_went_wrong_in_source_terms() {
    let cases: &[&[&str]] = &[
        // Bad programs: exit 2, with the place and the error.
        &["show", "tests/corpus/bad/assign_immutable.pinv"],
        &["show", "tests/corpus/bad/inverse_mismatch.pinv"],
        &["show", "tests/corpus/bad/mixed_types.pinv"],
        &["show", "tests/corpus/bad/unclosed.pinv"],
        &["show", "tests/corpus/bad/unknown_name.pinv"],
        // Run-time errors and limits: exit 1.
        &["run", "cli/tests/failures.pinv", "ratio", "7", "0"],
        &["run", "cli/tests/failures.pinv", "deep", "100000"],
        &[
            "run",
            "cli/tests/failures.pinv",
            "spin",
            "1",
            "--step-limit",
            "1000",
        ],
        // Inversion that is not possible.
        &["invert", "cli/tests/failures.pinv", "forever", "--y", "3"],
        // Domain errors: a y outside the image, a θ outside its domain.
        &["invert", "tests/corpus/loops.pinv", "triangle", "--y", "11"],
        &[
            "invert",
            "tests/corpus/recursion.pinv",
            "ping",
            "--y",
            "7",
            "--seed",
            "2",
        ],
        &[
            "invert",
            "tests/corpus/recursion.pinv",
            "ping",
            "--y",
            "-4",
            "--theta",
            "0",
        ],
        &[
            "invert",
            "tests/corpus/branches.pinv",
            "relu",
            "--y",
            "0",
            "--theta",
            "3.5",
        ],
        // The solvers' domain errors: a zero divisor, a remainder no dividend gives, a
        // negative variance Newton's method cannot reach.
        &[
            "invert",
            "cli/tests/failures.pinv",
            "divmod",
            "--y",
            "1, 2, 0",
            "--theta",
            "",
        ],
        &[
            "invert",
            "cli/tests/failures.pinv",
            "divmod",
            "--y",
            "1, -3, 7",
            "--theta",
            "",
        ],
        &[
            "invert",
            "cli/tests/failures.pinv",
            "stats3",
            "--y",
            "1, -2",
            "--theta",
            "0, 1, 2",
        ],
        // Bad input: exit 2.
        &["run", "tests/corpus/loops.pinv", "triangle", "three"],
        &[
            "invert",
            "tests/corpus/loops.pinv",
            "triangle",
            "--y",
            "1, 2",
        ],
        &["run", "tests/corpus/loops.pinv", "nowhere", "1"],
        // A check that fails: exit 1.
        &[
            "check",
            "tests/corpus/recursion.pinv",
            "power",
            "--cases",
            "50",
            "--search",
            "0",
            "--min-acceptance",
            "90",
        ],
    ];
    let mut report = String::new();
    for args in cases {
        let o = pinv(args);
        report.push_str(&format!(
            "$ pinv {}\nexit {}\n{}{}\n",
            args.join(" "),
            o.status
                .code()
                .map_or("signal".to_string(), |c| c.to_string()),
            stdout(&o),
            stderr(&o)
        ));
    }
    expect_test::expect_file!["snapshots/failure_modes.txt"].assert_eq(&report);
}
