//! Solvers: the mathematics one primitive's rule cannot do on its own.
//!
//! The reorientation inverts a function one instruction at a time, with the overlay stack's
//! rules. Where that would solve an unknown twice (it is used several times: `x ^ (x >> 30)`,
//! `c·x − s·y` and `s·x + c·y`), the second use can only *check*, and almost every θ fails.
//! A **solver** takes the whole equation or system instead: it recognises a shape in a
//! straight-line [`plan::Plan`] of the function, replaces the values it solves by one call of
//! a generated **helper function**, and gives that helper an inverse rule (in the isolation
//! layer, on top of the stack while inverting) with its own θ reads and PGF. The reorientation
//! then inverts the helper's call like any other call. egg ([`crate::egraph`]) finds forms a
//! solver recognises; the solver does the mathematics.
//!
//! # The contract
//!
//! Each solver is one module with:
//!
//! - **recognise**: `find_…(plan) -> Option<Shape>`, a pure function of the plan;
//! - **candidate**: `candidate(plan, shape, names) -> (Plan, String)`, the plan with the shape
//!   replaced by a helper instruction (a [`plan::PKind`] variant), and a description for
//!   reports (`pinv show --inverse` prints it);
//! - **install**: adds the helper function (its forward body, bit for bit what the plan
//!   computes) to the module and its [`pinv_primitives::InverseRule`] to the isolation layer;
//! - **the rule**: θ reads with their domains, the inverse, and a PGF that records the θ giving
//!   the forward values back.
//!
//! Candidates from every solver are listed by [`joint_candidates`], the one registry; the
//! isolation driver simulates each ([`plan::simulate`]) and keeps the best. Soundness never
//! rests on a solver: the inverse ends with the original function's `f(x) = y` check.
//!
//! | module | shape | θ |
//! |---|---|---|
//! | [`linear`] | f64 outputs linear in shared unknowns, constant coefficients | the unknowns beyond the rank |
//! | [`linear_rt`] | f64 outputs linear in some inputs with coefficients from the others (a rotation by an input angle) | the inputs of the coefficients, read first |
//! | [`polar`] | planar chains `Σ rᵢ·cos φᵢ`, `Σ rᵢ·sin φᵢ` | all angles but two, an elbow, turns |
//! | [`sum_product`] | `(u + v, u·v)` | which root is which |
//! | [`divmod`] | `(a / b, a % b)` of one i64 dividend | none |
//! | [`newton`] | k ≤ 3 f64 outputs nonlinear in the same n ≥ k inputs (a mean and a variance) | the n − k free inputs, a start for the others |
//! | [`wrap`] | `atan2(sin e, cos e)` | whole turns |
//! | [`numeric`] | one unknown used several times (`x⁵ + x`) | a start point (the PGF records x) |
//! | [`bits`] | i64 values GF(2)-linear in unknown words (xor, shifts, masks, rotations) | the null space's bits only |
//! | [`modular`] | i64 sums `Σ aⱼ·uⱼ + b` mod 2⁶⁴ or mod 2^k (`(x + 7)·5 + (x << 3)`, `(h·C) & 0xffffffff`) | the other atoms, the bits a coefficient or the mask loses |
//!
//! [`gf2`] is the bit-matrix algebra behind [`bits`], independent of plans and IR;
//! [`bits_flow`] finds bit maps in functions with branches and loops (a CRC step in a loop).
//! [`helpers`] has the small helpers every solver shares (square, balanced product,
//! values read first from θ) and installs a plan's helpers; [`odds`] is the e-graph's helper
//! for a ratio of affine terms, `a / (c − a)`. [`arith`] is the arithmetic the
//! numeric kernels are written in once, for plain floats (`num_traits::Float`) and for IR.

pub mod arith;
pub mod bits;
pub mod bits_flow;
pub mod divmod;
pub mod gf2;
pub mod helpers;
pub mod linear;
pub mod linear_rt;
pub mod modular;
pub mod newton;
pub mod numeric;
pub mod odds;
pub mod plan;
pub mod polar;
pub mod sum_product;
pub mod wrap;

use plan::Plan;

/// Every solver's rewrite of `plan` that applies, with a description each: the one list of
/// solvers (see the module docs). `names` are the plan's parameters' names.
pub fn joint_candidates(plan: &Plan, names: &[String]) -> Vec<(Plan, String)> {
    let bit_maps = |p: &Plan| bits::find_maps(p).and_then(|maps| bits::candidate(p, &maps, names));
    let sums = modular::find_sums(plan).map(|sums| modular::candidate(plan, &sums, names));
    // Word code mixes both (a 32-bit hash: masked products between xorshifts): the sums
    // first, then the bit maps between them.
    let both = sums
        .as_ref()
        .and_then(|(p, s)| bit_maps(p).map(|(q, t)| (q, format!("{s}; {t}"))));
    [
        polar::find_chain(plan).map(|chain| polar::candidate(plan, &chain, names)),
        linear::find_system(plan).map(|system| linear::candidate(plan, &system, names)),
        linear_rt::find_system(plan).map(|system| linear_rt::candidate(plan, &system, names)),
        sum_product::find_pair(plan).map(|pair| sum_product::candidate(plan, &pair, names)),
        wrap::candidate(plan),
        divmod::candidate(plan, names),
        newton::find_system(plan).map(|system| newton::candidate(plan, &system, names)),
        bit_maps(plan),
        sums,
        both,
    ]
    .into_iter()
    .flatten()
    .collect()
}
