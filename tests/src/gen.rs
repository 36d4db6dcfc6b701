//! A generator of random valid `.pinv` programs: types respected, names bound before use,
//! loops bounded, so that every program it makes compiles and every run ends.
//!
//! Programs are made from a seed and are the same for the same seed on every machine. They
//! use the whole language that a user can write in a function body: `let`, `let mut` and
//! assignments (compound ones too), `if`/`else` as statements and as expressions, `for` loops
//! with small constant bounds, `while` loops counting down a bounded counter, calls of earlier
//! functions (and of primitives), tuples in results, casts, and every operator on its types.
//! Integer division and remainder may trap at run time, as users' programs may.
//!
//! ```
//! let text = pinv_tests::gen::program(7);
//! assert!(pinv::Program::parse("gen.pinv", &text).is_ok());
//! ```

use std::fmt::Write as _;

pub use pinv_core::rng::Rng;

/// The three scalar types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ty {
    F64,
    I64,
    Bool,
}

impl Ty {
    fn name(self) -> &'static str {
        match self {
            Ty::F64 => "f64",
            Ty::I64 => "i64",
            Ty::Bool => "bool",
        }
    }
}

/// A function made so far: its name, parameter types and result types.
#[derive(Clone, Debug)]
struct Sig {
    name: String,
    params: Vec<Ty>,
    results: Vec<Ty>,
}

/// A variable in scope.
#[derive(Clone, Debug)]
struct Var {
    name: String,
    ty: Ty,
    mutable: bool,
}

struct Gen<'r> {
    rng: &'r mut Rng,
    functions: Vec<Sig>,
    vars: Vec<Var>,
    fresh: usize,
    /// Loop counters in use: never assigned by the body, so every loop ends.
    counters: Vec<String>,
}

/// A random program of one to three functions, from `seed`.
pub fn program(seed: u64) -> String {
    let mut rng = Rng::new(seed);
    let n = 1 + rng.index(3);
    let mut gen = Gen {
        rng: &mut rng,
        functions: Vec::new(),
        vars: Vec::new(),
        fresh: 0,
        counters: Vec::new(),
    };
    let mut out = String::new();
    for k in 0..n {
        out.push_str(&gen.function(k));
        out.push('\n');
    }
    out
}

impl Gen<'_> {
    fn ty(&mut self) -> Ty {
        // Reals most often: they are where inversion does the most.
        *self
            .rng
            .pick(&[Ty::F64, Ty::F64, Ty::F64, Ty::I64, Ty::I64, Ty::Bool])
    }

    fn name(&mut self, prefix: &str) -> String {
        self.fresh += 1;
        format!("{prefix}{}", self.fresh)
    }

    fn function(&mut self, k: usize) -> String {
        self.vars.clear();
        self.fresh = 0;
        let arity = 1 + self.rng.index(3);
        let params: Vec<Ty> = (0..arity).map(|_| self.ty()).collect();
        let results: Vec<Ty> = if self.rng.chance(0.2) {
            vec![self.ty(), self.ty()]
        } else {
            vec![self.ty()]
        };
        let name = format!("g{k}");
        let mut text = format!("fn {name}(");
        for (i, &t) in params.iter().enumerate() {
            let p = format!("p{i}");
            if i > 0 {
                text.push_str(", ");
            }
            let _ = write!(text, "{p}: {}", t.name());
            self.vars.push(Var {
                name: p,
                ty: t,
                mutable: false,
            });
        }
        let ret = if results.len() == 1 {
            results[0].name().to_string()
        } else {
            format!(
                "({})",
                results
                    .iter()
                    .map(|t| t.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        let _ = writeln!(text, ") -> {ret} {{");
        let statements = self.rng.index(5);
        for _ in 0..statements {
            self.statement(&mut text, 1, 2);
        }
        let tail: Vec<String> = results.iter().map(|&t| self.expr(t, 3)).collect();
        if tail.len() == 1 {
            let _ = writeln!(text, "    {}", tail[0]);
        } else {
            let _ = writeln!(text, "    ({})", tail.join(", "));
        }
        text.push_str("}\n");
        self.functions.push(Sig {
            name,
            params,
            results,
        });
        text
    }

    fn indent(text: &mut String, level: usize) {
        for _ in 0..level {
            text.push_str("    ");
        }
    }

    /// One statement at `level` of indentation; `budget` bounds the nesting of blocks.
    fn statement(&mut self, text: &mut String, level: usize, budget: usize) {
        let choice = if budget == 0 {
            self.rng.index(3)
        } else {
            self.rng.index(7)
        };
        match choice {
            0 | 1 => {
                let ty = self.ty();
                let value = self.expr(ty, 3);
                let mutable = self.rng.chance(0.4);
                let name = self.name("v");
                Self::indent(text, level);
                let _ = writeln!(
                    text,
                    "let {}{name} = {value};",
                    if mutable { "mut " } else { "" }
                );
                self.vars.push(Var { name, ty, mutable });
            }
            2 => self.assignment(text, level),
            3 | 4 => {
                // if / else as a statement: assignments inside, scopes closed after.
                let cond = self.expr(Ty::Bool, 2);
                Self::indent(text, level);
                let _ = writeln!(text, "if {cond} {{");
                self.block(text, level + 1, budget - 1);
                Self::indent(text, level);
                if self.rng.chance(0.6) {
                    text.push_str("} else {\n");
                    self.block(text, level + 1, budget - 1);
                    Self::indent(text, level);
                }
                text.push_str("}\n");
            }
            5 => {
                let n = self.rng.index(5);
                let i = self.name("i");
                Self::indent(text, level);
                let _ = writeln!(text, "for {i} in 0..{n} {{");
                self.vars.push(Var {
                    name: i.clone(),
                    ty: Ty::I64,
                    mutable: false,
                });
                self.block(text, level + 1, budget - 1);
                self.vars.retain(|v| v.name != i);
                Self::indent(text, level);
                text.push_str("}\n");
            }
            _ => {
                // A counter that only the loop's last statement changes: it ends.
                let c = self.name("c");
                let n = self.rng.index(5);
                Self::indent(text, level);
                let _ = writeln!(text, "let mut {c} = {n};");
                Self::indent(text, level);
                let _ = writeln!(text, "while {c} > 0 {{");
                self.counters.push(c.clone());
                self.vars.push(Var {
                    name: c.clone(),
                    ty: Ty::I64,
                    mutable: false,
                });
                self.block(text, level + 1, budget - 1);
                Self::indent(text, level + 1);
                let _ = writeln!(text, "{c} -= 1;");
                self.counters.pop();
                self.vars.retain(|v| v.name != c);
                Self::indent(text, level);
                text.push_str("}\n");
            }
        }
    }

    /// A block's statements; the variables it binds go out of scope after it.
    fn block(&mut self, text: &mut String, level: usize, budget: usize) {
        let scope = self.vars.len();
        for _ in 0..1 + self.rng.index(3) {
            self.statement(text, level, budget);
        }
        self.vars.truncate(scope);
    }

    fn assignment(&mut self, text: &mut String, level: usize) {
        let targets: Vec<Var> = self
            .vars
            .iter()
            .filter(|v| v.mutable && !self.counters.contains(&v.name))
            .cloned()
            .collect();
        if targets.is_empty() {
            return;
        }
        let target = self.rng.pick(&targets).clone();
        let value = self.expr(target.ty, 2);
        Self::indent(text, level);
        let op = match target.ty {
            Ty::F64 => *self.rng.pick(&["=", "=", "+=", "-=", "*="]),
            Ty::I64 => *self.rng.pick(&["=", "=", "+=", "-=", "*="]),
            Ty::Bool => "=",
        };
        let _ = writeln!(text, "{} {op} {value};", target.name);
    }

    fn var_of(&mut self, ty: Ty) -> Option<String> {
        let found: Vec<&Var> = self.vars.iter().filter(|v| v.ty == ty).collect();
        if found.is_empty() {
            None
        } else {
            Some(self.rng.pick(&found).name.clone())
        }
    }

    fn literal(&mut self, ty: Ty) -> String {
        match ty {
            Ty::F64 => {
                let x = *self
                    .rng
                    .pick(&[0.0, 0.5, 1.0, 2.0, 3.0, 0.25, 1.5, 10.0, 0.1]);
                let x = if self.rng.chance(0.2) { -x } else { x };
                format!("{x:?}")
            }
            Ty::I64 => {
                let x = *self.rng.pick(&[0i64, 1, 2, 3, 5, 7, 10, 100, 255, 0xffff]);
                if self.rng.chance(0.2) {
                    format!("({})", -x)
                } else {
                    x.to_string()
                }
            }
            Ty::Bool => self.rng.pick(&["true", "false"]).to_string(),
        }
    }

    /// An expression of type `ty`, at most `depth` operators deep.
    fn expr(&mut self, ty: Ty, depth: usize) -> String {
        if depth == 0 || self.rng.chance(0.25) {
            return match self.var_of(ty) {
                Some(v) if self.rng.chance(0.8) => v,
                _ => self.literal(ty),
            };
        }
        let d = depth - 1;
        match ty {
            Ty::F64 => match self.rng.index(9) {
                0..=2 => {
                    let op = *self.rng.pick(&["+", "-", "*", "/", "+", "*"]);
                    format!("({} {op} {})", self.expr(Ty::F64, d), self.expr(Ty::F64, d))
                }
                3 => format!("(-{})", self.expr(Ty::F64, d)),
                4 => {
                    let f = *self.rng.pick(&[
                        "sin", "cos", "exp", "log", "sqrt", "abs", "atan", "tanh", "floor", "sinh",
                        "asin",
                    ]);
                    format!("{f}({})", self.expr(Ty::F64, d))
                }
                5 => {
                    let f = *self.rng.pick(&["min", "max", "atan2", "pow"]);
                    format!("{f}({}, {})", self.expr(Ty::F64, d), self.expr(Ty::F64, d))
                }
                6 => format!("({} as f64)", self.expr(Ty::I64, d)),
                7 => format!(
                    "if {} {{ {} }} else {{ {} }}",
                    self.expr(Ty::Bool, d),
                    self.expr(Ty::F64, d),
                    self.expr(Ty::F64, d)
                ),
                _ => self.call(Ty::F64, d),
            },
            Ty::I64 => match self.rng.index(9) {
                0..=2 => {
                    let op = *self
                        .rng
                        .pick(&["+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>"]);
                    format!("({} {op} {})", self.expr(Ty::I64, d), self.expr(Ty::I64, d))
                }
                3 => format!("(-{})", self.expr(Ty::I64, d)),
                4 => format!("(!{})", self.expr(Ty::I64, d)),
                5 => {
                    let f = *self.rng.pick(&["min", "max"]);
                    format!("{f}({}, {})", self.expr(Ty::I64, d), self.expr(Ty::I64, d))
                }
                6 => format!("({} as i64)", self.expr(Ty::F64, d)),
                7 => format!(
                    "if {} {{ {} }} else {{ {} }}",
                    self.expr(Ty::Bool, d),
                    self.expr(Ty::I64, d),
                    self.expr(Ty::I64, d)
                ),
                _ => self.call(Ty::I64, d),
            },
            Ty::Bool => match self.rng.index(6) {
                0 | 1 => {
                    let t = if self.rng.chance(0.6) {
                        Ty::F64
                    } else {
                        Ty::I64
                    };
                    let op = *self.rng.pick(&["<", "<=", ">", ">=", "==", "!="]);
                    format!("({} {op} {})", self.expr(t, d), self.expr(t, d))
                }
                2 => {
                    let op = *self.rng.pick(&["&&", "||", "&", "|", "^"]);
                    format!(
                        "({} {op} {})",
                        self.expr(Ty::Bool, d),
                        self.expr(Ty::Bool, d)
                    )
                }
                3 => format!("(!{})", self.expr(Ty::Bool, d)),
                4 => format!("({} as i64 > 0)", self.expr(Ty::Bool, d)),
                _ => self.call(Ty::Bool, d),
            },
        }
    }

    /// A call of an earlier function with one result of type `ty`, or another expression.
    fn call(&mut self, ty: Ty, depth: usize) -> String {
        let candidates: Vec<Sig> = self
            .functions
            .iter()
            .filter(|f| f.results == [ty])
            .cloned()
            .collect();
        if candidates.is_empty() || depth == 0 {
            return match self.var_of(ty) {
                Some(v) => v,
                None => self.literal(ty),
            };
        }
        let f = self.rng.pick(&candidates).clone();
        let args: Vec<String> = f.params.iter().map(|&t| self.expr(t, depth - 1)).collect();
        format!("{}({})", f.name, args.join(", "))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn programs_compile() {
        for seed in 0..300 {
            let text = super::program(seed);
            if let Err(e) = pinv::Program::parse("gen.pinv", &text) {
                panic!("seed {seed}: {e}\n{text}");
            }
        }
    }

    #[test]
    fn programs_are_reproducible() {
        assert_eq!(super::program(42), super::program(42));
        assert_ne!(super::program(42), super::program(43));
    }
}
