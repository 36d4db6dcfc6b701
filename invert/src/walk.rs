//! The inversion walk over a straight-line body, in one place: the reorientation
//! ([`crate::reorient`]) runs it to emit an inverse, and isolation runs it dry
//! ([`crate::solve::plan::simulate`]) to count what a candidate body would cost, so that a change
//! to the walk is made once and the count follows what the inverse does.
//!
//! The walk, given what is known (the outputs, and whatever the caller knew before):
//! 1. computes forward every instruction whose operands are all known;
//! 2. visits the body backwards, comparisons last (a comparison says little about its operands:
//!    its rule reads θ for them, so when another use determines them, solving that first leaves
//!    the comparison computed forward and checked, which every y in the image passes);
//! 3. at each instruction not computed yet: lets the steps choose discrete operands first
//!    ([`Steps::discrete_first`]), inverts it ([`Steps::invert`]), and computes forward what
//!    the newly known values make computable, following only their users (a rescan of the whole
//!    body after every step was quadratic in its length), or everything again when the step made
//!    more known than its operands;
//! 4. an instruction none of whose results is known when it is met waits, and is visited if a
//!    comparison that reopens it ([`Steps::reopens`]), visited last, solves one, and so on down
//!    the chain of what that visit solves.
//!
//! A [`Steps`] implementation owns the state (what is known, what it emits or counts); the
//! walk owns only the order.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::hash::Hash;

/// What the walk asks of the code it walks over. See the module docs.
pub trait Steps {
    /// An instruction of the body.
    type Inst: Copy;
    /// A value: an instruction's result or operand.
    type Value: Copy + Eq + Hash;
    type Error;

    /// The operands of `inst`, in order.
    fn args(&self, inst: Self::Inst) -> Vec<Self::Value>;
    /// The results of `inst`.
    fn results(&self, inst: Self::Inst) -> Vec<Self::Value>;
    /// Whether `v` is known (solved, or a constant).
    fn is_known(&self, v: Self::Value) -> bool;
    /// Whether `inst` was computed forward already.
    fn is_computed(&self, inst: Self::Inst) -> bool;
    /// Whether `inst` is a comparison (visited last).
    fn is_comparison(&self, inst: Self::Inst) -> bool;
    /// How many values are known: the walk compares it before and after a step.
    fn known_count(&self) -> usize;
    /// Computes `inst` forward if its operands are all known and a result is not; returns
    /// whether it did.
    fn propagate(&mut self, inst: Self::Inst) -> Result<bool, Self::Error>;
    /// Before `inst` is inverted with the operands `unknown` not known yet: makes some of them
    /// known first if that is better; returns whether it did.
    fn discrete_first(
        &mut self,
        inst: Self::Inst,
        unknown: &[Self::Value],
    ) -> Result<bool, Self::Error>;
    /// Inverts `inst`: solves its unknown operands from its known results.
    fn invert(&mut self, inst: Self::Inst) -> Result<(), Self::Error>;
    /// Whether the operands comparison `inst` solves must be solved further back: the
    /// instructions defining them, met before anything had solved them, are then visited.
    /// Not in general: a comparison reads its operands from θ, only a side of its other
    /// operand, where the operand's own inputs from θ are in its image by construction
    /// (`abs(p · p) > −3` reads θ in [0, ∞] for `abs(p · p)`, and half of its signs then give
    /// a negative square). So by default the inputs are read from θ and the comparison is
    /// computed forward and checked.
    fn reopens(&self, _inst: Self::Inst) -> bool {
        false
    }
}

/// Computes forward every instruction of `body` that can be.
fn propagate_all<S: Steps>(s: &mut S, body: &[S::Inst]) -> Result<(), S::Error> {
    for &inst in body {
        s.propagate(inst)?;
    }
    Ok(())
}

/// Walks `body` (in program order) backwards. See the module docs.
pub fn walk<S: Steps>(s: &mut S, body: &[S::Inst]) -> Result<(), S::Error> {
    propagate_all(s, body)?;
    let (deferred, first): (Vec<S::Inst>, Vec<S::Inst>) = body
        .iter()
        .rev()
        .copied()
        .partition(|&i| s.is_comparison(i));
    // Which instructions of the body use each value, by position.
    let mut users: HashMap<S::Value, Vec<usize>> = HashMap::new();
    for (k, &inst) in body.iter().enumerate() {
        for a in s.args(inst) {
            users.entry(a).or_default().push(k);
        }
    }
    // An instruction met before any of its results is known waits, and is visited if a
    // comparison that [`Steps::reopens`] (visited last) solves one, and so on down the chain
    // of what such visits solve. What a visit solves is defined earlier, which comes later in
    // this order, so one sweep through what waits visits a whole chain.
    let order: Vec<S::Inst> = first.into_iter().chain(deferred).collect();
    let mut waiting: Vec<S::Inst> = Vec::new();
    // The values such comparisons, and the instructions visited after waiting, solved: a
    // waiting instruction that defines one is visited.
    let mut reopened: HashSet<S::Value> = HashSet::new();
    for inst in order {
        if s.is_computed(inst) {
            continue;
        }
        if s.results(inst).iter().all(|&r| !s.is_known(r)) {
            waiting.push(inst);
            continue;
        }
        let reopens = s.reopens(inst);
        let unknown = visit(s, body, &users, inst)?;
        if reopens {
            reopened.extend(unknown);
        }
    }
    for inst in waiting {
        let results = s.results(inst);
        if s.is_computed(inst)
            || !results
                .iter()
                .any(|r| reopened.contains(r) && s.is_known(*r))
        {
            continue;
        }
        reopened.extend(visit(s, body, &users, inst)?);
    }
    Ok(())
}

/// One step of [`walk`]: inverts `inst` (discrete operands first where that is better) and
/// computes forward what that makes computable. Returns the operands it found unknown.
fn visit<S: Steps>(
    s: &mut S,
    body: &[S::Inst],
    users: &HashMap<S::Value, Vec<usize>>,
    inst: S::Inst,
) -> Result<Vec<S::Value>, S::Error> {
    // The operands not known yet (a constant is known all along).
    let mut args = s.args(inst);
    args.retain(|&a| !s.is_known(a));
    args.dedup();
    if s.discrete_first(inst, &args)? {
        propagate_all(s, body)?;
        args.retain(|&a| !s.is_known(a));
    }
    let before = s.known_count();
    s.invert(inst)?;
    if s.known_count() > before + args.len() {
        // The step made more known than its operands: look at everything again.
        propagate_all(s, body)?;
        return Ok(args);
    }
    let mut todo: BTreeSet<usize> = BTreeSet::new();
    for a in &args {
        todo.extend(users.get(a).into_iter().flatten().copied());
    }
    while let Some(k) = todo.pop_first() {
        let next = body[k];
        if s.propagate(next)? {
            for r in s.results(next) {
                todo.extend(users.get(&r).into_iter().flatten().copied());
            }
        }
    }
    Ok(args)
}

/// The discrete values to read from θ first ([`Steps::discrete_first`]), given for each unknown
/// operand the integers and bools it is computed from alone (`None`: it is not): all of them,
/// except the last such operand's when every operand is one (its integers are then solved from
/// the others') and the result still depends on them. `free`: the unknown operands are free
/// (the one factor of a product whose other factor is a known zero), so all their integers are
/// drawn. Sorted, without repeats.
pub fn discrete_choice<V: Ord>(slices: Vec<Option<Vec<V>>>, free: bool) -> Vec<V> {
    if free {
        let mut leaves: Vec<V> = slices.into_iter().flatten().flatten().collect();
        leaves.sort();
        leaves.dedup();
        return leaves;
    }
    let operands = slices.len();
    let discrete = slices.iter().filter(|s| s.is_some()).count();
    let mut leaves = Vec::new();
    let mut left = discrete;
    for slice in slices.into_iter().flatten() {
        if discrete == operands && left == 1 {
            break;
        }
        left -= 1;
        leaves.extend(slice);
    }
    leaves.sort();
    leaves.dedup();
    leaves
}
