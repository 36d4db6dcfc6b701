//! # A tutorial: pinv from Rust
//!
//! Pages to read in order. Every code block on them is a doctest, run by
//! `cargo test --doc -p pinv`, so what they show is what pinv does.
//!
//! 1. [`_01_first_inversion`]: load a program, invert a function, read θ, call the inverse, the
//!    PGF, and `check`.
//! 2. [`_02_branches_and_loops`]: θ chooses paths; loops' trip counts found by a scan, and a
//!    search for the discrete θ that work where none is.
//! 3. [`_03_overlays`]: a module's own `inverse`/`pgf`, and a user layer pushed from Rust that
//!    overrides a primitive's rule.
//! 4. [`_04_testing`]: property tests of your own inverses with proptest.
//!
//! The command-line tool does the same things: see the README's tutorial.

#[doc = include_str!("01_first_inversion.md")]
pub mod _01_first_inversion {}

#[doc = include_str!("02_branches_and_loops.md")]
pub mod _02_branches_and_loops {}

#[doc = include_str!("03_overlays.md")]
pub mod _03_overlays {}

#[doc = include_str!("04_testing.md")]
pub mod _04_testing {}
