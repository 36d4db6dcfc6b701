//! The rewrite rules, in families.
//!
//! Every rule is either exact in IEEE arithmetic or marked **rounding** (exact for real numbers,
//! equal up to rounding — and up to overflow — in f64). Rounding-only rules are what make
//! isolation possible (`a·(b + c) = a·b + a·c`), so they are used; their results are always
//! (1) checked numerically against the original at random points before use, and (2) guarded in
//! the inverse: the inverse of a rewritten function checks the **original** function on its
//! answer ([`super::hook`]), so a rewrite that is wrong somewhere can lower acceptance but never
//! make an inverse unsound.
//!
//! Left out on purpose (unsound for IEEE values, and not needed): `x·0 = 0` (inf, NaN, −0),
//! `x − x = 0` (inf), `x / x = 1`, `(x / y)·y = x`, `(x + 1) − x = 1`.
//!
//! | family | rules | exact? |
//! |---|---|---|
//! | [`Family::Comm`] | `a+b = b+a`, `a·b = b·a` | exact |
//! | [`Family::Assoc`] | `(a+b)+c → a+(b+c)`, same for `·` (one way: with commutativity this reaches every bracketing, and the e-graph grows more slowly) | rounding |
//! | [`Family::Canon`] | `a−b ↔ a+(−b)`, `−a ↔ (−1)·a`, `−(−a) → a`, `(−a)·b ↔ −(a·b)`, `−(a+b) ↔ (−a)+(−b)`, `a/b ↔ a·(1/b)`, `(a·b)/c ↔ a·(b/c)`; `max(a, a) → a`, `min(a, a) → a` (f64 and i64), `a & a → a`, `a | a → a` (i64 and bool) | exact but `a/b ↔ a·(1/b)`, `(a·b)/c ↔ a·(b/c)` and the sign of a zero sum |
//! | [`Family::Distribute`] | `a·(b+c) ↔ a·b+a·c`, `a+a·b → a·(1+b)`, `a+a → 2·a`; ratios `a/(c−a) → odds(a, c)`, `a/(a+c) → −odds(−a, c)` (a unknown, c a constant), `k·a/(c+m·a) → (k/m)·(m·a/(m·a+c))` (constants k, m, c), and `c/(c−a) − 1`, `1 − c/(a+c)`, `(k·a+b)/(a+d) → k + (b−k·d)/(a+d)` | rounding (`a+a = 2·a` is exact) |
//! | [`Family::Square`] | `a·a ↔ sq a`, `sq(−a) → sq a`, `sq(a−b) → sq(b−a)`, `sq(a·b) ↔ sq a · sq b` | exact but the last |
//! | [`Family::Csq`] | completing the square `a·sq x + b·x → a·sq(x + b/2a) − b²/4a` (and `a = 1`, `b = 1`), if `a`, `b` do not depend on an unknown, `x` does, and `a ≠ 0` is known | rounding |
//! | [`Family::Power`] | `a·sq a → pow(a, 3)`, `a·pow(a, n) → pow(a, n+1)`, `pow(a,p)·pow(a,q) → pow(a, p+q)` for integer constants, `pow(a, 1) → a`, `pow(a, 2) → sq a` | rounding |
//! | [`Family::ExpLog`] | `exp a·exp b ↔ exp(a+b)`, `log(a·b) ↔ log a + log b` and `exp(log a) → a` if `a, b > 0`, `log(exp a) → a` (overflow: guarded), `log(pow(a, p)) → p·log a` if `a > 0` | rounding |
//! | [`Family::Int`] | i64: commutativity, associativity, distribution, `a−b ↔ a+(−b)`, `−a ↔ (−1)·a`, `−(−a) → a`, `a+a → 2·a`, `a+a·b → a·(1+b)` | exact (wrapping arithmetic is a ring) |
//!
//! Constant folding (with pruning of constant classes) is not a rule: it is the analysis
//! ([`super::analysis`]).

use super::analysis::{IsoAnalysis, IsoGraph, POS, ZERO};
use super::lang::Node;
use egg::{rewrite as rw, Id, Rewrite, Subst, Var};
use pinv_core::ir::Const;
use serde::Serialize;

pub type Rule = Rewrite<Node, IsoAnalysis>;

/// A family of rules (see the module docs for what each contains).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    Comm,
    Assoc,
    Canon,
    Distribute,
    Square,
    Csq,
    Power,
    ExpLog,
    Int,
}

impl Family {
    pub const ALL: &'static [Family] = &[
        Family::Comm,
        Family::Assoc,
        Family::Canon,
        Family::Distribute,
        Family::Square,
        Family::Csq,
        Family::Power,
        Family::ExpLog,
        Family::Int,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Family::Comm => "comm",
            Family::Assoc => "assoc",
            Family::Canon => "canon",
            Family::Distribute => "distribute",
            Family::Square => "square",
            Family::Csq => "csq",
            Family::Power => "power",
            Family::ExpLog => "explog",
            Family::Int => "int",
        }
    }

    /// The family's rules.
    pub fn rules(self) -> Vec<Rule> {
        match self {
            Family::Comm => comm(),
            Family::Assoc => assoc(),
            Family::Canon => canon(),
            Family::Distribute => distribute(),
            Family::Square => square(),
            Family::Csq => csq(),
            Family::Power => power(),
            Family::ExpLog => explog(),
            Family::Int => int(),
        }
    }
}

/// The rules of several families.
pub fn rules(families: &[Family]) -> Vec<Rule> {
    families.iter().flat_map(|f| f.rules()).collect()
}

/// [`rules`], built once per process for each set of families: building parses every
/// pattern, and isolation asks for them once per plan (thousands of times in a long
/// function with branches).
pub fn shared_rules(families: &[Family]) -> std::sync::Arc<Vec<Rule>> {
    type Cache = std::sync::Mutex<Vec<(Vec<Family>, std::sync::Arc<Vec<Rule>>)>>;
    static CACHE: std::sync::OnceLock<Cache> = std::sync::OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let mut cache = cache
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some((_, built)) = cache.iter().find(|(f, _)| f == families) {
        return built.clone();
    }
    let built = std::sync::Arc::new(rules(families));
    cache.push((families.to_vec(), built.clone()));
    built
}

fn v(name: &str) -> Var {
    name.parse().expect("a pattern variable")
}

/// The leading coefficient `a` and linear coefficient `b` are free of unknowns, `a` is known to
/// be nonzero, and `x` depends on an unknown.
fn quadratic(a: Option<&str>, b: Option<&str>) -> impl Fn(&mut IsoGraph, Id, &Subst) -> bool {
    let a = a.map(v);
    let b = b.map(v);
    let x = v("?x");
    move |eg, _, s| {
        let coeff_ok = |var: Option<Var>, nonzero: bool| match var {
            None => true,
            Some(var) => {
                let d = &eg[s[var]].data;
                d.unknowns == 0 && (!nonzero || d.signs() & ZERO == 0)
            }
        };
        coeff_ok(a, true) && coeff_ok(b, false) && eg[s[x]].data.unknowns != 0
    }
}

/// `a` holds unknowns and `c` is a constant: the ratio `a / (c − a)` is one an `odds` call
/// solves. Not where `c` holds a pivot: the odds form then needs the pivot read first (`given`),
/// where `a · (2 / (a + b))` lets the product's balanced split choose it (`(a − b)/(a + b)`:
/// 88% of θ accepted the first way, 100% the second).
fn odds_of(a: &str, c: &str) -> impl Fn(&mut IsoGraph, Id, &Subst) -> bool {
    let (a, c) = (v(a), v(c));
    move |eg, _, s| eg[s[a]].data.unknowns != 0 && eg[s[c]].data.konst.is_some()
}

/// `a` holds unknowns; `k`, `m` and `c` are constants, `m` finite and nonzero (a ratio
/// `k·a / (c + m·a)` that [`Family::Distribute`]'s rescaling turns into an odds form).
fn rescalable(a: &str, k: &str, m: &str, c: &str) -> impl Fn(&mut IsoGraph, Id, &Subst) -> bool {
    let (a, k, m, c) = (v(a), v(k), v(m), v(c));
    move |eg, _, s| {
        let konst = |x: Var| eg[s[x]].data.konst;
        eg[s[a]].data.unknowns != 0
            && matches!(konst(k), Some(Const::F64(_)))
            && matches!(konst(c), Some(Const::F64(_)))
            && matches!(konst(m), Some(Const::F64(x)) if x != 0.0 && x.is_finite())
    }
}

fn positive(vars: &[&str]) -> impl Fn(&mut IsoGraph, Id, &Subst) -> bool {
    let vars: Vec<Var> = vars.iter().map(|s| v(s)).collect();
    move |eg, _, s| vars.iter().all(|&x| eg[s[x]].data.signs() == POS)
}

/// Every listed variable is a small integer-valued f64 constant.
fn int_consts(vars: &[&str]) -> impl Fn(&mut IsoGraph, Id, &Subst) -> bool {
    let vars: Vec<Var> = vars.iter().map(|s| v(s)).collect();
    move |eg, _, s| {
        vars.iter().all(|&x| {
            matches!(eg[s[x]].data.konst, Some(Const::F64(c)) if c.fract() == 0.0 && c.abs() <= 64.0)
        })
    }
}

fn comm() -> Vec<Rule> {
    vec![
        rw!("comm-fadd"; "(fadd ?a ?b)" => "(fadd ?b ?a)"),
        rw!("comm-fmul"; "(fmul ?a ?b)" => "(fmul ?b ?a)"),
    ]
}

fn assoc() -> Vec<Rule> {
    vec![
        rw!("assoc-fadd"; "(fadd (fadd ?a ?b) ?c)" => "(fadd ?a (fadd ?b ?c))"),
        rw!("assoc-fmul"; "(fmul (fmul ?a ?b) ?c)" => "(fmul ?a (fmul ?b ?c))"),
    ]
}

fn canon() -> Vec<Rule> {
    vec![
        rw!("sub-to-add"; "(fsub ?a ?b)" => "(fadd ?a (fneg ?b))"),
        rw!("add-to-sub"; "(fadd ?a (fneg ?b))" => "(fsub ?a ?b)"),
        rw!("neg-to-mul"; "(fneg ?a)" => "(fmul -1.0 ?a)"),
        rw!("mul-to-neg"; "(fmul -1.0 ?a)" => "(fneg ?a)"),
        rw!("neg-neg"; "(fneg (fneg ?a))" => "?a"),
        rw!("neg-out-of-mul"; "(fmul (fneg ?a) ?b)" => "(fneg (fmul ?a ?b))"),
        rw!("neg-into-mul"; "(fneg (fmul ?a ?b))" => "(fmul (fneg ?a) ?b)"),
        rw!("neg-over-add"; "(fneg (fadd ?a ?b))" => "(fadd (fneg ?a) (fneg ?b))"),
        rw!("neg-out-of-add"; "(fadd (fneg ?a) (fneg ?b))" => "(fneg (fadd ?a ?b))"),
        rw!("div-to-mul"; "(fdiv ?a ?b)" => "(fmul ?a (fdiv 1.0 ?b))"),
        rw!("mul-to-div"; "(fmul ?a (fdiv 1.0 ?b))" => "(fdiv ?a ?b)"),
        rw!("div-of-mul"; "(fdiv (fmul ?a ?b) ?c)" => "(fmul ?a (fdiv ?b ?c))"),
        rw!("mul-of-div"; "(fmul ?a (fdiv ?b ?c))" => "(fdiv (fmul ?a ?b) ?c)"),
        // Idempotence: `max(p, p)` uses p twice and is p (NaN and −0.0 included).
        rw!("fmax-self"; "(fmax ?a ?a)" => "?a"),
        rw!("fmin-self"; "(fmin ?a ?a)" => "?a"),
        rw!("imax-self"; "(imax ?a ?a)" => "?a"),
        rw!("imin-self"; "(imin ?a ?a)" => "?a"),
        rw!("iand-self"; "(iand ?a ?a)" => "?a"),
        rw!("ior-self"; "(ior ?a ?a)" => "?a"),
        rw!("band-self"; "(band ?a ?a)" => "?a"),
        rw!("bor-self"; "(bor ?a ?a)" => "?a"),
    ]
}

fn distribute() -> Vec<Rule> {
    vec![
        rw!("distribute"; "(fmul ?a (fadd ?b ?c))" => "(fadd (fmul ?a ?b) (fmul ?a ?c))"),
        rw!("factor"; "(fadd (fmul ?a ?b) (fmul ?a ?c))" => "(fmul ?a (fadd ?b ?c))"),
        rw!("factor-one"; "(fadd ?a (fmul ?a ?b))" => "(fmul ?a (fadd 1.0 ?b))"),
        rw!("double"; "(fadd ?a ?a)" => "(fmul 2.0 ?a)"),
        // Ratios of affine terms in one unknown use it once: a/(c − a) is `odds a c`, whose
        // helper solves it with the closed form stable for the ratio at hand (each exact
        // rewrite with a once, `c/(c − a) − 1` or `1/(c/a − 1)`, cancels at one end:
        // logits of p near 0 or near 1); a/(a + c) = −odds(−a, c) (exactly: a + c = c − (−a));
        // (k·a + b)/(a + d) = k + (b − k·d)/(a + d) (Möbius maps).
        rw!("ratio-sub"; "(fdiv ?a (fsub ?c ?a))" => "(odds ?a ?c)" if odds_of("?a", "?c")),
        rw!("ratio-add"; "(fdiv ?a (fadd ?a ?c))" => "(fneg (odds (fneg ?a) ?c))"
            if odds_of("?a", "?c")),
        // A scaled ratio k·a / (c + m·a) with constants k, m, c: (k/m)·(m·a / (m·a + c)), an
        // odds form (Möbius maps with constant coefficients: a Bayes posterior
        // 0.9p / (0.2 + 0.7p)). Rounds: k/m is a constant of its own.
        rw!("ratio-rescale"; "(fdiv (fmul ?a ?k) (fadd ?c (fmul ?a ?m)))"
            => "(fmul (fdiv ?k ?m) (fdiv (fmul ?a ?m) (fadd (fmul ?a ?m) ?c)))"
            if rescalable("?a", "?k", "?m", "?c")),
        // The split forms c/(c − a) − 1 and 1 − c/(a + c) too, for the rules after them to
        // regroup where c holds unknowns (the odds form is smaller where both apply).
        rw!("ratio-sub-split"; "(fdiv ?a (fsub ?c ?a))" => "(fsub (fdiv ?c (fsub ?c ?a)) 1.0)"),
        rw!("ratio-add-split"; "(fdiv ?a (fadd ?a ?c))" => "(fsub 1.0 (fdiv ?c (fadd ?a ?c)))"),
        rw!("ratio-affine"; "(fdiv (fadd ?a ?b) (fadd ?a ?d))"
            => "(fadd 1.0 (fdiv (fsub ?b ?d) (fadd ?a ?d)))"),
        rw!("ratio-scaled"; "(fdiv (fadd (fmul ?k ?a) ?b) (fadd ?a ?d))"
            => "(fadd ?k (fdiv (fsub ?b (fmul ?k ?d)) (fadd ?a ?d)))"),
    ]
}

fn square() -> Vec<Rule> {
    vec![
        rw!("mul-self"; "(fmul ?a ?a)" => "(sq ?a)"),
        rw!("sq-to-mul"; "(sq ?a)" => "(fmul ?a ?a)"),
        rw!("sq-neg"; "(sq (fneg ?a))" => "(sq ?a)"),
        rw!("sq-swap"; "(sq (fsub ?a ?b))" => "(sq (fsub ?b ?a))"),
        rw!("sq-of-mul"; "(sq (fmul ?a ?b))" => "(fmul (sq ?a) (sq ?b))"),
        rw!("mul-of-sq"; "(fmul (sq ?a) (sq ?b))" => "(sq (fmul ?a ?b))"),
    ]
}

fn csq() -> Vec<Rule> {
    vec![
        rw!("csq";
            "(fadd (fmul ?a (sq ?x)) (fmul ?b ?x))"
            => "(fsub (fmul ?a (sq (fadd ?x (fdiv ?b (fmul 2.0 ?a))))) (fdiv (sq ?b) (fmul 4.0 ?a)))"
            if quadratic(Some("?a"), Some("?b"))),
        rw!("csq-monic";
            "(fadd (sq ?x) (fmul ?b ?x))"
            => "(fsub (sq (fadd ?x (fdiv ?b 2.0))) (fdiv (sq ?b) 4.0))"
            if quadratic(None, Some("?b"))),
        rw!("csq-unit";
            "(fadd (fmul ?a (sq ?x)) ?x)"
            => "(fsub (fmul ?a (sq (fadd ?x (fdiv 1.0 (fmul 2.0 ?a))))) (fdiv 1.0 (fmul 4.0 ?a)))"
            if quadratic(Some("?a"), None)),
        rw!("csq-monic-unit";
            "(fadd (sq ?x) ?x)" => "(fsub (sq (fadd ?x 0.5)) 0.25)"
            if quadratic(None, None)),
    ]
}

fn power() -> Vec<Rule> {
    vec![
        rw!("cube"; "(fmul ?a (sq ?a))" => "(pow ?a 3.0)"),
        rw!("pow-succ"; "(fmul ?a (pow ?a ?n))" => "(pow ?a (fadd ?n 1.0))" if int_consts(&["?n"])),
        rw!("pow-add"; "(fmul (pow ?a ?p) (pow ?a ?q))" => "(pow ?a (fadd ?p ?q))"
            if int_consts(&["?p", "?q"])),
        rw!("pow-one"; "(pow ?a 1.0)" => "?a"),
        rw!("pow-two"; "(pow ?a 2.0)" => "(sq ?a)"),
    ]
}

fn explog() -> Vec<Rule> {
    vec![
        rw!("exp-add"; "(fmul (exp ?a) (exp ?b))" => "(exp (fadd ?a ?b))"),
        rw!("exp-split"; "(exp (fadd ?a ?b))" => "(fmul (exp ?a) (exp ?b))"),
        rw!("log-mul"; "(log (fmul ?a ?b))" => "(fadd (log ?a) (log ?b))" if positive(&["?a", "?b"])),
        rw!("log-add"; "(fadd (log ?a) (log ?b))" => "(log (fmul ?a ?b))" if positive(&["?a", "?b"])),
        rw!("log-exp"; "(log (exp ?a))" => "?a"),
        rw!("exp-log"; "(exp (log ?a))" => "?a" if positive(&["?a"])),
        rw!("log-pow"; "(log (pow ?a ?p))" => "(fmul ?p (log ?a))" if positive(&["?a"])),
    ]
}

fn int() -> Vec<Rule> {
    vec![
        rw!("comm-iadd"; "(iadd ?a ?b)" => "(iadd ?b ?a)"),
        rw!("comm-imul"; "(imul ?a ?b)" => "(imul ?b ?a)"),
        rw!("assoc-iadd"; "(iadd (iadd ?a ?b) ?c)" => "(iadd ?a (iadd ?b ?c))"),
        rw!("assoc-imul"; "(imul (imul ?a ?b) ?c)" => "(imul ?a (imul ?b ?c))"),
        rw!("isub-to-iadd"; "(isub ?a ?b)" => "(iadd ?a (ineg ?b))"),
        rw!("iadd-to-isub"; "(iadd ?a (ineg ?b))" => "(isub ?a ?b)"),
        rw!("ineg-to-imul"; "(ineg ?a)" => "(imul -1 ?a)"),
        rw!("imul-to-ineg"; "(imul -1 ?a)" => "(ineg ?a)"),
        rw!("ineg-ineg"; "(ineg (ineg ?a))" => "?a"),
        rw!("idistribute"; "(imul ?a (iadd ?b ?c))" => "(iadd (imul ?a ?b) (imul ?a ?c))"),
        rw!("ifactor"; "(iadd (imul ?a ?b) (imul ?a ?c))" => "(imul ?a (iadd ?b ?c))"),
        rw!("ifactor-one"; "(iadd ?a (imul ?a ?b))" => "(imul ?a (iadd 1 ?b))"),
        rw!("idouble"; "(iadd ?a ?a)" => "(imul 2 ?a)"),
    ]
}

/// Rules that are exact for every value (IEEE f64 bit for bit, wrapping i64, bool): the only
/// ones the simplifier of generated code uses ([`super::simplify`]).
///
/// `x·1 = x`, `x/1 = x`, `x − 0 = x`, `x + (−0) = x`, `−(−x) = x`; for i64 `x+0`, `x−0`, `x·1`,
/// `(z − t) + t = z`, `(z + t) − t = z`, `(z ^ t) ^ t = z`, `−(−x)`, `x = x`, min and max with
/// the ends of i64, and comparisons with them that no i64 passes (`x > i64::MAX`); for bool the
/// identities and annihilators of `&`, `|`, idempotence, `!!x = x`, `x == x`, and
/// `(a == a) | (a != a) = true` for f64 `a` (false only for NaN, when the other is true) — which
/// is what a tolerance check of a value against itself reduces to.
///
/// Not here: `(z − t) + t = z` for f64, which is false in floating point (that is why the rules
/// check their answers), `x·0 = 0`, `x − x = 0`, `x/x = 1`.
pub fn exact_simplifications() -> Vec<Rule> {
    vec![
        rw!("x*1"; "(fmul ?x 1.0)" => "?x"),
        rw!("1*x"; "(fmul 1.0 ?x)" => "?x"),
        rw!("x/1"; "(fdiv ?x 1.0)" => "?x"),
        rw!("x-0"; "(fsub ?x 0.0)" => "?x"),
        rw!("x+-0"; "(fadd ?x -0.0)" => "?x"),
        rw!("-0+x"; "(fadd -0.0 ?x)" => "?x"),
        rw!("--x"; "(fneg (fneg ?x))" => "?x"),
        rw!("i+0"; "(iadd ?x 0)" => "?x"),
        rw!("0+i"; "(iadd 0 ?x)" => "?x"),
        rw!("i-0"; "(isub ?x 0)" => "?x"),
        rw!("i*1"; "(imul ?x 1)" => "?x"),
        rw!("1*i"; "(imul 1 ?x)" => "?x"),
        rw!("(z-t)+t"; "(iadd (isub ?z ?t) ?t)" => "?z"),
        rw!("t+(z-t)"; "(iadd ?t (isub ?z ?t))" => "?z"),
        rw!("(z+t)-t"; "(isub (iadd ?z ?t) ?t)" => "?z"),
        rw!("(t+z)-t"; "(isub (iadd ?t ?z) ?t)" => "?z"),
        rw!("(z^t)^t"; "(ixor (ixor ?z ?t) ?t)" => "?z"),
        rw!("(t^z)^t"; "(ixor (ixor ?t ?z) ?t)" => "?z"),
        rw!("--i"; "(ineg (ineg ?x))" => "?x"),
        // The ends of i64 (a trip-count scan's bounds start there).
        rw!("min(i,MAX)"; "(imin ?x 9223372036854775807)" => "?x"),
        rw!("min(MAX,i)"; "(imin 9223372036854775807 ?x)" => "?x"),
        rw!("max(i,MIN)"; "(imax ?x -9223372036854775808)" => "?x"),
        rw!("max(MIN,i)"; "(imax -9223372036854775808 ?x)" => "?x"),
        // No i64 is past them (a scan's test that its bounds crossed, once a bound is known
        // to stay at an end).
        rw!("i>MAX"; "(igt ?x 9223372036854775807)" => "false"),
        rw!("MAX<i"; "(ilt 9223372036854775807 ?x)" => "false"),
        rw!("i<MIN"; "(ilt ?x -9223372036854775808)" => "false"),
        rw!("MIN>i"; "(igt -9223372036854775808 ?x)" => "false"),
        rw!("i<=MAX"; "(ile ?x 9223372036854775807)" => "true"),
        rw!("MAX>=i"; "(ige 9223372036854775807 ?x)" => "true"),
        rw!("i>=MIN"; "(ige ?x -9223372036854775808)" => "true"),
        rw!("MIN<=i"; "(ile -9223372036854775808 ?x)" => "true"),
        rw!("i==i"; "(ieq ?x ?x)" => "true"),
        rw!("b&true"; "(band ?x true)" => "?x"),
        rw!("true&b"; "(band true ?x)" => "?x"),
        rw!("b&false"; "(band ?x false)" => "false"),
        rw!("false&b"; "(band false ?x)" => "false"),
        rw!("b|false"; "(bor ?x false)" => "?x"),
        rw!("false|b"; "(bor false ?x)" => "?x"),
        rw!("b|true"; "(bor ?x true)" => "true"),
        rw!("true|b"; "(bor true ?x)" => "true"),
        rw!("b&b"; "(band ?x ?x)" => "?x"),
        rw!("b|b"; "(bor ?x ?x)" => "?x"),
        rw!("!!b"; "(bnot (bnot ?x))" => "?x"),
        rw!("b==b"; "(beq ?x ?x)" => "true"),
        rw!("b==true"; "(beq ?x true)" => "?x"),
        rw!("true==b"; "(beq true ?x)" => "?x"),
        rw!("b!=false"; "(bne ?x false)" => "?x"),
        rw!("false!=b"; "(bne false ?x)" => "?x"),
        rw!("a==a|a!=a"; "(bor (feq ?a ?a) (fne ?a ?a))" => "true"),
        rw!("a!=a|a==a"; "(bor (fne ?a ?a) (feq ?a ?a))" => "true"),
    ]
}
