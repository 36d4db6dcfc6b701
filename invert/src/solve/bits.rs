//! Bit maps: i64 values that are GF(2)-linear in unknown words, solved as one system.
//!
//! `z ^ ((z >> 30) & 0x3ffffffff)` (a xorshift), `(x << 13) | ((x >> 51) & 0x1fff)` (a
//! rotation), `(x & 0xffffffff, (x >> 32) & 0xffffffff)` (two halves of one word) use their
//! unknown several times. Inverted one operation at a time, the first use guesses the bits the
//! operation loses and every later use can only check: almost no θ passes. Over GF(2) each is
//! `M·x ⊕ c` for a bit matrix `M` ([`super::gf2`]), which is solved exactly.
//!
//! - **Recognition** ([`find_maps`]): every i64 value is taken apart into an affine form
//!   `⊕ⱼ Mⱼ·uⱼ ⊕ c` through `^`, `!`, shifts by constants (`<<`, arithmetic `>>`),
//!   multiplication by a power of two, and `&`, `|` and `+` wherever, bit by bit, one operand is
//!   a known constant bit (`x & mask`, `(x << 13) | (x >> 51 & 0x1fff)`, a `+` without carries).
//!   An **atom** `uⱼ` is a parameter, or any other value (a product by an odd constant, a call),
//!   inverted afterwards by its own rule. The **roots** are the linear values used by
//!   something that is not linear, or returned; roots that share atoms form a group, and a
//!   group is rewritten when it uses some value twice (the fan-out the reorientation would
//!   check), has several roots, or combines several atoms (`(r & 0xff) << 16 | (g & 0xff)`,
//!   which the walk would split with θ that the shifts then reject).
//! - **The rewritten plan** ([`candidate`]): per group, one helper `iso.bits.N(u…)` returning
//!   the roots ([`PKind::Bits`]), computed as shifts and masks (the diagonals of `M`).
//! - **The rule** ([`BitsRule`]): known atoms move to the right-hand side,
//!   `v = y ⊕ c ⊕ M_known·known`; the unknown columns are reduced once, when the inverse is
//!   emitted; `v` must pass the image test (else y has no preimage: a domain error, whatever
//!   θ); then `x = P·v ⊕ N·θ`, with one θ read per unknown word that has free bits, of domain
//!   [`Domain::Bits`] (only those bits may be set). A bijection reads no θ, and every θ of the
//!   domain gives a preimage. Bits an atom always has zero in the forward program (the output
//!   of a 32-bit sum) take no part: no pivot, no θ. Everything is exact: no step check.
//! - **The PGF** records each unknown word's free bits, `x & F`.
//!
//! The products are emitted as a few shifts, masks and xors each ([`BitMatrix::diagonals`]):
//! the inverse of `x ^ (x >> 30)` is `v ^ (v >> 30) ^ (v >> 60)`, of a rotation the opposite
//! rotation.

use super::gf2::{BitMatrix, Reduced};
use super::plan::{PInst, PKind, PVal, Plan, PlanBuilder};
use pinv_core::ir::{Const, Domain, FuncId, Module, Opcode, Type, Value};
use pinv_primitives::rules::ops::Ops;
use pinv_primitives::{Arg, Emitter, InverseRule, Layer, Pattern, RuleDoc, RuleError, ThetaDoc};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// The most atoms or roots one helper takes: beyond, the system is left to the walk.
const MAX_WORDS: usize = 8;

/// What a [`PKind::Bits`] helper computes: `roots = M·atoms ⊕ consts`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct BitsSpec {
    /// Atoms (columns, in words) to roots (rows).
    pub matrix: BitMatrix<u64>,
    /// Per root, the constant part.
    pub consts: Vec<u64>,
    /// Per atom, the bits known to be zero in the forward program (a mask, a 32-bit
    /// product): a solution never sets them, and θ never draws them.
    pub zeros: Vec<u64>,
    /// The atoms' expressions, for θ roles.
    pub atoms: Vec<String>,
}

impl BitsSpec {
    /// The helper's forward semantics on constants.
    pub fn eval(&self, args: &[Const]) -> Option<Vec<Const>> {
        let x: Vec<u64> = args
            .iter()
            .map(|a| match a {
                Const::I64(v) => Some(*v as u64),
                _ => None,
            })
            .collect::<Option<_>>()?;
        let y = self.matrix.apply(&x);
        Some(
            y.iter()
                .zip(&self.consts)
                .map(|(&v, &c)| Const::I64((v ^ c) as i64))
                .collect(),
        )
    }

    /// The bits of result `i` that are zero whatever the operands (a mask's zeros).
    pub fn known_zeros(&self, i: usize) -> u64 {
        let mut varying = 0u64;
        for c in 0..self.matrix.cols() * 64 {
            varying |= self.matrix.column(c)[i];
        }
        !varying & !self.consts[i]
    }

    /// The reduction of the unknown columns under `pattern`, with their indices.
    fn reduce(&self, pattern: &Pattern) -> (Vec<usize>, Reduced<u64>) {
        let unknown: Vec<usize> = (0..self.atoms.len())
            .filter(|&c| !pattern.is_known(c))
            .collect();
        let mut m = self.matrix.select_cols(&unknown);
        let zeros: Vec<u64> = unknown
            .iter()
            .map(|&c| self.zeros.get(c).copied().unwrap_or(0))
            .collect();
        // Bits known to be zero take no part: no pivot, and no θ.
        for (k, &z) in zeros.iter().enumerate() {
            for bit in (0..64).filter(|b| z >> b & 1 == 1) {
                m.clear_column(k * 64 + bit);
            }
        }
        let mut r = m.reduce();
        for (f, &z) in r.free.iter_mut().zip(&zeros) {
            *f &= !z;
        }
        (unknown, r)
    }

    /// θ reads under `pattern`: the unknown atoms with free bits, with their masks.
    pub fn thetas(&self, pattern: &Pattern) -> Vec<(usize, u64)> {
        let (unknown, r) = self.reduce(pattern);
        unknown
            .iter()
            .zip(&r.free)
            .filter(|(_, &f)| f != 0)
            .map(|(&c, &f)| (c, f))
            .collect()
    }
}

/// A GF(2)-affine form: per atom (a plan value), the block of its columns (64 words, the image
/// of each bit), a constant, and the **poisoned** bits, which are not linear (`x | (x << 8)` where
/// both operands vary). Poisoned bits carry no columns and no constant; a mask can clear them
/// (`(x | (x << 8)) & 0x00ff00ff` is linear again), and only values without poison are solved.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Form {
    pub(super) terms: BTreeMap<PVal, [u64; 64]>,
    pub(super) c: u64,
    poison: u64,
}

impl Form {
    pub(super) fn atom(v: PVal) -> Form {
        let mut cols = [0u64; 64];
        for (i, c) in cols.iter_mut().enumerate() {
            *c = 1 << i;
        }
        Form {
            terms: BTreeMap::from([(v, cols)]),
            c: 0,
            poison: 0,
        }
    }

    pub(super) fn konst(c: u64) -> Form {
        Form {
            terms: BTreeMap::new(),
            c,
            poison: 0,
        }
    }

    /// The bits that depend on some atom.
    fn varying(&self) -> u64 {
        self.terms
            .values()
            .flat_map(|cols| cols.iter())
            .fold(0, |a, &c| a | c)
    }

    /// Applies `f`, a map of the output word in which each bit comes from at most one bit
    /// (a shift or a mask), to every column, the constant and the poison.
    pub(super) fn map(&self, f: impl Fn(u64) -> u64) -> Form {
        let mut terms = BTreeMap::new();
        for (&v, cols) in &self.terms {
            let mapped = cols.map(&f);
            if mapped.iter().any(|&c| c != 0) {
                terms.insert(v, mapped);
            }
        }
        Form {
            terms,
            c: f(self.c),
            poison: f(self.poison),
        }
    }

    /// Clears the rows of `bits` and marks them poisoned.
    fn poisoned(self, bits: u64) -> Form {
        let mut f = self.map(|c| c & !bits);
        f.poison |= bits;
        f
    }

    pub(super) fn xor(&self, o: &Form) -> Form {
        let mut terms = self.terms.clone();
        for (&v, cols) in &o.terms {
            let e = terms.entry(v).or_insert([0; 64]);
            for (a, &b) in e.iter_mut().zip(cols) {
                *a ^= b;
            }
            if e.iter().all(|&c| c == 0) {
                terms.remove(&v);
            }
        }
        Form {
            terms,
            c: self.c ^ o.c,
            poison: 0,
        }
        .poisoned(self.poison | o.poison)
    }

    /// Bits known to be 0, and bits known to be 1.
    fn known_zero_one(&self) -> (u64, u64) {
        let known = !self.varying() & !self.poison;
        (known & !self.c, known & self.c)
    }

    /// `a & b`: where one operand is a known bit the result is 0 or the other's bit; where
    /// neither is, poisoned.
    pub(super) fn and(&self, o: &Form) -> Form {
        let (z1, o1) = self.known_zero_one();
        let (z2, o2) = o.known_zero_one();
        let zero = z1 | z2;
        let from_o = o1 & !zero;
        let from_self = o2 & !zero & !from_o;
        let rest = !(zero | from_o | from_self);
        self.map(|c| c & from_self)
            .xor(&o.map(|c| c & from_o))
            .poisoned(rest)
    }

    /// `a | b`: where one operand is a known bit the result is 1 or the other's bit; where
    /// neither is, poisoned.
    pub(super) fn or(&self, o: &Form) -> Form {
        let (z1, o1) = self.known_zero_one();
        let (z2, o2) = o.known_zero_one();
        let one = o1 | o2;
        let from_self = z2 & !one;
        let from_o = z1 & !one & !from_self;
        let rest = !(one | from_self | from_o);
        self.map(|c| c & from_self)
            .xor(&o.map(|c| c & from_o))
            .xor(&Form::konst(one))
            .poisoned(rest)
    }

    /// `a + b` without carries: at every bit one of them is a known 0.
    pub(super) fn add(&self, o: &Form) -> Option<Form> {
        let (z1, _) = self.known_zero_one();
        let (z2, _) = o.known_zero_one();
        ((z1 | z2) == !0).then(|| self.xor(o))
    }

    /// A value that is 0 or 1 (bits 1..63 known zero, bit 0 not poisoned), times `k`: `k` or 0,
    /// linear in bit 0 (`-(x & 1)` is all ones or zero, `(x & 1) · poly`).
    pub(super) fn times_bit(&self, k: u64) -> Option<Form> {
        self.is_bit().then(|| {
            let mut f = self.map(|c| if c & 1 == 1 { k } else { 0 });
            f.poison = 0;
            f
        })
    }

    pub(super) fn clean(&self) -> bool {
        self.poison == 0
    }

    /// The constant this form is, if it has no atom and no poison.
    pub(super) fn constant(&self) -> Option<u64> {
        (self.terms.is_empty() && self.clean()).then_some(self.c)
    }

    /// The one bit that is not known, if every other bit is and none is poisoned.
    pub(super) fn single_bit(&self) -> Option<u32> {
        let varying = self.varying();
        (self.poison == 0 && varying.count_ones() == 1).then(|| varying.trailing_zeros())
    }

    /// Whether the value is 0 or 1: bits 1..63 known zero, bit 0 not poisoned.
    pub(super) fn is_bit(&self) -> bool {
        let (zero, _) = self.known_zero_one();
        zero | 1 == !0 && self.poison == 0
    }
}

/// A group of roots solved by one helper.
#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    roots: Vec<PVal>,
    atoms: Vec<PVal>,
    spec: BitsSpec,
}

/// The bit-map groups found in a plan (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct Maps {
    groups: Vec<Group>,
}

fn i64_constant(plan: &Plan, v: PVal) -> Option<u64> {
    match plan.constant(v) {
        Some(Const::I64(c)) => Some(c as u64),
        _ => None,
    }
}

/// The forms of `plan`'s i64 values that are linear combinations (not atoms), by instruction.
/// Values in `atoms` are atoms whatever they compute.
fn forms_with(plan: &Plan, dep: &[bool], atoms: &BTreeSet<usize>) -> Vec<Option<Form>> {
    let mut forms: Vec<Option<Form>> = vec![None; plan.insts.len()];
    for (i, inst) in plan.insts.iter().enumerate() {
        if !dep[i] || inst.tys.len() != 1 || inst.tys[0] != Type::I64 || atoms.contains(&i) {
            continue;
        }
        let PKind::Prim(op) = inst.kind else { continue };
        let form = |v: PVal| -> Form {
            match (&forms[v.inst as usize], i64_constant(plan, v)) {
                (Some(f), _) => f.clone(),
                (None, Some(c)) => Form::konst(c),
                (None, None) => Form::atom(v),
            }
        };
        let a: Vec<Form> = inst.args.iter().map(|&v| form(v)).collect();
        let f = prim_form(op, &a);
        // A form with only poison is nothing linear, and one with more atoms than a helper takes
        // is an atom itself (this also bounds the forms' size). A form without atoms or poison
        // is a constant that only the known bits show (`(x & 0xff) >> 8`): kept, so that its
        // users see a constant.
        forms[i] = f.filter(|f| {
            (f.constant().is_some() || !f.terms.is_empty()) && f.terms.len() <= MAX_WORDS
        });
    }
    forms
}

/// The form of an i64 primitive on operands of forms `a` (constants are forms without atoms),
/// if it is GF(2)-affine in them (see the module docs).
pub(super) fn prim_form(op: Opcode, a: &[Form]) -> Option<Form> {
    let konst = |i: usize| a.get(i).and_then(Form::constant);
    let count = |i: usize| konst(i).map(|k| (k % 64) as u32);
    match (op, a) {
        (Opcode::Ixor, [x, y]) => Some(x.xor(y)),
        (Opcode::Inot, [x]) => Some(x.xor(&Form::konst(!0))),
        (Opcode::Ishl, [x, _]) => count(1).map(|k| x.map(|c| c << k)),
        (Opcode::Ishr, [x, _]) => count(1).map(|k| x.map(|c| ((c as i64) >> k) as u64)),
        (Opcode::Ineg, [x]) => x.times_bit(!0),
        (Opcode::Imul, [x, y]) => match (konst(0), konst(1)) {
            (_, Some(k)) if k.is_power_of_two() => Some(x.map(|c| c << k.trailing_zeros())),
            (Some(k), _) if k.is_power_of_two() => Some(y.map(|c| c << k.trailing_zeros())),
            (_, Some(k)) => x.times_bit(k),
            (Some(k), _) => y.times_bit(k),
            _ => None,
        },
        (Opcode::Iand, [x, y]) => Some(x.and(y)),
        (Opcode::Ior, [x, y]) => Some(x.or(y)),
        (Opcode::Iadd, [x, y]) => x.add(y),
        _ => None,
    }
}

/// [`forms_with`], with every value that is not linear (poisoned) and used by something other
/// than a form made an atom, until none is left; `None` if that takes more than a few rounds
/// (each round is a pass over the plan).
fn forms(plan: &Plan, dep: &[bool]) -> Option<Vec<Option<Form>>> {
    const ROUNDS: usize = 8;
    let mut atoms = BTreeSet::new();
    for _ in 0..ROUNDS {
        let forms = forms_with(plan, dep, &atoms);
        let poisoned = |v: &PVal| forms[v.inst as usize].as_ref().is_some_and(|f| !f.clean());
        let mut escaping: BTreeSet<usize> = plan
            .outputs
            .iter()
            .filter(|v| poisoned(v))
            .map(|v| v.inst as usize)
            .collect();
        for (i, inst) in plan.insts.iter().enumerate() {
            if forms[i].is_none() {
                escaping.extend(
                    inst.args
                        .iter()
                        .filter(|v| poisoned(v))
                        .map(|v| v.inst as usize),
                );
            }
        }
        if escaping.is_empty() {
            return Some(forms);
        }
        atoms.extend(escaping);
    }
    None
}

/// The bit-map groups of `plan` worth solving as systems, if any (see the module docs).
pub fn find_maps(plan: &Plan) -> Option<Maps> {
    if !plan.insts.iter().any(|i| {
        matches!(
            i.kind,
            PKind::Prim(Opcode::Ixor | Opcode::Ior | Opcode::Iand | Opcode::Ishl | Opcode::Ishr)
        )
    }) {
        return None;
    }
    let dep = plan.depends_on_params();
    let forms = forms(plan, &dep)?;
    let known = super::plan::known_zeros(plan);
    let linear = |v: PVal| {
        forms[v.inst as usize]
            .as_ref()
            .is_some_and(|f| f.clean() && !f.terms.is_empty())
    };
    // Roots: linear values used by something that is not linear, or returned.
    let mut roots: BTreeSet<PVal> = plan
        .outputs
        .iter()
        .copied()
        .filter(|&o| linear(o))
        .collect();
    for (i, inst) in plan.insts.iter().enumerate() {
        if forms[i].is_none() {
            roots.extend(inst.args.iter().copied().filter(|&a| linear(a)));
        }
    }
    // Uses of each value inside the linear region, counted from the roots down (a value
    // reached twice is the fan-out the walk would check).
    let live = plan.live();
    let mut uses = vec![0usize; plan.insts.len()];
    for (i, inst) in plan.insts.iter().enumerate() {
        if live[i] && forms[i].is_some() {
            for a in &inst.args {
                if dep[a.inst as usize] {
                    uses[a.inst as usize] += 1;
                }
            }
        }
    }
    let fanned = |r: PVal| -> bool {
        // Does the linear tree under r reach some value twice?
        let mut stack = vec![r.inst as usize];
        let mut seen = BTreeSet::new();
        while let Some(i) = stack.pop() {
            if !seen.insert(i) {
                continue;
            }
            for a in &plan.insts[i].args {
                let k = a.inst as usize;
                if !dep[k] {
                    continue;
                }
                if uses[k] > 1 {
                    return true;
                }
                if forms[k].is_some() && !roots.contains(a) {
                    stack.push(k);
                }
            }
        }
        false
    };
    // Group roots that share atoms (union by atom).
    let roots: Vec<PVal> = roots.iter().copied().collect();
    let atoms_of = |r: PVal| -> Vec<PVal> {
        forms[r.inst as usize]
            .as_ref()
            .map(|f| f.terms.keys().copied().collect())
            .unwrap_or_default()
    };
    let mut group_of: Vec<usize> = (0..roots.len()).collect();
    fn find(g: &mut [usize], i: usize) -> usize {
        let mut r = i;
        while g[r] != r {
            r = g[r];
        }
        g[i] = r;
        r
    }
    let mut by_atom: HashMap<PVal, usize> = HashMap::new();
    for (k, &r) in roots.iter().enumerate() {
        for a in atoms_of(r) {
            if let Some(&other) = by_atom.get(&a) {
                let (x, y) = (find(&mut group_of, k), find(&mut group_of, other));
                group_of[x] = y;
            } else {
                by_atom.insert(a, k);
            }
        }
    }
    let mut members: BTreeMap<usize, Vec<PVal>> = BTreeMap::new();
    for (k, &r) in roots.iter().enumerate() {
        let g = find(&mut group_of, k);
        members.entry(g).or_default().push(r);
    }
    let mut groups = Vec::new();
    for (_, rs) in members {
        let mut atoms: Vec<PVal> = Vec::new();
        for &r in &rs {
            for a in atoms_of(r) {
                if !atoms.contains(&a) {
                    atoms.push(a);
                }
            }
        }
        if rs.len() > MAX_WORDS || atoms.len() > MAX_WORDS {
            continue;
        }
        // One root of one atom without fan-out is a chain the walk inverts step by step, and
        // exactly where the chain is a bijection. A lossy chain (two masks around a `!`) may
        // make the walk draw θ that a later mask rejects: a candidate, which the isolation
        // driver takes only where its simulation sees that.
        let row_forms: Vec<&Form> = rs
            .iter()
            .filter_map(|r| forms[r.inst as usize].as_ref())
            .collect();
        let matrix = matrix_of(&row_forms, &atoms);
        if rs.len() == 1 && atoms.len() == 1 && !fanned(rs[0]) && matrix.reduce().rank == 64 {
            continue;
        }
        let consts = row_forms.iter().map(|f| f.c).collect();
        let zeros = atoms
            .iter()
            .map(|a| known[a.inst as usize][a.idx as usize])
            .collect();
        groups.push(Group {
            roots: rs,
            atoms,
            spec: BitsSpec {
                matrix,
                consts,
                zeros,
                atoms: Vec::new(),
            },
        });
    }
    (!groups.is_empty()).then_some(Maps { groups })
}

/// The matrix of `rows` (one form per output word) over `atoms` (one input word each).
pub(super) fn matrix_of(rows: &[&Form], atoms: &[PVal]) -> BitMatrix<u64> {
    let mut matrix = BitMatrix::zero(rows.len(), atoms.len());
    for (i, f) in rows.iter().enumerate() {
        for (j, a) in atoms.iter().enumerate() {
            if let Some(cols) = f.terms.get(a) {
                matrix.set_block(i, j, cols);
            }
        }
    }
    matrix
}

/// The plan with each group's roots computed by a bit-map helper, and a description; `None`
/// when the groups depend on each other in a circle.
pub fn candidate(plan: &Plan, maps: &Maps, names: &[String]) -> Option<(Plan, String)> {
    let mut b = PlanBuilder::new(plan.params.clone());
    // Plan value → new value, for values copied or replaced.
    let mut done: HashMap<PVal, PVal> = HashMap::new();
    for (i, _) in plan.params.iter().enumerate() {
        let p = b.param(i);
        done.insert(p, p);
    }
    let root_group: HashMap<PVal, usize> = maps
        .groups
        .iter()
        .enumerate()
        .flat_map(|(g, group)| group.roots.iter().map(move |&r| (r, g)))
        .collect();
    let mut descriptions = Vec::new();
    let mut copier = Copier {
        plan,
        maps,
        names,
        root_group: &root_group,
        done,
        busy: BTreeSet::new(),
        descriptions: &mut descriptions,
    };
    let outputs: Vec<PVal> = plan
        .outputs
        .iter()
        .map(|&o| copier.value(&mut b, o))
        .collect::<Option<_>>()?;
    let mut out = b.finish();
    // Copied instructions keep their numeric helpers' indices (no helper is added here).
    out.roots = plan.roots.clone();
    out.outputs = outputs;
    Some((out.pruned(), descriptions.join("; ")))
}

/// Copies plan values into a builder on demand, replacing roots by helper results.
struct Copier<'a> {
    plan: &'a Plan,
    maps: &'a Maps,
    names: &'a [String],
    root_group: &'a HashMap<PVal, usize>,
    done: HashMap<PVal, PVal>,
    /// Groups and instructions being copied (a circle among them is no candidate).
    busy: BTreeSet<(bool, usize)>,
    descriptions: &'a mut Vec<String>,
}

impl Copier<'_> {
    fn value(&mut self, b: &mut PlanBuilder, v: PVal) -> Option<PVal> {
        if let Some(&n) = self.done.get(&v) {
            return Some(n);
        }
        pinv_core::stack::ensure_sufficient_stack(|| {
            if let Some(&g) = self.root_group.get(&v) {
                self.group(b, g)?;
                return self.done.get(&v).copied();
            }
            let i = v.inst as usize;
            if !self.busy.insert((false, i)) {
                return None;
            }
            let inst = &self.plan.insts[i];
            let args: Vec<PVal> = inst
                .args
                .iter()
                .map(|&a| self.value(b, a))
                .collect::<Option<_>>()?;
            let n = b.push(inst.kind.clone(), args, inst.tys.clone(), inst.span);
            for k in 0..inst.tys.len() as u32 {
                self.done.insert(
                    PVal {
                        inst: v.inst,
                        idx: k,
                    },
                    PVal { inst: n, idx: k },
                );
            }
            Some(PVal {
                inst: n,
                idx: v.idx,
            })
        })
    }

    fn group(&mut self, b: &mut PlanBuilder, g: usize) -> Option<()> {
        if !self.busy.insert((true, g)) {
            return None;
        }
        let group = &self.maps.groups[g];
        let args: Vec<PVal> = group
            .atoms
            .iter()
            .map(|&a| self.value(b, a))
            .collect::<Option<_>>()?;
        let atoms: Vec<String> = group
            .atoms
            .iter()
            .map(|&a| super::plan::plan_text(self.plan, self.names, a, 60))
            .collect();
        let span = group
            .roots
            .iter()
            .map(|r| self.plan.insts[r.inst as usize].span)
            .next()
            .unwrap_or_default();
        let spec = BitsSpec {
            atoms: atoms.clone(),
            ..group.spec.clone()
        };
        let rank = spec.matrix.reduce().rank;
        let h = b.push(
            PKind::Bits(spec),
            args,
            vec![Type::I64; group.roots.len()],
            span,
        );
        for (k, &r) in group.roots.iter().enumerate() {
            self.done.insert(
                r,
                PVal {
                    inst: h,
                    idx: k as u32,
                },
            );
        }
        self.descriptions.push(format!(
            "{} as a GF(2)-linear map of {} (rank {rank} of {})",
            if group.roots.len() == 1 {
                "a bit mix".to_string()
            } else {
                format!("{} words", group.roots.len())
            },
            atoms.join(", "),
            64 * group.atoms.len(),
        ));
        Some(())
    }
}

/// Emits `⊕ⱼ M_ij · x_j` for output word `i` of `m` over the inputs `xs` (`None` input words are
/// zero), as shifts and masks.
fn product<O: Ops + ?Sized>(
    o: &mut O,
    m: &BitMatrix<u64>,
    i: usize,
    xs: &[Option<Value>],
) -> Option<Value> {
    let mut acc: Option<Value> = None;
    for (j, x) in xs.iter().enumerate() {
        let Some(x) = *x else { continue };
        for (d, mask) in m.diagonals(i, j) {
            let shifted = match d {
                0 => x,
                d if d > 0 => {
                    let k = o.ic(d as i64);
                    o.ishr(x, k)
                }
                d => {
                    let k = o.ic(-d as i64);
                    o.ishl(x, k)
                }
            };
            // Bits a shift brings in are zeros (left) or copies of the sign (right, masked).
            let needless = match d {
                0 => mask == !0,
                d if d < 0 => mask == !0u64 << -d,
                _ => false,
            };
            let term = if needless {
                shifted
            } else {
                let k = o.ic(mask as i64);
                o.iand(shifted, k)
            };
            acc = Some(match acc {
                None => term,
                Some(a) => o.ixor(a, term),
            });
        }
    }
    acc
}

/// Adds the helper for a [`PKind::Bits`] instruction to `module`, and its rule to `layer`.
pub fn install(module: &mut Module, layer: &mut Layer, inst: &PInst, spec: &BitsSpec) -> FuncId {
    let rows = spec.consts.len();
    let body = |e: &mut Emitter<'_>, ps: &[Option<Value>]| -> Vec<Value> {
        (0..rows)
            .map(|i| {
                let m = product(e, &spec.matrix, i, ps);
                match (m, spec.consts[i]) {
                    (Some(v), 0) => v,
                    (Some(v), c) => {
                        let k = e.ic(c as i64);
                        e.ixor(v, k)
                    }
                    (None, c) => e.ic(c as i64),
                }
            })
            .collect()
    };
    let rule = BitsRule { spec: spec.clone() };
    let shape = (spec.atoms.len(), rows);
    let sig = super::helpers::words(shape.0, shape.1);
    super::helpers::emitted_helper(module, layer, "iso.bits", sig, inst.span, body, rule)
}

/// The rule of an `iso.bits.N` helper: see the module docs.
#[derive(Debug)]
pub struct BitsRule {
    pub spec: BitsSpec,
}

impl BitsRule {
    fn free_role(&self, c: usize) -> String {
        format!("{}: bits the map does not determine", self.spec.atoms[c])
    }
}

/// The reason of the image test.
const NO_PREIMAGE: &str = "y has no preimage: the map cannot produce these bits";

impl InverseRule for BitsRule {
    fn name(&self) -> &str {
        "bit-map"
    }

    fn covers(&self, pattern: &Pattern) -> bool {
        pattern.arity() == self.spec.atoms.len()
    }

    fn doc(&self, pattern: &Pattern) -> RuleDoc {
        RuleDoc {
            thetas: self
                .spec
                .thetas(pattern)
                .into_iter()
                .map(|(c, mask)| ThetaDoc::value(Domain::Bits { mask }, &self.free_role(c)))
                .collect(),
            checks: vec![NO_PREIMAGE.to_string()],
            exact: true,
            summary: "GF(2) elimination: x = P·v ⊕ N·θ, θ only for the bits the map loses"
                .to_string(),
        }
    }

    fn emit_inverse(
        &self,
        e: &mut Emitter<'_>,
        outputs: &[Value],
        args: &[Arg],
    ) -> Result<Vec<Value>, RuleError> {
        let spec = &self.spec;
        if args.len() != spec.atoms.len() || outputs.len() != spec.consts.len() {
            return Err(RuleError::Malformed(
                "a bit-map helper's operands do not match its matrix".to_string(),
            ));
        }
        let pattern = Pattern::of(args);
        let (unknown, r) = spec.reduce(&pattern);
        // v = y ⊕ c ⊕ M_known·known.
        let known: Vec<Option<Value>> = args.iter().map(Arg::known).collect();
        let v: Vec<Option<Value>> = outputs
            .iter()
            .enumerate()
            .map(|(i, &y)| {
                let mut acc = y;
                if spec.consts[i] != 0 {
                    let k = e.ic(spec.consts[i] as i64);
                    acc = e.ixor(acc, k);
                }
                if let Some(m) = product(e, &spec.matrix, i, &known) {
                    acc = e.ixor(acc, m);
                }
                Some(acc)
            })
            .collect();
        for t in 0..r.image.rows() {
            if let Some(w) = product(e, &r.image, t, &v) {
                let zero = e.ic(0);
                let ok = e.ieq(w, zero);
                e.check(ok, NO_PREIMAGE)?;
            }
        }
        let mut theta: Vec<Option<Value>> = vec![None; unknown.len()];
        for (k, &c) in unknown.iter().enumerate() {
            if r.free[k] != 0 {
                theta[k] = Some(e.theta(Domain::Bits { mask: r.free[k] }, &self.free_role(c))?);
            }
        }
        let mut out: Vec<Option<Value>> = known;
        for (k, &c) in unknown.iter().enumerate() {
            let p = product(e, &r.inverse, k, &v);
            let n = product(e, &r.null, k, &theta);
            out[c] = Some(match (p, n) {
                (Some(p), Some(n)) => e.ixor(p, n),
                (Some(x), None) | (None, Some(x)) => x,
                (None, None) => e.ic(0),
            });
        }
        super::helpers::solved(out)
    }

    fn emit_pgf(
        &self,
        e: &mut Emitter<'_>,
        _outputs: &[Value],
        args: &[Value],
        pattern: &Pattern,
    ) -> Result<(), RuleError> {
        for (c, mask) in self.spec.thetas(pattern) {
            let m = e.ic(mask as i64);
            let bits = e.iand(args[c], m);
            e.record(bits, &self.free_role(c))?;
        }
        Ok(())
    }
}
