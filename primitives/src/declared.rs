//! A module's own `inverse` and `pgf` declarations, as a layer over the standard one.
//!
//! For every function `f` with an `inverse f(...)` declaration, the layer has a rule for
//! `Callee::Function("f")` that reads one θ per `theta` parameter (from the widest domain of its
//! type), calls `%inverse:f(outputs..., θ...)`, and checks any operand that was already known
//! against what the declaration returned. Its PGF calls `%pgf:f(inputs...)` and records the
//! results; without a `pgf` declaration an inverse with θ parameters has no PGF.

use crate::emit::Emitter;
use crate::overlay::{Callee, Layer};
use crate::pattern::{Arg, Pattern};
use crate::rule::{InverseRule, RuleDoc, RuleError, ThetaDoc};
use pinv_core::ir::{Domain, FuncKind, Module, Type, Value};

/// The layer of `module`'s declarations (empty if it has none).
pub fn declared_layer(module: &Module) -> Layer {
    let mut layer = Layer::new("declarations");
    for (_, f) in module.iter() {
        let FuncKind::Inverse { of, outputs } = &f.kind else {
            continue;
        };
        let thetas: Vec<(String, Type)> = f
            .sig
            .params
            .iter()
            .enumerate()
            .skip(*outputs)
            .map(|(i, &ty)| {
                let name = f.param_names.get(i).cloned().unwrap_or_default();
                (name, ty)
            })
            .collect();
        let pgf_name = FuncKind::Pgf { of: of.clone() }.symbol(of);
        let rule = Declared {
            function: of.clone(),
            inverse: f.name.clone(),
            pgf: module.get(&pgf_name).map(|_| pgf_name),
            thetas,
            inputs: f.sig.returns.len(),
        };
        layer.add(Callee::Function(of.clone()), rule);
    }
    layer
}

/// The rule made from one `inverse` (and maybe `pgf`) declaration.
#[derive(Debug)]
pub struct Declared {
    /// The function inverted.
    pub function: String,
    /// The module-level name of the inverse declaration (`inverse:f`).
    pub inverse: String,
    /// The module-level name of the pgf declaration, if there is one.
    pub pgf: Option<String>,
    /// The θ parameters: names and types.
    pub thetas: Vec<(String, Type)>,
    /// How many inputs the function has.
    pub inputs: usize,
}

impl InverseRule for Declared {
    fn name(&self) -> &str {
        "declared"
    }

    fn covers(&self, pattern: &Pattern) -> bool {
        pattern.arity() == self.inputs
    }

    fn doc(&self, _: &Pattern) -> RuleDoc {
        RuleDoc {
            thetas: self
                .thetas
                .iter()
                .map(|(name, ty)| ThetaDoc::value(Domain::all(*ty), name))
                .collect(),
            checks: vec![
                "the declaration's own `fail`s".to_string(),
                "the function takes what it returns to y".to_string(),
                "known operands match what it returns".to_string(),
            ],
            exact: false,
            summary: format!("x = {}(y, θ)", self.inverse),
        }
    }

    fn emit_inverse(
        &self,
        e: &mut Emitter<'_>,
        outputs: &[Value],
        args: &[Arg],
    ) -> Result<Vec<Value>, RuleError> {
        let mut call_args = outputs.to_vec();
        for (name, ty) in &self.thetas {
            call_args.push(e.theta(Domain::all(*ty), name)?);
        }
        let solved = e.call(&self.inverse, &call_args)?;
        if solved.len() != args.len() {
            return Err(RuleError::Malformed(format!(
                "`{}` returns {} values for {} inputs",
                self.inverse,
                solved.len(),
                args.len()
            )));
        }
        // The declaration must give back inputs of its function's output: where it does not,
        // the declaration is wrong (for this y and θ), and the user is told so, by its name.
        let again = e.call(&self.function, &solved)?;
        for (&value, &y) in again.iter().zip(outputs) {
            e.check_equal(
                value,
                y,
                &format!(
                    "the declared `inverse {}` returned inputs that `{}` does not take to y \
                     (the declaration is wrong here)",
                    self.function, self.function
                ),
            )?;
        }
        for (arg, &value) in args.iter().zip(&solved) {
            if let Arg::Known(known) = arg {
                e.check_equal(
                    value,
                    *known,
                    &format!(
                        "`{}` gave an input that disagrees with a known one",
                        self.inverse
                    ),
                )?;
            }
        }
        Ok(args
            .iter()
            .zip(solved)
            .map(|(arg, value)| arg.known().unwrap_or(value))
            .collect())
    }

    fn emit_pgf(
        &self,
        e: &mut Emitter<'_>,
        _outputs: &[Value],
        args: &[Value],
        _pattern: &Pattern,
    ) -> Result<(), RuleError> {
        if self.thetas.is_empty() {
            return Ok(());
        }
        let Some(pgf) = &self.pgf else {
            return Err(RuleError::NoPgf(format!(
                "`{}` has θ parameters but no `pgf {}` declaration",
                self.inverse, self.function
            )));
        };
        let thetas = e.call(pgf, args)?;
        for ((name, _), value) in self.thetas.iter().zip(thetas) {
            e.record(value, name)?;
        }
        Ok(())
    }
}
