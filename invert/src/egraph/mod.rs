//! E-graph isolation of reused unknowns, and simplification of generated code (egg 0.11).
//!
//! # Why
//!
//! The reorientation inverts a function by walking it backwards and solving each instruction's
//! unknown operands. A value used twice (`a + a`, `x·y + x`) is solved by one use; the other use
//! then only **checks** that the two agree, and for almost every θ they do not: sound, but the
//! inverse accepts almost nothing. Isolation rewrites the function so that every unknown is
//! solved once (`a + a = 2·a`, `x·y + x = x·(1 + y)`, `x² + 3x = (x + 1.5)² − 2.25`) and lets the
//! ordinary reorientation invert *that*.
//!
//! # The flow ([`hook`])
//!
//! ```text
//! reorient(f) ─hook::before─▶ for f and every fn it calls: isolate_function
//!                             (rewritten body + helper functions + their rules in the
//!                              "isolation" layer, pushed on the stack)
//!             ─the ordinary walk and rules, on the rewritten bodies─▶ f.inv, f.pgf
//!             ─hook::after──▶ original bodies back (same ids: the final check f(x) ≈ y runs the
//!                             user's f), simplification of generated code
//! ```
//!
//! The hook in `crate::reorient` is two calls, behind [`IsolationConfig::enabled`] (on by
//! default); [`isolate_function`] is usable on its own and returns the rewritten body and an
//! [`IsolationReport`] (what was done, why it stopped, iterations, nodes, time), which
//! `pinv show FILE FUNC --inverse` prints.
//!
//! # The e-graph ([`lang`], [`analysis`], [`rules`], [`cost`], [`convert`])
//!
//! - One e-node per pure IR instruction, named like the IR (`fadd`, `imul`, `band`, …), a
//!   `call` node, and `sq` (`x·x`, the one operation without an opcode).
//! - **Constants are f64** compared by bits (so `0.0 ≠ −0.0`). Folding uses the IR's own
//!   semantics, only to finite values, and a class with a constant keeps only its leaves
//!   (pruning); a merge of classes with different constants — the cascade the isolation notes
//!   measured, `4 = 4.000000000000001` and then `0 = 1` — stops the run and drops its result.
//!   Exact rationals would avoid that merge at 1.5–2× the cost; with pruning the notes saw none,
//!   and every result is checked anyway (below).
//! - Rule families ([`rules::Family`]): commutativity, one-way associativity, sub/neg/div
//!   canonical forms, distribution and factoring (`x + x = 2x`), squares (`x·x = sq x`),
//!   completing the square (coefficients free of unknowns, leading one known nonzero), powers
//!   with integer exponents, exp/log laws with positivity conditions, and the i64 ring. Left
//!   out: `x·0`, `x − x`, `x/x`, `(x/y)·y` (false for infinities, NaN or zero).
//! - Cost: (unknown occurrences **on the tree**, occurrences of values chosen as θ, size).
//!
//! # Isolated means "inverts without checks", not only "each unknown once" ([`plan`](crate::solve::plan))
//!
//! The reorientation works on the DAG: a shared subterm solved once is known to its other uses.
//! `y·(x+y) + (x+y)² + 2(x+y)` (the corpus's `reuse`) cannot be written with x and y once each,
//! but `(x+y)·((x+y) + (y+2))` inverts without a single check: θ splits the product, which gives
//! `x+y`, then `y`, then `x`. So the goal is judged by **simulating the reorientation** on the
//! extracted form ([`plan::simulate`](crate::solve::plan::simulate)): consistency checks, θ reads and — because acceptance is
//! what matters — steps that reject some θ (an interval analysis of what the inverse computes
//! against each operation's image). The run's hook extracts the best term before each iteration
//! and **stops early** as soon as the simulation finds nothing left to improve.
//!
//! # Choosing θ ([`isolate`])
//!
//! When the run without θ fails, values are made θ (treated as known leaves, "pivots") one at a
//! time: shared values first, then inputs. A pivot the reorientation solves by itself (the
//! product's θ above) costs nothing; otherwise it is read from θ **first**, through the helper
//! `given(out, p) = out`, whose rule reads `p` — the walk goes backwards from the outputs, so a
//! wrapped output is inverted first (`exp(x)·exp(y) + exp(x)`: θ for y, then
//! `exp(x) = z / (1 + exp y)`, which is always positive). Candidates are ranked by checks,
//! numeric roots, rejecting steps, θ read first, other θ, size.
//!
//! # Helpers ([`helpers`](crate::solve::helpers), [`numeric`](crate::solve::numeric))
//!
//! What the rewritten form needs and the IR lacks is a small helper function with its own rule
//! in the isolation layer: `iso.sq` (square root with a sign choice), `iso.mul` (a product of two
//! unknown factors split with θ scaled by √|y|, so that θ's usual magnitudes give moderate
//! factors; every other case is the stack's `fmul` rule), `iso.odds` (`a / (c − a)` with `a`
//! once, solved by `c·q/(1 + q)` or `c − c/(1 + q)`, whichever keeps the ratio's digits:
//! [`odds`](crate::solve::odds)), `iso.given.N`, and `iso.root.N` for the
//! **numeric fallback**: one unknown still occurring several times (`x⁵ + x`, `x·eˣ`) is solved
//! by generated IR loops (scan for sign changes, θ ∈ [0, 1] picks one of the roots found,
//! bisection; the PGF finds the bracket the input lies in), so the interpreter and any backend
//! run it unchanged.
//!
//! # Planar chains ([`polar`](crate::solve::polar))
//!
//! Two outputs that sum the same polar terms, `x = Σ rᵢ·cos φᵢ + cx` and `y = Σ rᵢ·sin φᵢ + cy`
//! (arms, pendulums), use every angle twice, and no algebraic rewrite fixes that. They are
//! recognised on the plan before any e-graph run and replaced by one two-result helper
//! `iso.polar.N` whose rule reads θ for all but two angles and solves the last two by the law of
//! cosines (an elbow choice, whole turns): `arm3` goes from 0% to about 73% of θ accepted.
//!
//! # Linear systems ([`linear`](crate::solve::linear))
//!
//! Outputs that are linear in shared unknowns (`(x + y, x − y)`, a rotation) become one helper
//! `iso.linear.N` whose rule eliminates on the constant matrix: θ for the unknowns beyond the
//! rank, the pivots from the outputs (0% → 100% of θ accepted on `(x + y, x − y)`).
//! A sum and a product of the same two unknowns (`(x + y, x·y)`) are the roots of a quadratic
//! ([`sum_product`](crate::solve::sum_product)): one choice says which root is which. And the angle-normalising idiom
//! `atan2(sin e, cos e)` is `e` up to whole turns ([`wrap`](crate::solve::wrap)).
//!
//! # Soundness
//!
//! Most rules are exact only up to rounding. Every extracted form is evaluated against the
//! original at random points (relative 1e-9, exact for integers) and rejected if they differ; the
//! chosen body once more against the original function. And the inverse's final check runs the
//! **original** function on its answer, so no rewrite can make an inverse return a wrong x.
//!
//! # Simplification ([`simplify`])
//!
//! Generated inverses and PGFs are simplified with exact rules only, bit for bit (constant
//! folding, `x·1`, checks of a value against itself, branches on constants, dead code); a dead θ
//! read is removed only together with the PGF's record of the same slot.
//!
//! # Limits
//!
//! Each run has node, iteration and time limits, and each function a time budget for all its
//! runs ([`IsolationConfig`]); hitting them falls back to the body as written and is reported.
//! A function with branches or loops that computes a bit map of its inputs (a CRC step in a
//! loop) is first evaluated symbolically as one ([`crate::solve::bits_flow`]); otherwise, the
//! blocks that end in `return` or `jump` are isolated
//! one by one in closed block form (a block is then a function of its parameters), and only
//! where they have consistency checks: blocks that branch are left alone, so the facts the
//! reorientation derives from conditions are untouched. Systems of equations (two outputs that
//! share unknowns) are solved only in the shapes of the solvers in [`crate::solve`]: planar
//! chains, linear systems, a sum and a product, bit maps, sums mod 2⁶⁴. Measured with
//! `cargo run --release -p pinv --example isolation_bench`.

pub mod analysis;
pub mod config;
pub mod convert;
pub mod cost;
pub mod hook;
pub mod isolate;
pub mod lang;
pub mod rules;
pub mod simplify;

pub use crate::solve::plan::Body;
pub use config::{IsolationConfig, IsolationReport, Outcome, RecursionAsLoop, RunReport, Stop};
pub use isolate::{isolate_function, Isolated};
pub use rules::Family;
