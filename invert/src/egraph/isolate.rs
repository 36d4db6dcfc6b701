//! The isolation driver: from a function to a rewritten body in which every unknown is solved
//! once, and a report.
//!
//! 1. The body (after CSE) becomes a [`Plan`]; the reorientation is simulated on it. No
//!    consistency check: nothing to do ([`Outcome::NoFanOut`]). Branches or loops: skipped.
//! 2. **Run without θ**: every input is an unknown. egg runs the rule families with the
//!    [`cost`](super::cost) (unknown occurrences on the tree, then size) and a hook that, before
//!    each iteration, extracts the best term and simulates the reorientation of it: **early
//!    stop** as soon as it would need no consistency check (for a tree that is "every unknown
//!    occurs once"; on the DAG a shared subterm solved once is fine too). A merge of unequal
//!    constants stops the run and drops its result.
//! 3. **Runs with a pivot**: if that fails, values are chosen as θ one at a time — shared values
//!    first (in `y·(x+y) + (x+y)² + 2(x+y)` the value `a = x+y`: the run with `a` known finds
//!    `a·(y + a + 2)`, which the reorientation inverts reading θ for `a` at the product, with the
//!    rule's own domain, then `y`, then `x`), then the inputs that occur more than once (`y` in the
//!    same function: `(x + (3y+2)/2)² − …`). A pivot the reorientation would not solve by itself
//!    is read from θ first, with [`PKind::Given`]. The candidates are ranked by (consistency
//!    checks, numeric roots, θ read first, other θ and choices, size); the first without checks,
//!    roots or θ-first reads ends the search.
//! 4. **Numeric fallback**: where one unknown `x` still occurs several times (`x⁵ + x`,
//!    `x·exp x`), the smallest subterm holding every occurrence becomes a helper solved
//!    numerically ([`PKind::Root`], see [`crate::solve::numeric`]).
//! 5. Every extracted form is checked at random points against the original term (relative
//!    1e-9, exact for i64 and bool) and the chosen plan once more against the original body;
//!    a form that disagrees is rejected.

use super::analysis::{IsoAnalysis, VarKind};
use super::config::{IsolationConfig, IsolationReport, Outcome, RunReport, Stop};
use super::convert::{
    check_numerically, param_names, to_plan, Dag, Disagreement, Input, KeepOriginals, Leaf,
    StepBudget,
};
use super::cost::Extracted;
use super::lang::{Node, Num};
use super::rules::{shared_rules, Rule};
use crate::solve::plan::{
    plan_text, simulate, Body, PKind, PVal, Plan, PlanBuilder, RootSpec, Simulation,
};
use egg::{Id, Language, Runner, StopReason, Symbol};
use pinv_core::ir::{Const, FuncId, FuncKind, InstKind, Module, Type};
use pinv_core::Span;
use std::cell::Cell;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;
use std::time::{Duration, Instant};

/// The result of isolating one function: the rewritten body (if any) and the report.
#[derive(Clone, Debug)]
pub struct Isolated {
    pub function: FuncId,
    pub report: IsolationReport,
    /// The rewritten body, when the report's outcome is isolated or improved.
    pub body: Option<Body>,
    /// Readable parameter names (for helper roles).
    pub names: Vec<String>,
}

impl Isolated {
    /// The rewritten function and the helper functions it needs, as IR text, as they would be
    /// installed in `module` (`None` if the body is not rewritten). The numeric helpers'
    /// generated `solve`/`index` loops and the grid are listed by name only.
    pub fn rewritten_ir(&self, module: &Module) -> Option<String> {
        let body = self.body.as_ref()?;
        let mut m = module.clone();
        let first_new = m.functions.len();
        let mut layer = pinv_primitives::Layer::new("isolation");
        crate::solve::helpers::install(
            body,
            &mut m,
            self.function,
            &mut layer,
            &pinv_primitives::Stack::standard(),
        );
        let opts = pinv_core::ir::WriteOptions::default();
        let mut f = m.functions[self.function].clone();
        f.compact();
        let mut out = pinv_core::ir::write::write_function_in(&m, &f, &opts);
        let mut generated = Vec::new();
        for (_, g) in m.iter().skip(first_new) {
            if g.name.ends_with(".solve") || g.name.ends_with(".index") || g.name == "iso.grid" {
                generated.push(g.name.clone());
                continue;
            }
            out.push('\n');
            out.push_str(&pinv_core::ir::write::write_function_in(&m, g, &opts));
        }
        if !generated.is_empty() {
            out.push_str(&format!(
                "\n; generated root finding (loops): {}\n",
                generated.join(", ")
            ));
        }
        Some(out)
    }
}

/// A proposed body and what the reorientation would do with it.
#[derive(Clone, Debug)]
struct Candidate {
    plan: Plan,
    sim: Simulation,
    thetas: Vec<String>,
    numeric: Vec<String>,
    /// Outputs solved jointly ([`crate::solve::polar`]).
    joint: Vec<String>,
}

impl Candidate {
    fn score(&self) -> Score {
        score(&self.sim, self.plan.size())
    }

    fn perfect(&self) -> bool {
        perfect(&self.sim)
    }
}

type Score = (usize, usize, usize, usize, usize, usize);

/// How good a body is for the reorientation, best first: consistency checks, numeric roots, θ
/// reads that often fail, θ read first, other θ and choices, size.
fn score(sim: &Simulation, size: usize) -> Score {
    (
        sim.checks,
        sim.roots,
        sim.bad,
        sim.givens,
        sim.thetas + sim.choices,
        size,
    )
}

/// Nothing left to improve: no check, no numeric root, no θ likely to fail, nothing read first.
fn perfect(sim: &Simulation) -> bool {
    sim.checks == 0 && sim.roots == 0 && sim.bad == 0 && sim.givens == 0
}

/// What every run of one function shares.
struct Ctx<'a> {
    module: &'a Module,
    config: &'a IsolationConfig,
    plan: Plan,
    names: Vec<String>,
    atoms: HashSet<u32>,
    rules: std::sync::Arc<Vec<Rule>>,
    start: Instant,
}

/// Isolates the unknowns of function `f` of `module` (see the module docs). Never fails: what
/// could not be done is in the report.
///
/// A function with branches or loops is first put in closed block form
/// ([`pinv_core::ir::closed::close_blocks`]); then every block that ends in `return` or `jump` is a
/// straight-line function from its parameters to what it returns or passes on, and is isolated
/// on its own (the blocks that branch are left as they are: the facts the reorientation derives
/// from their conditions stay intact).
pub fn isolate_function(module: &Module, f: FuncId, config: &IsolationConfig) -> Isolated {
    let start = Instant::now();
    let func = &module.functions[f];
    let names = param_names(&func.param_names, func.sig.params.len());
    let skipped = |why: &str| Isolated {
        function: f,
        report: IsolationReport::skipped(&func.name, why),
        body: None,
        names: names.clone(),
    };
    if !config.enabled {
        return skipped("isolation is off");
    }
    if func.kind != FuncKind::Fn {
        return skipped("not a `fn`");
    }
    let mut body = func.clone();
    pinv_core::ir::cse::cse(&mut body);
    if let Some(plan) = Plan::from_function(&body) {
        let one = isolate_plan(module, config, start, plan.pruned(), &names, false, false);
        let mut report = one.report(&func.name);
        report.time = start.elapsed();
        return Isolated {
            function: f,
            report,
            body: one.plan.map(Body::Straight),
            names,
        };
    }
    if body.layout.len() < 2 {
        return skipped("its body is not straight-line code");
    }
    // A function whose branches and loops compute a bit map of its inputs (a CRC step in a
    // loop) is one bit-map helper: exact, θ only for the bits it loses.
    if let Some((plan, text)) = crate::solve::bits_flow::affine_function(&body, &names) {
        if agrees_with_function(module, f, &plan, config) {
            let mut report = IsolationReport::skipped(&func.name, "");
            report.outcome = Outcome::Isolated;
            report.after = simulate(&plan);
            report.rewritten = plan
                .outputs
                .iter()
                .map(|&o| plan_text(&plan, &names, o, 200))
                .collect();
            report.joint = vec![text];
            report.time = start.elapsed();
            return Isolated {
                function: f,
                report,
                body: Some(Body::Straight(plan)),
                names,
            };
        }
    }
    // Closed block form: every return block is a function of its parameters.
    let mut closed = pinv_core::ir::closed::close_blocks(&body);
    closed.compact();
    let mut report = IsolationReport::skipped(&func.name, "");
    report.outcome = Outcome::NoFanOut;
    let mut plans = Vec::new();
    let mut any = false;
    for b in closed.layout.clone() {
        // A block that branches is rewritten with its condition and both sides' arguments as
        // outputs: along each edge the inverse knows some of them, and a rewrite computes
        // every one as the block did.
        let Some(plan) = Plan::from_block(&closed, b) else {
            continue;
        };
        let block_names: Vec<String> = if Some(b) == closed.entry() {
            names.clone()
        } else {
            (0..plan.params.len())
                .map(|i| format!("{b}.p{i}"))
                .collect()
        };
        let branches = closed
            .terminator(b)
            .is_some_and(|t| matches!(closed.insts[t].kind, InstKind::Brif { .. }));
        let one = isolate_plan(
            module,
            config,
            start,
            plan.pruned(),
            &block_names,
            true,
            branches,
        );
        any = true;
        // A branching block's condition is a fact along each edge, not a value the inverse
        // knows, so its simulation counts an unknown the condition and a side both read as a
        // check the walk never makes: such a block is reported only where it was rewritten.
        if branches && one.plan.is_none() {
            continue;
        }
        merge_block_report(&mut report, &one, b);
        if let Some(p) = one.plan {
            plans.push((b, p));
        }
    }
    if !any {
        return skipped("no block is pure code ending in a return, jump or branch");
    }
    if !plans.is_empty() {
        report.outcome = if report.after.checks == 0 && report.after.bad == 0 {
            Outcome::Isolated
        } else {
            Outcome::Improved
        };
    }
    report.time = start.elapsed();
    Isolated {
        function: f,
        report,
        body: (!plans.is_empty()).then_some(Body::Blocks { closed, plans }),
        names,
    }
}

/// Adds one block's result to a function's report.
fn merge_block_report(report: &mut IsolationReport, one: &One, b: pinv_core::ir::Block) {
    let add = |a: &mut Simulation, b: &Simulation| {
        a.checks += b.checks;
        a.thetas += b.thetas;
        a.choices += b.choices;
        a.givens += b.givens;
        a.roots += b.roots;
        a.bad += b.bad;
    };
    add(&mut report.before, &one.before);
    add(&mut report.after, &one.after);
    let rank = |o: &Outcome| match o {
        Outcome::NoFanOut => 0,
        Outcome::Isolated => 1,
        Outcome::Improved => 2,
        Outcome::NotIsolated => 3,
        Outcome::Skipped(_) => 4,
    };
    if rank(&one.outcome) > rank(&report.outcome) {
        report.outcome = one.outcome.clone();
    }
    if one.plan.is_some() {
        report
            .original
            .extend(one.original.iter().map(|t| format!("{b}: {t}")));
        report
            .rewritten
            .extend(one.rewritten.iter().map(|t| format!("{b}: {t}")));
    }
    for t in &one.thetas {
        if !report.thetas.contains(t) {
            report.thetas.push(t.clone());
        }
    }
    report.numeric.extend(one.numeric.iter().cloned());
    report
        .joint
        .extend(one.joint.iter().map(|t| format!("{b}: {t}")));
    report.runs.extend(one.runs.iter().cloned());
}

/// What isolation did to one straight-line plan.
struct One {
    outcome: Outcome,
    before: Simulation,
    after: Simulation,
    original: Vec<String>,
    rewritten: Vec<String>,
    thetas: Vec<String>,
    numeric: Vec<String>,
    joint: Vec<String>,
    runs: Vec<RunReport>,
    plan: Option<Plan>,
}

impl One {
    fn report(&self, function: &str) -> IsolationReport {
        IsolationReport {
            function: function.to_string(),
            outcome: self.outcome.clone(),
            before: self.before,
            after: self.after,
            original: self.original.clone(),
            rewritten: self.rewritten.clone(),
            thetas: self.thetas.clone(),
            numeric: self.numeric.clone(),
            joint: self.joint.clone(),
            runs: self.runs.clone(),
            time: Duration::ZERO,
            unrolled: 0,
            tails_copied: 0,
            inlined: 0,
            recursion_as_loop: None,
            redundant_guard_dropped: false,
        }
    }
}

/// Isolates one straight-line plan whose parameters are named `names`. With `checks_only`
/// (a block of a function with control flow) only consistency checks count: a block's values
/// also meet the branch conditions of other blocks, which the simulation does not see, so a
/// rewrite that only changes how θ is drawn may lose as much acceptance there as it wins here.
/// With `branches` (a block that ends in `brif`, whose first output is its condition), a value
/// is chosen as θ first only if a value the block passes on depends on it: the walk narrows an
/// unknown the condition alone reads to the side taken, where a θ drawn first from everywhere
/// would then be checked against the condition.
fn isolate_plan(
    module: &Module,
    config: &IsolationConfig,
    start: Instant,
    plan: Plan,
    names: &[String],
    checks_only: bool,
    branches: bool,
) -> One {
    let before = simulate(&plan);
    let original: Vec<String> = plan
        .outputs
        .iter()
        .map(|&o| plan_text(&plan, names, o, 200))
        .collect();
    let mut one = One {
        outcome: Outcome::NoFanOut,
        before,
        after: before,
        original,
        rewritten: Vec::new(),
        thetas: Vec::new(),
        numeric: Vec::new(),
        joint: Vec::new(),
        runs: Vec::new(),
        plan: None,
    };
    let dag = Dag::new(&plan);
    let worth = before.checks > 0 || (before.bad > 0 && !checks_only);
    if !worth {
        return one;
    }
    // Solvers see systems where no input is used twice, too (`(r & 0xff) << 16 | (g & 0xff)`:
    // the walk would split the `|` with θ that the shifts then reject); the e-graph only
    // rewrites fan-out.
    let joint = crate::solve::joint_candidates(&plan, names);
    let fanned = !dag.fanned_params().is_empty();
    if !fanned && joint.is_empty() {
        return one;
    }
    let ctx = Ctx {
        module,
        config,
        atoms: dag.atoms(&plan),
        names: names.to_vec(),
        plan,
        rules: shared_rules(&config.families),
        start,
    };

    let mut best: Option<Candidate> = None;
    let consider = |c: Option<Candidate>, best: &mut Option<Candidate>| {
        if let Some(c) = c {
            if best.as_ref().is_none_or(|b| c.score() < b.score()) {
                *best = Some(c);
            }
        }
    };
    // A solver's rewrite of a body (`from`, the original's or an e-graph rewrite's θ and numeric
    // roots carried over) as a candidate.
    let solved = |(plan, text): (Plan, String), from: Option<&Candidate>| {
        let sim = simulate(&plan);
        Some(Candidate {
            plan,
            sim,
            thetas: from.map(|c| c.thetas.clone()).unwrap_or_default(),
            numeric: from.map(|c| c.numeric.clone()).unwrap_or_default(),
            joint: vec![text],
        })
    };
    // Outputs that share unknowns in a planar chain, a linear system or a sum and a product are
    // solved together: trigonometry and algebra that no rewrite of the e-graph's rules does.
    for found in joint {
        consider(solved(found, None), &mut best);
    }
    // The best of the e-graph's rewrites alone, for the solvers to look at again below.
    let mut rewrite: Option<Candidate> = None;
    if fanned && !best.as_ref().is_some_and(Candidate::perfect) {
        let (r, c) = run(&ctx, &[]);
        one.runs.push(r);
        consider(c.clone(), &mut rewrite);
        consider(c, &mut best);
    }
    if fanned && !best.as_ref().is_some_and(Candidate::perfect) {
        // An input as θ is pointless when it is the only input used.
        let used_params = dag.total.iter().filter(|&&t| t > 0).count();
        let masks = &dag.params;
        let passed_on = match ctx.plan.outputs.split_first() {
            Some((_, args)) if branches => args.iter().fold(0, |m, a| m | masks[a.inst as usize]),
            _ => u64::MAX,
        };
        for pivot in dag
            .pivot_candidates(&ctx.plan)
            .into_iter()
            .filter(|p| {
                !(matches!(ctx.plan.insts[p.inst as usize].kind, PKind::Param(_))
                    && used_params < 2)
                    && masks[p.inst as usize] & passed_on != 0
            })
            .take(config.max_pivots)
        {
            if start.elapsed() >= config.function_time_limit {
                break;
            }
            let (r, c) = run(&ctx, &[pivot]);
            one.runs.push(r);
            consider(c.clone(), &mut rewrite);
            consider(c, &mut best);
            if best.as_ref().is_some_and(Candidate::perfect) {
                break;
            }
        }
    }

    // A long sum the e-graph could not regroup: its affine form, collected.
    if !best.as_ref().is_some_and(Candidate::perfect) {
        if let Some(row) = crate::solve::linear::find_row(&ctx.plan) {
            consider(
                solved(
                    crate::solve::linear::candidate(&ctx.plan, &row, names),
                    None,
                ),
                &mut best,
            );
        }
    }
    // A rewrite can show a system the original body hides: `((a − m)² + (b − m)²)/2` with
    // `m = (a + b)/2` becomes `(a − b)²/4`, a function of one linear form, which with `m` is a
    // linear system. The solvers look at the best rewrite too.
    if let Some(rewritten) = rewrite.filter(|c| !c.perfect()) {
        for found in crate::solve::joint_candidates(&rewritten.plan, names) {
            consider(solved(found, Some(&rewritten)), &mut best);
        }
    }
    let original_score = score(&before, ctx.plan.size());
    let chosen = best
        .filter(|c| c.score() < original_score && (!checks_only || c.sim.checks < before.checks));
    let chosen = match chosen {
        Some(c) => match check_plan(&ctx, &c.plan) {
            Ok(()) => Some(c),
            Err(why) => {
                if let Some(last) = one.runs.last_mut() {
                    last.rejected = Some(format!("the rewritten body disagrees: {why}"));
                }
                None
            }
        },
        None => None,
    };
    match chosen {
        None => one.outcome = Outcome::NotIsolated,
        Some(c) => {
            one.outcome = if c.sim.checks == 0 && c.sim.bad == 0 {
                Outcome::Isolated
            } else {
                Outcome::Improved
            };
            one.after = c.sim;
            one.rewritten = c
                .plan
                .outputs
                .iter()
                .map(|&o| plan_text(&c.plan, names, o, 200))
                .collect();
            one.thetas = c.thetas;
            one.numeric = c.numeric;
            one.joint = c.joint;
            one.plan = Some(c.plan);
        }
    }
    one
}

fn stop_of(reason: &Option<StopReason>) -> Stop {
    match reason {
        Some(StopReason::Saturated) => Stop::Saturated,
        Some(StopReason::IterationLimit(_)) => Stop::IterationLimit,
        Some(StopReason::NodeLimit(_)) => Stop::NodeLimit,
        Some(StopReason::TimeLimit(_)) => Stop::TimeLimit,
        Some(StopReason::Other(s)) if s == ISOLATED => Stop::Isolated,
        Some(StopReason::Other(s)) if s == CONFLICT => Stop::ConstantConflict,
        Some(StopReason::Other(s)) => Stop::Other(s.clone()),
        None => Stop::Other("did not run".to_string()),
    }
}

const ISOLATED: &str = "isolated";
const CONFLICT: &str = "constant conflict";

/// What the hook needs, owned (hooks are `'static`).
struct HookCtx {
    plan: Plan,
    input: Input,
    /// The e-graph class each node of `input.expr` was added as.
    ids: Vec<Id>,
    pivots: Vec<(PVal, String)>,
    last: Cell<Option<super::cost::Cost>>,
}

impl HookCtx {
    /// The plan of an extracted term, with pivots read first if the plan needs it.
    /// `find` gives the canonical class of an id of the e-graph `ext` was extracted from.
    fn candidate(
        &self,
        ext: &Extracted,
        spans: &dyn Fn(Id) -> Option<Span>,
        find: &dyn Fn(Id) -> Id,
    ) -> (Plan, Simulation, bool) {
        let plan = to_plan(
            ext,
            &self.plan,
            &self.input.leaves,
            &self.input.call_types,
            spans,
            None,
        );
        let sim = simulate(&plan);
        if perfect(&sim) || self.pivots.is_empty() {
            return (plan, sim, false);
        }
        // With the pivots read first, what depends on them alone is computed as written.
        let mut class_original = HashMap::new();
        for &(node, v) in &self.input.originals {
            class_original
                .entry(find(self.ids[usize::from(node)]))
                .or_insert(v);
        }
        let pivots: Vec<PVal> = self.pivots.iter().map(|(p, _)| *p).collect();
        let keep = KeepOriginals {
            class_original: &class_original,
            vars: &self.input.analysis.vars,
            pivots: &pivots,
        };
        let kept = to_plan(
            ext,
            &self.plan,
            &self.input.leaves,
            &self.input.call_types,
            spans,
            Some(&keep),
        );
        let given = with_givens(&kept, &self.plan, &self.pivots);
        let gsim = simulate(&given);
        if score(&gsim, 0) < score(&sim, 0) {
            (given, gsim, true)
        } else {
            (plan, sim, false)
        }
    }
}

/// One e-graph run with `pivots` known.
fn run(ctx: &Ctx<'_>, pivots: &[PVal]) -> (RunReport, Option<Candidate>) {
    let t0 = Instant::now();
    let sigs = |g: FuncId| ctx.module.functions[g].sig.returns.clone();
    let input = Input::new(&ctx.plan, &ctx.names, &ctx.atoms, pivots, &sigs);
    let pivot_names: Vec<(PVal, String)> = pivots
        .iter()
        .map(|&p| (p, plan_text(&ctx.plan, &ctx.names, p, 60)))
        .collect();
    let mut report = RunReport {
        pivots: pivot_names.iter().map(|(_, s)| s.clone()).collect(),
        stop: Stop::Other("did not run".to_string()),
        iterations: 0,
        nodes: 0,
        classes: 0,
        time: Duration::ZERO,
        cost: Default::default(),
        extracted: Vec::new(),
        simulation: None,
        rejected: None,
    };

    let mut runner: Runner<Node, IsoAnalysis> = Runner::new(input.analysis.clone());
    let mut ids: Vec<Id> = Vec::with_capacity(input.expr.as_ref().len());
    for node in input.expr.as_ref() {
        let node = node.clone().map_children(|c| ids[usize::from(c)]);
        ids.push(runner.egraph.add(node));
    }
    runner.egraph.rebuild();
    runner.roots = input.roots.iter().map(|&r| ids[usize::from(r)]).collect();
    let spans: Vec<(Id, Span)> = input
        .spans
        .iter()
        .map(|&(i, s)| (ids[usize::from(i)], s))
        .collect();

    let remaining = ctx
        .config
        .function_time_limit
        .saturating_sub(ctx.start.elapsed());
    let hook = Rc::new(HookCtx {
        plan: ctx.plan.clone(),
        input: input.clone(),
        ids: ids.clone(),
        pivots: pivot_names.clone(),
        last: Cell::new(None),
    });
    let h = Rc::clone(&hook);
    let runner = runner
        .with_node_limit(ctx.config.node_limit)
        .with_iter_limit(ctx.config.iter_limit)
        .with_time_limit(ctx.config.run_time_limit.min(remaining))
        .with_hook(move |runner| {
            if runner.egraph.analysis.conflicts > 0 {
                return Err(CONFLICT.to_string());
            }
            let ext = Extracted::best(&runner.egraph, &h.input.analysis.vars, &runner.roots);
            if h.last.get() == Some(ext.cost) {
                return Ok(());
            }
            h.last.set(Some(ext.cost));
            let (_, sim, given) = h.candidate(&ext, &|_| None, &|c| runner.egraph.find(c));
            if perfect(&sim) && !given {
                return Err(ISOLATED.to_string());
            }
            Ok(())
        })
        .run(ctx.rules.iter());

    report.stop = stop_of(&runner.stop_reason);
    report.iterations = runner.iterations.len();
    report.nodes = runner.egraph.total_number_of_nodes();
    report.classes = runner.egraph.number_of_classes();
    let egraph = &runner.egraph;
    if egraph.analysis.conflicts > 0 {
        report.stop = Stop::ConstantConflict;
        report.rejected = Some("constants that differ by rounding were merged".to_string());
        report.time = t0.elapsed();
        return (report, None);
    }
    let ext = Extracted::best(egraph, &input.analysis.vars, &runner.roots);
    report.cost = ext.cost;
    report.extracted = (0..ext.roots.len()).map(|k| ext.text(k, 200)).collect();
    if let Err(why) = check_numerically(
        &input,
        &ext,
        ctx.module,
        ctx.config.check_points,
        ctx.config.check_tolerance,
        ctx.config.seed,
    ) {
        report.rejected = Some(format!("numeric check: {why}"));
        report.time = t0.elapsed();
        return (report, None);
    }
    let class_span: HashMap<Id, Span> = {
        let mut m = HashMap::new();
        for &(i, s) in &spans {
            m.entry(egraph.find(i)).or_insert(s);
        }
        m
    };
    let span_of = |c: Id| class_span.get(&egraph.find(c)).copied();
    let (mut plan, mut sim, mut given) = hook.candidate(&ext, &span_of, &|c| egraph.find(c));
    let mut numeric = Vec::new();
    if sim.checks > 0 && ctx.config.numeric {
        if let Some((np, text)) = numeric_plan(&hook, &ext, &span_of, &|c| egraph.find(c)) {
            let nsim = simulate(&np);
            if nsim.checks < sim.checks {
                plan = np;
                sim = nsim;
                given = false;
                numeric.push(text);
            } else if !pivots.is_empty() || nsim.checks > 0 {
                // The root helper needs its other operands known: read them first.
                let unknown_k = unknown_params_of_roots(&np);
                let pv: Vec<(PVal, String)> = unknown_k
                    .iter()
                    .map(|&p| (PVal { inst: p, idx: 0 }, ctx.names[p as usize].clone()))
                    .chain(pivot_names.iter().cloned())
                    .collect();
                let gp = with_givens(&np, &ctx.plan, &pv);
                let gsim = simulate(&gp);
                if gsim.checks < sim.checks {
                    plan = gp;
                    sim = gsim;
                    given = true;
                    numeric.push(text);
                }
            }
        }
    }
    report.simulation = Some(sim);
    report.time = t0.elapsed();
    let mut thetas: Vec<String> = Vec::new();
    if given {
        for i in &plan.insts {
            if let PKind::Given { pivot, .. } = &i.kind {
                if !thetas.contains(pivot) {
                    thetas.push(pivot.clone());
                }
            }
        }
    }
    (
        report,
        Some(Candidate {
            plan,
            sim,
            thetas,
            numeric,
            joint: Vec::new(),
        }),
    )
}

/// `plan` with `pivots` (values of `original`) read from θ first: each output that depends on
/// nothing else is wrapped as `given(out, pivot)`, the first output for all of them.
fn with_givens(plan: &Plan, original: &Plan, pivots: &[(PVal, String)]) -> Plan {
    let mut b = PlanBuilder::new(plan.params.clone());
    let ident = |p: u32| PVal { inst: p, idx: 0 };
    let mut memo = HashMap::new();
    let mut outputs: Vec<PVal> = plan
        .outputs
        .iter()
        .map(|&o| b.copy(plan, o, &ident, &mut memo))
        .collect();
    let mut omemo = HashMap::new();
    for (p, desc) in pivots {
        let pv = b.copy(original, *p, &ident, &mut omemo);
        let Some(first) = outputs.first_mut() else {
            break;
        };
        let ty = b.plan().ty(*first);
        let span = b.plan().insts[first.inst as usize].span;
        *first = b.value(
            PKind::Given {
                pivot: desc.clone(),
                nonzero: false,
                free: false,
            },
            vec![*first, pv],
            ty,
            span,
        );
    }
    let mut out = b.finish();
    out.outputs = outputs;
    out.pruned()
}

/// Parameters used by the operands `k…` of root helpers (they must be known when the helper is
/// inverted).
fn unknown_params_of_roots(plan: &Plan) -> Vec<u32> {
    let mut out = Vec::new();
    for inst in &plan.insts {
        if let PKind::Root(_) = inst.kind {
            for &k in &inst.args[1..] {
                let mut stack = vec![k];
                while let Some(v) = stack.pop() {
                    let i = &plan.insts[v.inst as usize];
                    if let PKind::Param(p) = i.kind {
                        if !out.contains(&p) {
                            out.push(p);
                        }
                    }
                    stack.extend(i.args.iter().copied());
                }
            }
        }
    }
    out
}

/// The plan of `ext` with the smallest subterm holding every occurrence of the one unknown that
/// occurs several times replaced by a numeric root helper; `None` if there is no such unknown.
fn numeric_plan(
    hook: &HookCtx,
    ext: &Extracted,
    span_of: &dyn Fn(Id) -> Option<Span>,
    find: &dyn Fn(Id) -> Id,
) -> Option<(Plan, String)> {
    let vars = &hook.input.analysis.vars;
    let mut repeated: Vec<Symbol> = Vec::new();
    for (&s, info) in vars {
        if matches!(info.kind, VarKind::Unknown { .. }) {
            let occ = ext.occurrences(s);
            // Occurrences saturate (a DAG of shared sums has 2^200 of them on its tree), so
            // their total does too.
            let total = ext
                .roots
                .iter()
                .fold(0u64, |t, &r| t.saturating_add(occ[r]));
            if total > 1 {
                repeated.push(s);
            }
        }
    }
    let [x] = repeated.as_slice() else {
        return None;
    };
    let x = *x;
    let Leaf::Param(xp) = hook.input.leaves[&x] else {
        return None;
    };
    // An f64 unknown is solved by a scan and bisection over the reals, an i64 one by a scan
    // over the integers outward from θ.
    let ty = vars[&x].ty;
    if !matches!(ty, Type::F64 | Type::I64) {
        return None;
    }
    let occ = ext.occurrences(x);
    let holders: Vec<usize> = ext.roots.iter().copied().filter(|&r| occ[r] > 0).collect();
    let [mut t] = holders.as_slice() else {
        return None;
    };
    // Down from the output to the smallest subterm holding every occurrence of x.
    let mut path = vec![t];
    loop {
        let node = &ext.nodes[t];
        let kids: Vec<usize> = node.children().iter().map(|&c| usize::from(c)).collect();
        match kids.iter().find(|&&c| occ[c] == occ[t]) {
            Some(&c) if !matches!(ext.nodes[c], Node::Var(_)) => {
                t = c;
                path.push(t);
            }
            _ => break,
        }
    }
    if ty == Type::I64 {
        // Integers are scanned exactly, so the larger the term the better: the largest on the
        // way down with no other unknown (`n * (n - 1) / 2` whole, not its product and then a
        // division that guesses its remainder), of type i64 and safe to evaluate anywhere.
        let other = |i: usize| {
            let mut seen = vec![false; ext.nodes.len()];
            let mut stack = vec![i];
            while let Some(j) = stack.pop() {
                if std::mem::replace(&mut seen[j], true) {
                    continue;
                }
                match &ext.nodes[j] {
                    Node::Var(v) if *v != x => {
                        if matches!(vars.get(v).map(|i| &i.kind), Some(VarKind::Unknown { .. })) {
                            return true;
                        }
                    }
                    n => stack.extend(n.children().iter().map(|&c| usize::from(c))),
                }
            }
            false
        };
        // T may be an f64 computed from the integer (`(n as f64) * (n as f64)`): the scan
        // then compares within the tolerance.
        t = path.into_iter().find(|&i| {
            matches!(hook.plan_ty_of(ext, i), Some(Type::I64 | Type::F64))
                && !other(i)
                && scannable(ext, i, &occ)
        })?;
    } else if hook.plan_ty_of(ext, t) != Some(ty) {
        return None;
    }
    // The operands k…: maximal subterms without x that are not constants. The nodes form a
    // DAG (a value used twice at every level is shared): each is visited once.
    let vars = has_var(ext);
    let mut ks: Vec<usize> = Vec::new();
    let mut seen = vec![false; ext.nodes.len()];
    let mut stack = vec![t];
    while let Some(i) = stack.pop() {
        if std::mem::replace(&mut seen[i], true) {
            continue;
        }
        for &c in ext.nodes[i].children() {
            let c = usize::from(c);
            if occ[c] > 0 {
                stack.push(c);
            } else if vars[c] && !ks.contains(&c) {
                ks.push(c);
            }
        }
    }
    ks.sort();
    let k_types: Vec<Type> = ks
        .iter()
        .map(|&k| hook.plan_ty_of(ext, k).unwrap_or(Type::F64))
        .collect();
    // The helper's body: (x, k…) → T.
    let mut params = vec![ty];
    params.extend(k_types.iter().copied());
    let mut body = PlanBuilder::new(params.clone());
    let mut vals: HashMap<usize, PVal> = HashMap::new();
    let k_at = |i: usize| ks.iter().position(|&k| k == i);
    let body_out = build_body(ext, t, x, &k_at, &mut body, &mut vals);
    let mut body = body.finish();
    body.outputs = vec![body_out];
    let body = body.pruned();
    let mut names = vec![hook.input_name(x)];
    names.extend((0..ks.len()).map(|j| format!("k{j}")));
    let text = plan_text(&body, &names, body.outputs[0], 120);
    let written = (ty == Type::F64)
        .then(|| written_body(hook, ext, t, x, &ks, params, find))
        .flatten();
    let spec = RootSpec {
        body,
        text: text.clone(),
        written,
    };
    // The main plan with T replaced.
    let replaced = to_plan_with_root(hook, ext, (t, xp), &ks, spec, span_of);
    Some((replaced, format!("{} in {text}", hook.input_name(x))))
}

impl HookCtx {
    fn plan_ty_of(&self, ext: &Extracted, i: usize) -> Option<Type> {
        match &ext.nodes[i] {
            Node::Num(n) => Some(n.0.ty()),
            Node::Var(s) => self.input.analysis.vars.get(s).map(|v| v.ty),
            Node::Op(op, _) => Some(op.result_type()),
            Node::Sq(_) | Node::Odds(_) => Some(Type::F64),
            Node::Call { callee, result, .. } => self
                .input
                .call_types
                .get(callee)
                .and_then(|t| t.get(*result as usize).copied()),
        }
    }

    fn input_name(&self, s: Symbol) -> String {
        s.to_string()
    }
}

/// Whether the integer scan may evaluate `t` at any x: no node that depends on x can trap (a
/// division or remainder by anything but a constant other than 0 and −1, which would stop the
/// scan with an error at some x instead of moving on) or calls a function (which may loop or
/// recurse).
fn scannable(ext: &Extracted, t: usize, occ: &[u64]) -> bool {
    let mut seen = vec![false; ext.nodes.len()];
    let mut stack = vec![t];
    while let Some(i) = stack.pop() {
        if occ[i] == 0 || std::mem::replace(&mut seen[i], true) {
            continue;
        }
        match &ext.nodes[i] {
            // A constant divisor other than 0 and −1 never traps (`n * (n - 1) / 2`).
            Node::Op(op, kids) if op.can_trap() => {
                let divisor = kids.get(1).map(|&d| &ext.nodes[usize::from(d)]);
                let safe =
                    matches!(divisor, Some(Node::Num(Num(Const::I64(d)))) if *d != 0 && *d != -1);
                if !safe {
                    return false;
                }
                stack.extend(kids.iter().map(|&c| usize::from(c)));
            }
            Node::Call { .. } => return false,
            n => stack.extend(n.children().iter().map(|&c| usize::from(c))),
        }
    }
    true
}

/// Whether each node's subterm holds a variable (children come before their parents).
fn has_var(ext: &Extracted) -> Vec<bool> {
    let mut out = vec![false; ext.nodes.len()];
    for (i, n) in ext.nodes.iter().enumerate() {
        out[i] = match n {
            Node::Var(_) => true,
            n => n.children().iter().any(|&c| out[usize::from(c)]),
        };
    }
    out
}

/// The body of a numeric root's term `t` of `ext` as the program writes it (see
/// [`RootSpec::written`]), over the same parameters `params` (x, then `ks`): the subterm of the e-graph's
/// input in `t`'s class that holds x, where every operand of it without x that is not a
/// constant is in the class of one of `ks`. `None` where the input has no such subterm (the
/// rewrite made a term the program does not have, such as `p / p` out of `−p / max(p, p)`).
fn written_body(
    hook: &HookCtx,
    ext: &Extracted,
    t: usize,
    x: Symbol,
    ks: &[usize],
    params: Vec<Type>,
    find: &dyn Fn(Id) -> Id,
) -> Option<Plan> {
    let written =
        Extracted::as_written(&hook.input.expr, &hook.input.roots, &|i| find(hook.ids[i]));
    let class = find(ext.classes[t]);
    let occ = written.occurrences(x);
    let w = (0..written.nodes.len()).find(|&i| occ[i] > 0 && written.classes[i] == class)?;
    // Its operands without x, each the node of written standing for the k of its class.
    let k_classes: Vec<Id> = ks.iter().map(|&k| find(ext.classes[k])).collect();
    let vars = has_var(&written);
    // (The input need not share equal subterms: several nodes may stand for one k.)
    let mut k_of: HashMap<usize, usize> = HashMap::new();
    let mut seen = vec![false; written.nodes.len()];
    let mut stack = vec![w];
    while let Some(i) = stack.pop() {
        if std::mem::replace(&mut seen[i], true) {
            continue;
        }
        if occ[i] == 0 {
            if vars[i] {
                let j = k_classes.iter().position(|&c| c == written.classes[i])?;
                k_of.insert(i, j);
            }
            continue;
        }
        stack.extend(written.nodes[i].children().iter().map(|&c| usize::from(c)));
    }
    let mut body = PlanBuilder::new(params);
    let k_at = |i: usize| k_of.get(&i).copied();
    let out = build_body(&written, w, x, &k_at, &mut body, &mut HashMap::new());
    let mut body = body.finish();
    body.outputs = vec![out];
    Some(body.pruned())
}

/// Copies the subterm `i` of `ext` into a helper body: `x` is parameter 0, the node `k_at` maps
/// to `j` parameter `j + 1`.
fn build_body(
    ext: &Extracted,
    i: usize,
    x: Symbol,
    k_at: &dyn Fn(usize) -> Option<usize>,
    b: &mut PlanBuilder,
    vals: &mut HashMap<usize, PVal>,
) -> PVal {
    if let Some(&v) = vals.get(&i) {
        return v;
    }
    if let Some(j) = k_at(i) {
        return b.param(j + 1);
    }
    let v = match &ext.nodes[i] {
        Node::Var(s) if *s == x => b.param(0),
        Node::Var(_) => unreachable!("leaves other than x are operands k"),
        Node::Num(n) => b.konst(n.0),
        node => {
            let args: Vec<PVal> = node
                .children()
                .iter()
                .map(|&c| build_body(ext, usize::from(c), x, k_at, b, vals))
                .collect();
            match node {
                Node::Op(op, _) => {
                    b.value(PKind::Prim(*op), args, op.result_type(), Span::default())
                }
                Node::Sq(_) => b.value(PKind::Sq, args, Type::F64, Span::default()),
                Node::Odds(_) => b.value(PKind::Odds, args, Type::F64, Span::default()),
                Node::Call { callee, .. } => {
                    // Calls inside a root helper: kept as in the term (result 0 only).
                    b.value(PKind::Call(*callee), args, Type::F64, Span::default())
                }
                _ => unreachable!(),
            }
        }
    };
    vals.insert(i, v);
    v
}

/// [`to_plan`], with node `t` computed by a root helper of `(x, k…)`.
fn to_plan_with_root(
    hook: &HookCtx,
    ext: &Extracted,
    (t, xp): (usize, u32),
    ks: &[usize],
    spec: RootSpec,
    span_of: &dyn Fn(Id) -> Option<Span>,
) -> Plan {
    let n = ext.nodes.len();
    // The nodes needed: those reachable from the roots without entering T, T itself, and the
    // operands k… (inside T).
    let mut needed = vec![false; n];
    let mut stack: Vec<usize> = ext.roots.clone();
    stack.extend(ks.iter().copied());
    while let Some(i) = stack.pop() {
        if std::mem::replace(&mut needed[i], true) || i == t {
            continue;
        }
        stack.extend(ext.nodes[i].children().iter().map(|&c| usize::from(c)));
    }
    let mut b = PlanBuilder::new(hook.plan.params.clone());
    let ident = |p: u32| PVal { inst: p, idx: 0 };
    let mut memo = HashMap::new();
    let mut vals: Vec<Option<PVal>> = vec![None; n];
    let root_ty = spec.result_ty();
    let mut spec = Some(spec);
    let root_span = span_of(ext.classes[t]).unwrap_or_default();
    for i in 0..n {
        if !needed[i] {
            continue;
        }
        let span = span_of(ext.classes[i]).unwrap_or(root_span);
        if i == t {
            let r = b.add_root(spec.take().expect("one root helper"));
            let mut args = vec![b.param(xp as usize)];
            args.extend(ks.iter().map(|&k| vals[k].expect("k… come before T")));
            vals[i] = Some(b.value(PKind::Root(r), args, root_ty, root_span));
            continue;
        }
        let node = &ext.nodes[i];
        let args: Vec<PVal> = node
            .children()
            .iter()
            .map(|&c| vals[usize::from(c)].expect("children come first"))
            .collect();
        let v = match node {
            Node::Num(n) => b.konst(n.0),
            Node::Var(s) => match hook.input.leaves[s] {
                Leaf::Param(p) => b.param(p as usize),
                Leaf::Value(v) => b.copy(&hook.plan, v, &ident, &mut memo),
            },
            Node::Op(op, _) => b.value(PKind::Prim(*op), args, op.result_type(), span),
            Node::Sq(_) => b.value(PKind::Sq, args, Type::F64, span),
            Node::Odds(_) => b.value(PKind::Odds, args, Type::F64, span),
            Node::Call { callee, result, .. } => {
                let tys = hook
                    .input
                    .call_types
                    .get(callee)
                    .cloned()
                    .unwrap_or_default();
                let inst = b.push(PKind::Call(*callee), args, tys, span);
                PVal { inst, idx: *result }
            }
        };
        vals[i] = Some(v);
    }
    let mut plan = b.finish();
    plan.outputs = ext
        .roots
        .iter()
        .map(|&r| vals[r].expect("every root is computed"))
        .collect();
    plan.pruned()
}

/// Evaluates a plan on inputs `args` (helpers included); `None` if something fails.
pub fn eval_plan(
    plan: &Plan,
    args: &[Const],
    module: &Module,
    budget: &super::convert::StepBudget,
) -> Option<Vec<Const>> {
    let mut vals: Vec<Vec<Const>> = Vec::with_capacity(plan.insts.len());
    for inst in &plan.insts {
        let a: Vec<Const> = inst
            .args
            .iter()
            .map(|v| vals[v.inst as usize][v.idx as usize])
            .collect();
        let r = match &inst.kind {
            PKind::Param(i) => vec![*args.get(*i as usize)?],
            PKind::Const(c) => vec![*c],
            PKind::Prim(op) => vec![pinv_core::semantics::eval(*op, &a).ok()?],
            PKind::Call(f) => budget.call(module, *f, &a)?,
            PKind::Sq => {
                vec![pinv_core::semantics::eval(pinv_core::ir::Opcode::Fmul, &[a[0], a[0]]).ok()?]
            }
            PKind::Odds => vec![crate::solve::odds::eval_consts(&a)?],
            PKind::Given { .. } => vec![a[0]],
            PKind::Root(r) => eval_plan(&plan.roots.get(*r)?.body, &a, module, budget)?,
            PKind::Polar { .. } => crate::solve::polar::eval(&a)?,
            PKind::Linear { rows, matrix, .. } => crate::solve::linear::eval(*rows, matrix, &a)?,
            PKind::SumProduct => crate::solve::sum_product::eval(&a)?,
            PKind::DivMod => crate::solve::divmod::eval(&a)?,
            PKind::Newton(r) => eval_plan(&plan.roots.get(*r)?.body, &a, module, budget)?,
            PKind::Bits(spec) => spec.eval(&a)?,
            PKind::Affine(spec) => spec.eval(&a)?,
            PKind::LinearRt { n, .. } => crate::solve::linear_rt::eval(*n as usize, &a)?,
            PKind::Wrap => {
                use pinv_core::semantics::eval as ev;
                let s = ev(pinv_core::ir::Opcode::Sin, &a).ok()?;
                let c = ev(pinv_core::ir::Opcode::Cos, &a).ok()?;
                vec![ev(pinv_core::ir::Opcode::Atan2, &[s, c]).ok()?]
            }
        };
        vals.push(r);
    }
    Some(
        plan.outputs
            .iter()
            .map(|v| vals[v.inst as usize][v.idx as usize])
            .collect(),
    )
}

/// Whether `plan` computes what function `f` computes at random inputs (a guard against a
/// mistake in a solver that rewrites a whole function; the final check keeps inverses sound
/// whatever it says).
fn agrees_with_function(module: &Module, f: FuncId, plan: &Plan, config: &IsolationConfig) -> bool {
    let original = |x: &[Const], budget: &StepBudget| budget.call(module, f, x);
    check_against(&original, plan, module, config, config.seed ^ 0x6a09_e667).is_ok()
}

/// Checks the chosen plan against the original body at random inputs.
fn check_plan(ctx: &Ctx<'_>, plan: &Plan) -> Result<(), Disagreement> {
    let original = |x: &[Const], budget: &StepBudget| eval_plan(&ctx.plan, x, ctx.module, budget);
    check_against(
        &original,
        plan,
        ctx.module,
        ctx.config,
        ctx.config.seed ^ 0x9e37_79b9,
    )
}

/// What a check compares a rewrite with: the original's outputs at a point, if it has them.
type Evaluator<'a> = dyn Fn(&[Const], &StepBudget) -> Option<Vec<Const>> + 'a;

/// Checks `plan` against `original` at test points where the original is defined and finite
/// ([`super::convert::Points`]): relative `check_tolerance` for f64, exact otherwise; at least
/// half of `check_points` must be compared.
fn check_against(
    original: &Evaluator<'_>,
    plan: &Plan,
    module: &Module,
    config: &IsolationConfig,
    seed: u64,
) -> Result<(), Disagreement> {
    let budget = StepBudget::default();
    let tol = config.check_tolerance;
    super::convert::at_random_points(plan.params.clone(), config.check_points, seed, |x| {
        let Some(a) = original(x, &budget) else {
            return Ok(false);
        };
        if a.iter()
            .any(|v| matches!(v, Const::F64(f) if !f.is_finite()))
        {
            return Ok(false);
        }
        let b = eval_plan(plan, x, module, &budget);
        // The first output that differs (or the first, when the rewrite failed).
        let differs = |p: Const, q: Const| !super::convert::agrees(p, q, tol);
        let output = match &b {
            Some(b) => match a.iter().zip(b).position(|(&p, &q)| differs(p, q)) {
                None => return Ok(true),
                Some(k) => k,
            },
            None => 0,
        };
        let Some(&written) = a.get(output) else {
            return Ok(false);
        };
        let at: Vec<String> = x.iter().map(Const::to_string).collect();
        Err(Disagreement::Differs {
            output,
            at: format!("({})", at.join(", ")),
            written,
            rewritten: b.and_then(|b| b.get(output).copied()),
        })
    })
}
