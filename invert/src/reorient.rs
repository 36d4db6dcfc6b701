//! Reorientation: a forward function → its inverse and its PGF, as IR functions.
//!
//! For `f: X → Y` the pass builds two functions, in one walk, so that they agree by construction:
//! - `f.inv` (`FuncKind::GeneratedInverse`): Y in, X out, reading θ from the tape;
//! - `f.pgf` (`FuncKind::GeneratedPgf`): X in, recording the θ tape that makes `f.inv` give X back.
//!
//! The walk goes backwards from the `return`: an instruction is inverted when one of its results
//! is known, by the rule the overlay [`Stack`] finds for its callee and the known/unknown pattern
//! of its operands (constants and values already solved are known). Because the walk runs in
//! reverse program order, every use of a value is inverted before its definition. The PGF first
//! recomputes every forward value, then emits each rule's PGF in the same backward order, so the θ
//! it records are read by the inverse in the same order and along the same paths.
//!
//! - **Fan-out**: a value solved by one use is *known* to every other use, whose rule then checks
//!   consistency (the all-known pattern), and a value appearing twice among one instruction's
//!   unknown operands is solved once and checked against itself. Sound, but most θ fail those
//!   checks; e-graph isolation makes such functions total.
//! - **Calls** go through the stack too (declared `inverse`/`pgf` and user layers). A module
//!   function without a rule is inverted by recursing into its body: `g.inv` and `g.pgf` are
//!   generated once per (function, stack) and called; θ for the callee comes from the same tape.
//!   Recursion (direct or mutual) is reported as unsupported.
//! - **Free inputs**: an input no output depends on is read from θ (its whole type), in input order,
//!   after the walk.
//! - Only single-block functions are handled here; control flow is reported as unsupported.

use crate::error::Error;
use pinv_core::ir::{
    Block, Domain, FuncId, FuncKind, Function, Inst, InstKind, Module, Opcode, Signature, Value,
    ValueDef,
};
use pinv_core::Span;
use pinv_primitives::{Arg, Callee, EmitOptions, Emitter, LayerStamp, Mode, Pattern, Stack};
use std::collections::{BTreeSet, HashMap, HashSet};

/// Options of the reorientation pass.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReorientOptions {
    /// What rules emit (the tolerance of consistency checks).
    pub emit: EmitOptions,
    /// E-graph isolation of reused unknowns before inverting, and simplification after
    /// ([`crate::egraph`]); on by default.
    pub isolation: crate::egraph::IsolationConfig,
}

/// The outcome of inverting one function: a module holding the forward functions and the
/// generated ones, and which generated functions are the inverse and the PGF.
#[derive(Clone, Debug)]
pub struct Inversion {
    pub module: Module,
    pub inverse: FuncId,
    /// The PGF, or why there is none (a declared inverse with θ parameters and no `pgf`).
    pub pgf: Result<FuncId, String>,
    /// Every layer consulted while inverting (misses included), for cache invalidation.
    pub consulted: BTreeSet<LayerStamp>,
    /// What e-graph isolation did, per function considered ([`crate::egraph`]).
    pub isolation: Vec<crate::egraph::IsolationReport>,
}

/// Inverts `function` of `module` under `stack`.
pub fn reorient(
    module: &Module,
    function: FuncId,
    stack: &Stack,
    options: &ReorientOptions,
) -> Result<Inversion, Error> {
    // A value computed twice would look like fan-out: merge recomputations first.
    let mut forward = module.clone();
    // ---- e-graph isolation hook (crate::egraph::hook): rewrite bodies, push the helpers' layer
    let isolation = crate::egraph::hook::before(&mut forward, function, stack, &options.isolation);
    let stack = &isolation.stack(stack);
    // ---- end of hook
    for f in forward.functions.values_mut() {
        if f.kind == FuncKind::Fn {
            pinv_core::ir::cse::cse(f);
        }
    }
    let mut pass = Reorienter {
        forward: &forward,
        stack,
        options,
        out: forward.clone(),
        done: HashMap::new(),
        in_progress: HashSet::new(),
        consulted: BTreeSet::new(),
    };
    let (inverse, pgf) = pass.invert(function)?;
    let mut module = pass.out;
    let mut consulted = pass.consulted;
    // ---- e-graph isolation hook: original bodies back, guards, simplification
    let isolation = isolation
        .after(&mut module, &mut consulted, &options.emit)
        .map_err(Error::Internal)?;
    // ---- end of hook
    for id in std::iter::once(inverse).chain(pgf.clone().ok()) {
        pinv_core::ir::verify::verify_function(&module, id)
            .map_err(|e| Error::Internal(e.to_string()))?;
    }
    Ok(Inversion {
        module,
        inverse,
        pgf,
        consulted,
        isolation,
    })
}

/// A generated PGF, or why there is none.
type PgfId = Result<FuncId, String>;

struct Reorienter<'a> {
    forward: &'a Module,
    stack: &'a Stack,
    options: &'a ReorientOptions,
    /// The forward module plus every generated function so far.
    out: Module,
    /// Generated (inverse, pgf) per forward function.
    done: HashMap<FuncId, (FuncId, PgfId)>,
    in_progress: HashSet<FuncId>,
    consulted: BTreeSet<LayerStamp>,
}

/// The two functions being written for one forward function, and where each continues.
struct Pair {
    inv: Function,
    inv_block: Block,
    pgf: Function,
    pgf_block: Block,
    /// Forward value → its solved value in the inverse.
    known: HashMap<Value, Value>,
    /// Forward value → its recomputed value in the PGF.
    fwd: HashMap<Value, Value>,
    /// Forward constants, emitted once each in the inverse.
    consts: HashMap<Value, Value>,
    /// Set when some part has no PGF: then the function has none either.
    no_pgf: Option<String>,
    /// Forward instructions whose results the inverse computes forward, from known operands,
    /// instead of inverting them.
    computed: HashSet<Inst>,
}

impl<'a> Reorienter<'a> {
    fn invert(&mut self, id: FuncId) -> Result<(FuncId, PgfId), Error> {
        if let Some(pair) = self.done.get(&id) {
            return Ok(pair.clone());
        }
        let f = &self.forward.functions[id];
        if !self.in_progress.insert(id) {
            return Err(Error::Unsupported {
                function: f.name.clone(),
                reason: "it is recursive, and recursive functions cannot be inverted yet"
                    .to_string(),
                span: f.span,
            });
        }
        let pattern = Pattern::all_unknown(f.sig.params.len());
        let lookup = self
            .stack
            .lookup(&Callee::Function(f.name.clone()), &pattern);
        self.consulted.extend(lookup.consulted.iter().copied());
        let result = match lookup.found {
            // A rule for the function itself (a declared inverse, a user layer) wins over its body.
            Some(found) => self.wrap_rule(id, f, &found.rule),
            None => self.invert_body(f),
        };
        self.in_progress.remove(&id);
        let (inv, pgf) = result?;
        let inv = self.add(inv)?;
        let pgf = match pgf {
            Ok(pgf) => Ok(self.add(pgf)?),
            Err(why) => Err(why),
        };
        self.done.insert(id, (inv, pgf.clone()));
        Ok((inv, pgf))
    }

    fn add(&mut self, f: Function) -> Result<FuncId, Error> {
        let name = f.name.clone();
        self.out
            .add(f)
            .map_err(|_| Error::Internal(format!("`{name}` is generated twice")))
    }

    fn unsupported(f: &Function, reason: &str, span: Span) -> Error {
        Error::Unsupported {
            function: f.name.clone(),
            reason: reason.to_string(),
            span,
        }
    }

    /// The two functions being generated for `f`, with empty entry blocks.
    fn new_pair(f: &Function) -> Pair {
        let of = f.name.clone();
        let mut inv = Function::new(
            FuncKind::GeneratedInverse { of: of.clone() }.symbol(&of),
            FuncKind::GeneratedInverse { of: of.clone() },
            Signature {
                params: f.sig.returns.clone(),
                returns: f.sig.params.clone(),
            },
        );
        inv.span = f.span;
        inv.param_names = match f.sig.returns.len() {
            1 => vec!["y".to_string()],
            n => (0..n).map(|i| format!("y{i}")).collect(),
        };
        let inv_block = inv.create_entry();
        let mut pgf = Function::new(
            FuncKind::GeneratedPgf { of: of.clone() }.symbol(&of),
            FuncKind::GeneratedPgf { of },
            Signature {
                params: f.sig.params.clone(),
                returns: Vec::new(),
            },
        );
        pgf.span = f.span;
        pgf.param_names = f.param_names.clone();
        let pgf_block = pgf.create_entry();
        Pair {
            known: HashMap::new(),
            fwd: HashMap::new(),
            consts: HashMap::new(),
            no_pgf: None,
            computed: HashSet::new(),
            inv_block,
            pgf_block,
            inv,
            pgf,
        }
    }

    /// Ends both functions: the inverse returns `results`, the PGF returns nothing.
    fn finish_pair(
        pair: Pair,
        results: Vec<Value>,
        span: Span,
    ) -> (Function, Result<Function, String>) {
        let Pair {
            mut inv,
            inv_block,
            mut pgf,
            pgf_block,
            no_pgf,
            ..
        } = pair;
        inv.ins_return(inv_block, results, span);
        inv.remove_unreachable_blocks();
        let pgf = match no_pgf {
            None => {
                pgf.ins_return(pgf_block, Vec::new(), span);
                pgf.remove_unreachable_blocks();
                Ok(pgf)
            }
            Some(why) => Err(why),
        };
        (inv, pgf)
    }

    /// The inverse and PGF of `f` made from a rule for `f` itself: the inverse applies the rule
    /// to its outputs; the PGF runs `f` forward and records the rule's θ.
    fn wrap_rule(
        &mut self,
        id: FuncId,
        f: &Function,
        rule: &std::sync::Arc<dyn pinv_primitives::InverseRule>,
    ) -> Result<(Function, Result<Function, String>), Error> {
        let mut pair = Self::new_pair(f);
        let outputs = pair.inv.blocks[pair.inv_block].params.clone();
        let inputs = pair.pgf.blocks[pair.pgf_block].params.clone();
        let forward_outputs =
            pair.pgf
                .ins_call(pair.pgf_block, id, inputs.clone(), &f.sig.returns, f.span);
        let args = vec![Arg::Unknown; inputs.len()];
        let pattern = Pattern::all_unknown(inputs.len());
        let (solved, pgf) = pair
            .emit(self.options, f.span, &f.name, Some(&self.out), |ie, pe| {
                let solved = rule.emit_inverse(ie, &outputs, &args)?;
                let pgf = rule.emit_pgf(pe, &forward_outputs, &inputs, &pattern);
                Ok((solved, pgf))
            })
            .map_err(|e| rule_error(f, e))?;
        match pgf {
            Ok(()) => {}
            Err(pinv_primitives::RuleError::NoPgf(why)) => pair.no_pgf = Some(why),
            Err(e) => return Err(rule_error(f, e)),
        }
        Ok(Self::finish_pair(pair, solved, f.span))
    }

    fn invert_body(&mut self, f: &Function) -> Result<(Function, Result<Function, String>), Error> {
        let Some(entry) = f.entry() else {
            return Err(Self::unsupported(f, "it has no body", f.span));
        };
        if f.layout.len() > 1 {
            return Err(Self::unsupported(
                f,
                "branches and loops cannot be inverted yet",
                f.span,
            ));
        }
        let insts = &f.blocks[entry].insts;
        let Some((&term, body)) = insts.split_last() else {
            return Err(Self::unsupported(f, "its body is empty", f.span));
        };
        let InstKind::Return { args: returned } = &f.insts[term].kind else {
            return Err(Self::unsupported(
                f,
                "it always fails, so nothing is in its image",
                f.insts[term].span,
            ));
        };

        let mut pair = Self::new_pair(f);
        let (inv_block, pgf_block) = (pair.inv_block, pair.pgf_block);

        // The PGF recomputes every forward value first.
        let pgf_params = pair.pgf.blocks[pgf_block].params.clone();
        for (&p, &q) in f.blocks[entry].params.iter().zip(&pgf_params) {
            pair.fwd.insert(p, q);
        }
        for &inst in body {
            self.copy_forward(f, inst, &mut pair)?;
        }

        // The outputs are known.
        let outputs = pair.inv.blocks[inv_block].params.clone();
        for (&r, &y) in returned.iter().zip(&outputs) {
            let span = f.insts[term].span;
            self.solve(
                f,
                &mut pair,
                r,
                y,
                span,
                "the function returns one value twice",
            )?;
        }

        self.propagate_forward(f, body, &mut pair)?;
        for &inst in body.iter().rev() {
            if pair.computed.contains(&inst) {
                continue;
            }
            self.invert_inst(f, inst, &mut pair)?;
            self.propagate_forward(f, body, &mut pair)?;
        }

        // Inputs no output depends on are free: θ over their whole type.
        let mut results = Vec::with_capacity(f.sig.params.len());
        for (i, &p) in f.blocks[entry].params.iter().enumerate() {
            let value = match pair.known.get(&p) {
                Some(&v) => v,
                None => {
                    let name = f.param_names.get(i).cloned().unwrap_or_default();
                    let role = format!("input `{name}`, which no output depends on");
                    let ty = f.value_type(p);
                    let fv = pair_fwd(&pair.fwd, p)?;
                    pair.emit(self.options, f.span, "", None, |ie, pe| {
                        let v = ie.theta(Domain::all(ty), &role)?;
                        pe.record(fv, &role)?;
                        Ok(v)
                    })
                    .map_err(|e| rule_error(f, e))?
                }
            };
            results.push(value);
        }
        Ok(Self::finish_pair(pair, results, f.span))
    }

    /// Copies a forward instruction into the PGF (which recomputes every forward value).
    fn copy_forward(&mut self, f: &Function, inst: Inst, pair: &mut Pair) -> Result<(), Error> {
        let data = &f.insts[inst];
        let mut kind = data.kind.clone();
        if kind.is_theta_related() || kind.is_terminator() {
            return Err(Self::unsupported(
                f,
                "it contains inverse-only instructions",
                data.span,
            ));
        }
        let mut missing = None;
        kind.map_args(|v| match pair.fwd.get(&v) {
            Some(&w) => w,
            None => {
                missing = Some(v);
                v
            }
        });
        if let Some(v) = missing {
            return Err(Error::Internal(format!("{v} is used before it is defined")));
        }
        let types: Vec<_> = data.results.iter().map(|&r| f.value_type(r)).collect();
        let new = pair
            .pgf
            .append_inst(pair.pgf_block, kind, &types, data.span);
        let new_results = pair.pgf.insts[new].results.clone();
        for (&r, n) in data.results.iter().zip(new_results) {
            pair.fwd.insert(r, n);
        }
        Ok(())
    }

    /// Records that forward value `v` is `solved` in the inverse; if it was already solved (fan-out),
    /// checks that both agree instead.
    fn solve(
        &mut self,
        f: &Function,
        pair: &mut Pair,
        v: Value,
        solved: Value,
        span: Span,
        reason: &str,
    ) -> Result<(), Error> {
        if pair.consts.get(&v) == Some(&solved) {
            // A constant operand, handed back as given: nothing was solved.
            return Ok(());
        }
        match pair.known.get(&v) {
            None => {
                pair.known.insert(v, solved);
                Ok(())
            }
            Some(&earlier) if earlier == solved => Ok(()),
            Some(&earlier) => pair
                .emit(self.options, span, "", None, |ie, _| {
                    ie.check_equal(solved, earlier, reason)
                })
                .map_err(|e| rule_error(f, e)),
        }
    }

    /// The operand as the rule sees it: a constant or a solved value is known.
    fn operand(&self, f: &Function, pair: &mut Pair, v: Value) -> Arg {
        if let Some(&k) = pair.known.get(&v) {
            return Arg::Known(k);
        }
        if let ValueDef::Result(def, _) = f.values[v].def {
            if let InstKind::Const(c) = f.insts[def].kind {
                let k = *pair
                    .consts
                    .entry(v)
                    .or_insert_with(|| pair.inv.ins_const(pair.inv_block, c, f.insts[def].span));
                return Arg::Known(k);
            }
        }
        Arg::Unknown
    }

    /// Computes forward, in the inverse, every pure instruction whose operands are all known and
    /// whose results are not: `exp(v)` once `v` is known needs no inverting (and no θ). Results
    /// that were already known are checked against the computed ones.
    fn propagate_forward(
        &mut self,
        f: &Function,
        body: &[Inst],
        pair: &mut Pair,
    ) -> Result<(), Error> {
        for &inst in body {
            let data = &f.insts[inst];
            if pair.computed.contains(&inst)
                || data.results.iter().all(|r| pair.known.contains_key(r))
                || !matches!(data.kind, InstKind::Prim { .. } | InstKind::Call { .. })
            {
                continue;
            }
            let operands: Vec<Arg> = data
                .kind
                .args()
                .into_iter()
                .map(|a| self.operand(f, pair, a))
                .collect();
            let Some(known) = operands
                .iter()
                .map(Arg::known)
                .collect::<Option<Vec<Value>>>()
            else {
                continue;
            };
            let span = data.span;
            let mut kind = data.kind.clone();
            let mut it = known.iter();
            kind.map_args(|v| *it.next().unwrap_or(&v));
            if let InstKind::Prim {
                op: op @ (Opcode::Idiv | Opcode::Irem),
                args,
            } = &kind
            {
                // Only a y outside the image can make these trap here: a domain error, not a crash.
                let (a, b) = (args[0], args[1]);
                let op = *op;
                pair.emit(self.options, span, "", None, |ie, _| {
                    let zero = ie.i64(0);
                    let nonzero = ie.prim(Opcode::Ine, &[b, zero]);
                    let min = ie.i64(i64::MIN);
                    let minus_one = ie.i64(-1);
                    let a_min = ie.prim(Opcode::Ieq, &[a, min]);
                    let b_m1 = ie.prim(Opcode::Ieq, &[b, minus_one]);
                    let overflow = ie.prim(Opcode::Band, &[a_min, b_m1]);
                    let no_overflow = ie.prim(Opcode::Bnot, &[overflow]);
                    let ok = ie.prim(Opcode::Band, &[nonzero, no_overflow]);
                    ie.check(
                        ok,
                        &format!("y is not in the image: {op} by zero or overflow"),
                    )
                })
                .map_err(|e| rule_error(f, e))?;
            }
            let types: Vec<_> = data.results.iter().map(|&r| f.value_type(r)).collect();
            let new = pair.inv.append_inst(pair.inv_block, kind, &types, span);
            let values = pair.inv.insts[new].results.clone();
            for (&r, v) in data.results.iter().zip(values) {
                self.solve(
                    f,
                    pair,
                    r,
                    v,
                    span,
                    "a known output disagrees with the value computed from known inputs",
                )?;
            }
            pair.computed.insert(inst);
        }
        Ok(())
    }

    fn invert_inst(&mut self, f: &Function, inst: Inst, pair: &mut Pair) -> Result<(), Error> {
        let data = &f.insts[inst];
        let span = data.span;
        if data.results.iter().all(|r| !pair.known.contains_key(r)) {
            // No output depends on this instruction.
            return Ok(());
        }
        match &data.kind {
            InstKind::Const(c) => {
                let r = data.results[0];
                let y = pair.known[&r];
                pair.emit(self.options, span, "", None, |ie, _| {
                    let k = ie.konst(*c);
                    ie.check_equal(y, k, &format!("this output is always {c}"))
                })
                .map_err(|e| rule_error(f, e))
            }
            InstKind::Prim { op, args } => {
                let callee = Callee::Prim(*op);
                self.apply_rule(f, pair, &callee, op.name(), &data.results, args, span)
            }
            InstKind::Call { callee, args } => {
                self.invert_call(f, pair, *callee, &data.results, args, span)
            }
            _ => Err(Self::unsupported(
                f,
                "it contains an instruction that forward code never has",
                span,
            )),
        }
    }

    /// Inverts one instruction with the rule the stack finds; `Ok(false)` if there is none.
    #[allow(clippy::too_many_arguments)]
    fn try_rule(
        &mut self,
        f: &Function,
        pair: &mut Pair,
        callee: &Callee,
        prefix: &str,
        results: &[Value],
        args: &[Value],
        span: Span,
    ) -> Result<bool, Error> {
        let mut operands: Vec<Arg> = Vec::with_capacity(args.len());
        for &a in args {
            operands.push(self.operand(f, pair, a));
        }
        let pattern = Pattern::of(&operands);
        let lookup = self.stack.lookup(callee, &pattern);
        self.consulted.extend(lookup.consulted.iter().copied());
        let Some(found) = lookup.found else {
            return Ok(false);
        };
        let rule = found.rule;
        let outputs = self.outputs(f, pair, results, span, prefix)?;
        let fwd_outputs: Vec<Value> = results
            .iter()
            .map(|&r| pair_fwd(&pair.fwd, r))
            .collect::<Result<_, _>>()?;
        let fwd_args: Vec<Value> = args
            .iter()
            .map(|&a| pair_fwd(&pair.fwd, a))
            .collect::<Result<_, _>>()?;
        let no_pgf = pair.no_pgf.is_some();
        let (solved, pgf) = pair
            .emit(self.options, span, prefix, Some(&self.out), |ie, pe| {
                let solved = rule.emit_inverse(ie, &outputs, &operands)?;
                let pgf = if no_pgf {
                    Ok(())
                } else {
                    rule.emit_pgf(pe, &fwd_outputs, &fwd_args, &pattern)
                };
                Ok((solved, pgf))
            })
            .map_err(|e| rule_error(f, e))?;
        match pgf {
            Ok(()) => {}
            Err(pinv_primitives::RuleError::NoPgf(why)) => pair.no_pgf = Some(why),
            Err(e) => return Err(rule_error(f, e)),
        }
        if solved.len() != args.len() {
            return Err(Error::Internal(format!(
                "the rule `{}` for {callee} gave {} values for {} operands",
                rule.name(),
                solved.len(),
                args.len()
            )));
        }
        for (&a, s) in args.iter().zip(solved) {
            self.solve(
                f,
                pair,
                a,
                s,
                span,
                "a value used twice gets two different solutions",
            )?;
        }
        Ok(true)
    }

    #[allow(clippy::too_many_arguments)]
    fn apply_rule(
        &mut self,
        f: &Function,
        pair: &mut Pair,
        callee: &Callee,
        prefix: &str,
        results: &[Value],
        args: &[Value],
        span: Span,
    ) -> Result<(), Error> {
        if self.try_rule(f, pair, callee, prefix, results, args, span)? {
            return Ok(());
        }
        let operands: Vec<Arg> = args.iter().map(|&a| self.operand(f, pair, a)).collect();
        Err(Error::NoRule {
            function: f.name.clone(),
            callee: callee.to_string(),
            pattern: Pattern::of(&operands).to_string(),
            span,
        })
    }

    /// The solved values of an instruction's results; a result no output depends on is free, so
    /// it is read from θ (and the PGF records its forward value).
    fn outputs(
        &mut self,
        f: &Function,
        pair: &mut Pair,
        results: &[Value],
        span: Span,
        prefix: &str,
    ) -> Result<Vec<Value>, Error> {
        let mut out = Vec::with_capacity(results.len());
        for (i, &r) in results.iter().enumerate() {
            match pair.known.get(&r) {
                Some(&v) => out.push(v),
                None => {
                    let role = format!("result {i}, which no output depends on");
                    let fv = pair_fwd(&pair.fwd, r)?;
                    let ty = f.value_type(r);
                    let v = pair
                        .emit(self.options, span, prefix, None, |ie, pe| {
                            let v = ie.theta(Domain::all(ty), &role)?;
                            pe.record(fv, &role)?;
                            Ok(v)
                        })
                        .map_err(|e| rule_error(f, e))?;
                    pair.known.insert(r, v);
                    out.push(v);
                }
            }
        }
        Ok(out)
    }

    fn invert_call(
        &mut self,
        f: &Function,
        pair: &mut Pair,
        callee: FuncId,
        results: &[Value],
        args: &[Value],
        span: Span,
    ) -> Result<(), Error> {
        let target = &self.forward.functions[callee];
        let name = target.name.clone();
        if self.try_rule(
            f,
            pair,
            &Callee::Function(name.clone()),
            &name,
            results,
            args,
            span,
        )? {
            return Ok(());
        }
        if target.kind != FuncKind::Fn {
            return Err(Self::unsupported(
                f,
                &format!("`{name}` is not an ordinary function and has no inverse rule"),
                span,
            ));
        }
        let (inv_id, pgf_id) = self.invert(callee)?;
        if let Err(why) = &pgf_id {
            pair.no_pgf.get_or_insert_with(|| why.clone());
        }
        let outputs = self.outputs(f, pair, results, span, &name)?;
        let inv_sig = self.out.functions[inv_id].sig.clone();
        let solved = pair
            .inv
            .ins_call(pair.inv_block, inv_id, outputs, &inv_sig.returns, span);
        let fwd_args: Vec<Value> = args
            .iter()
            .map(|&a| pair_fwd(&pair.fwd, a))
            .collect::<Result<_, _>>()?;
        if let Ok(pgf_id) = pgf_id {
            pair.pgf
                .ins_call(pair.pgf_block, pgf_id, fwd_args, &[], span);
        }
        for (&a, s) in args.iter().zip(solved) {
            // A known operand (constant or solved elsewhere) is checked against the callee's answer.
            let arg = self.operand(f, pair, a);
            match arg {
                Arg::Known(k) => {
                    let reason = format!(
                        "the inverse of `{name}` gave an input that disagrees with a known one"
                    );
                    pair.emit(self.options, span, "", None, |ie, _| {
                        ie.check_equal(s, k, &reason)
                    })
                    .map_err(|e| rule_error(f, e))?;
                }
                Arg::Unknown => self.solve(
                    f,
                    pair,
                    a,
                    s,
                    span,
                    "a value used twice gets two different solutions",
                )?,
            }
        }
        Ok(())
    }
}

impl Pair {
    /// Runs `body` with emitters for the inverse and the PGF at their current blocks, and
    /// continues both where the emitters left off.
    fn emit<R>(
        &mut self,
        options: &ReorientOptions,
        span: Span,
        prefix: &str,
        module: Option<&Module>,
        body: impl FnOnce(&mut Emitter<'_>, &mut Emitter<'_>) -> R,
    ) -> R {
        let mut ie = Emitter::new(&mut self.inv, self.inv_block, Mode::Inverse, span)
            .with_role_prefix(prefix)
            .with_options(options.emit);
        let mut pe = Emitter::new(&mut self.pgf, self.pgf_block, Mode::Pgf, span)
            .with_role_prefix(prefix)
            .with_options(options.emit);
        if let Some(module) = module {
            ie = ie.with_module(module);
            pe = pe.with_module(module);
        }
        let result = body(&mut ie, &mut pe);
        let (inv_block, pgf_block) = (ie.block(), pe.block());
        self.inv_block = inv_block;
        self.pgf_block = pgf_block;
        result
    }
}

fn pair_fwd(fwd: &HashMap<Value, Value>, v: Value) -> Result<Value, Error> {
    fwd.get(&v)
        .copied()
        .ok_or_else(|| Error::Internal(format!("no forward value for {v}")))
}

fn rule_error(f: &Function, e: pinv_primitives::RuleError) -> Error {
    Error::Internal(format!("a rule failed while inverting `{}`: {e}", f.name))
}
