//! The isolation pass's configuration and reports.

use super::cost::Cost;
use super::rules::Family;
use crate::solve::plan::Simulation;
use serde::Serialize;
use std::fmt;
use std::time::Duration;

/// How isolation runs: limits of each e-graph run, of the whole pass per function, the rule
/// families, and the numeric check. Builder style:
///
/// ```
/// use pinv::egraph::IsolationConfig;
/// use std::time::Duration;
/// let config = IsolationConfig::default()
///     .with_node_limit(5_000)
///     .with_run_time_limit(Duration::from_millis(100));
/// assert!(config.enabled);
/// assert!(!IsolationConfig::disabled().enabled);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct IsolationConfig {
    /// Whether the reorientation isolates at all.
    pub enabled: bool,
    /// E-nodes per run (egg checks between rule applications, so a run can overshoot).
    pub node_limit: usize,
    /// Iterations per run.
    pub iter_limit: usize,
    /// Time per run.
    pub run_time_limit: Duration,
    /// Time for all runs on one function (every candidate choice of θ).
    pub function_time_limit: Duration,
    /// Values tried as θ (pivots), one at a time, when nothing isolates without.
    pub max_pivots: usize,
    /// The rule families (see [`super::rules`]).
    pub families: Vec<Family>,
    /// Solve one unknown that still occurs several times numerically ([`crate::solve::numeric`]).
    pub numeric: bool,
    /// Simplify the generated inverse and PGF ([`super::simplify`]).
    pub simplify: bool,
    /// Random points every extracted form is checked at.
    pub check_points: usize,
    /// Relative tolerance of that check: `|a − b| ≤ tol · max(1, |a|)`.
    pub check_tolerance: f64,
    /// Seed of the random points.
    pub seed: u64,
}

impl Default for IsolationConfig {
    fn default() -> IsolationConfig {
        IsolationConfig {
            enabled: true,
            node_limit: 10_000,
            iter_limit: 30,
            run_time_limit: Duration::from_millis(200),
            function_time_limit: Duration::from_secs(1),
            max_pivots: 8,
            families: Family::ALL.to_vec(),
            numeric: true,
            simplify: true,
            check_points: 24,
            check_tolerance: 1e-9,
            seed: 0x150_1a7e,
        }
    }
}

impl IsolationConfig {
    /// Isolation off: functions are inverted as written (fan-out becomes consistency checks).
    pub fn disabled() -> IsolationConfig {
        IsolationConfig {
            enabled: false,
            ..IsolationConfig::default()
        }
    }

    pub fn with_enabled(mut self, enabled: bool) -> Self {
        self.enabled = enabled;
        self
    }

    pub fn with_node_limit(mut self, nodes: usize) -> Self {
        self.node_limit = nodes;
        self
    }

    pub fn with_iter_limit(mut self, iterations: usize) -> Self {
        self.iter_limit = iterations;
        self
    }

    pub fn with_run_time_limit(mut self, time: Duration) -> Self {
        self.run_time_limit = time;
        self
    }

    pub fn with_function_time_limit(mut self, time: Duration) -> Self {
        self.function_time_limit = time;
        self
    }

    pub fn with_max_pivots(mut self, pivots: usize) -> Self {
        self.max_pivots = pivots;
        self
    }

    pub fn with_families(mut self, families: &[Family]) -> Self {
        self.families = families.to_vec();
        self
    }

    pub fn with_numeric(mut self, numeric: bool) -> Self {
        self.numeric = numeric;
        self
    }

    pub fn with_simplify(mut self, simplify: bool) -> Self {
        self.simplify = simplify;
        self
    }

    pub fn with_check(mut self, points: usize, tolerance: f64) -> Self {
        self.check_points = points;
        self.check_tolerance = tolerance;
        self
    }

    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }
}

/// Why one e-graph run stopped.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", content = "detail", rename_all = "snake_case")]
pub enum Stop {
    /// The early stop: the extracted form inverts without consistency checks.
    Isolated,
    /// No rule adds anything new.
    Saturated,
    IterationLimit,
    NodeLimit,
    TimeLimit,
    /// Two classes with different constants merged (rounding); the run's result is not used.
    ConstantConflict,
    Other(String),
}

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Stop::Isolated => f.write_str("isolated (early stop)"),
            Stop::Saturated => f.write_str("saturated"),
            Stop::IterationLimit => f.write_str("iteration limit"),
            Stop::NodeLimit => f.write_str("node limit"),
            Stop::TimeLimit => f.write_str("time limit"),
            Stop::ConstantConflict => f.write_str("constants merged (rounding): result dropped"),
            Stop::Other(s) => f.write_str(s),
        }
    }
}

/// One e-graph run: for one choice of pivots.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunReport {
    /// The values treated as known (θ) in this run.
    pub pivots: Vec<String>,
    pub stop: Stop,
    pub iterations: usize,
    pub nodes: usize,
    pub classes: usize,
    #[serde(serialize_with = "ser_ms")]
    pub time: Duration,
    /// The extracted form's cost.
    pub cost: Cost,
    /// The extracted form, as an s-expression (per output).
    pub extracted: Vec<String>,
    /// What the reorientation would do with the result (when it was usable).
    pub simulation: Option<Simulation>,
    /// Why the result was not used, if it was not.
    pub rejected: Option<String>,
}

/// What isolation did to one function.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", content = "reason", rename_all = "snake_case")]
pub enum Outcome {
    /// Nothing to do: the body inverts without consistency checks as written.
    NoFanOut,
    /// Rewritten, and the rewritten body inverts without consistency checks.
    Isolated,
    /// Rewritten with fewer consistency checks than before (some are left).
    Improved,
    /// Nothing found that removes a check (limits hit, or not isolatable): inverted as written.
    NotIsolated,
    /// Not attempted, and why.
    Skipped(String),
}

/// What isolation did to one function, and why.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IsolationReport {
    pub function: String,
    pub outcome: Outcome,
    /// The reorientation of the body as written, simulated.
    pub before: Simulation,
    /// … and of the rewritten body.
    pub after: Simulation,
    /// The outputs as written (s-expressions, shared parts repeated).
    pub original: Vec<String>,
    /// The outputs as rewritten.
    pub rewritten: Vec<String>,
    /// Values read from θ before the rest (chosen so that the others isolate).
    pub thetas: Vec<String>,
    /// Subterms solved numerically (one unknown left occurring several times).
    pub numeric: Vec<String>,
    /// Outputs solved jointly (planar chains, see [`crate::solve::polar`]).
    pub joint: Vec<String>,
    pub runs: Vec<RunReport>,
    #[serde(serialize_with = "ser_ms")]
    pub time: Duration,
    /// The trips of the function's loops of constant trip count, unrolled before isolation (0:
    /// nothing was unrolled; see `pinv_core::ir::unroll`).
    pub unrolled: usize,
    /// How the function's recursion was run as a loop before isolation, if it was.
    pub recursion_as_loop: Option<RecursionAsLoop>,
    /// Whether an early return that the rest of the function gives too was dropped before
    /// isolation (see `pinv_core::ir::guard_clauses`).
    pub redundant_guard_dropped: bool,
    /// How many returns copying the returning blocks entered with constants into the places
    /// that enter them added before isolation (see `pinv_core::ir::tail_dup`).
    pub tails_copied: usize,
    /// How many calls of small functions were replaced by copies of their bodies before
    /// isolation (see `pinv_core::ir::inline`).
    pub inlined: usize,
}

/// How a recursive function was rewritten as a loop before it was inverted (the user's function
/// is still what runs and is shown).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RecursionAsLoop {
    /// A counted recursion, folded from its base case up (`pinv_core::ir::counted_recursion`).
    Counted {
        /// The counter's name.
        counter: String,
    },
    /// Calls of itself whose results it returns, made jumps back to its start
    /// (`pinv_core::ir::tail_calls`).
    TailCalls,
}

impl fmt::Display for RecursionAsLoop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RecursionAsLoop::Counted { counter } => {
                write!(
                    f,
                    "its recursion on `{counter}` run as a loop from the base case"
                )
            }
            RecursionAsLoop::TailCalls => write!(f, "its tail calls of itself run as a loop"),
        }
    }
}

fn ser_ms<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64() * 1e3)
}

impl IsolationReport {
    pub fn skipped(function: &str, why: &str) -> IsolationReport {
        IsolationReport {
            function: function.to_string(),
            outcome: Outcome::Skipped(why.to_string()),
            before: Simulation::default(),
            after: Simulation::default(),
            original: Vec::new(),
            rewritten: Vec::new(),
            thetas: Vec::new(),
            numeric: Vec::new(),
            joint: Vec::new(),
            runs: Vec::new(),
            time: Duration::ZERO,
            unrolled: 0,
            tails_copied: 0,
            inlined: 0,
            recursion_as_loop: None,
            redundant_guard_dropped: false,
        }
    }

    /// Whether the function's body was replaced.
    pub fn rewritten(&self) -> bool {
        matches!(self.outcome, Outcome::Isolated | Outcome::Improved)
    }

    /// What was done, without the runs (whose iteration counts and times depend on the
    /// machine's load when a time limit is hit): the outcome, the forms, the θ read first and
    /// the numeric roots.
    pub fn summary(&self) -> String {
        let text = self.to_string();
        text.lines()
            .filter(|l| !l.trim_start().starts_with("run ("))
            .map(|l| format!("{l}\n"))
            .collect()
    }

    /// Why the last run stopped, if there was a run.
    pub fn last_stop(&self) -> Option<&Stop> {
        self.runs.last().map(|r| &r.stop)
    }
}

/// The report as `show --inverse` prints it; the alternate form (`{:#}`) adds each run's time.
impl fmt::Display for IsolationReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        let head = match &self.outcome {
            Outcome::NoFanOut => "no fan-out: inverted as written".to_string(),
            Outcome::Isolated if !self.numeric.is_empty() => {
                "isolated, with a numeric root: every unknown is solved once".to_string()
            }
            Outcome::Isolated => "isolated: every unknown is solved once".to_string(),
            Outcome::Improved => format!(
                "partly isolated: {} consistency check(s) (was {}), {} step(s) that reject some θ \
                 (was {})",
                self.after.checks, self.before.checks, self.after.bad, self.before.bad
            ),
            Outcome::NotIsolated => format!(
                "not isolated ({}): inverted as written, with {} consistency check(s) and {} \
                 step(s) that reject some θ",
                self.last_stop()
                    .map_or("no run".to_string(), |s| s.to_string()),
                self.before.checks,
                self.before.bad
            ),
            Outcome::Skipped(why) => format!("not attempted: {why}"),
        };
        writeln!(f, "`{}`: {head}", self.function)?;
        if self.inlined > 0 {
            writeln!(
                f,
                "  (its calls of small functions copied in first: {} call(s))",
                self.inlined
            )?;
        }
        if self.unrolled > 0 {
            writeln!(
                f,
                "  (its loops of constant trip count unrolled first: {} trip(s) in all)",
                self.unrolled
            )?;
        }
        if self.tails_copied > 0 {
            writeln!(
                f,
                "  (returns entered with constants copied first into each place that enters \
                 them: {} return(s) more)",
                self.tails_copied
            )?;
        }
        if self.redundant_guard_dropped {
            writeln!(
                f,
                "  (its early return, which the rest of it gives too, dropped first)"
            )?;
        }
        if let Some(how) = &self.recursion_as_loop {
            writeln!(f, "  ({how} first)")?;
        }
        if self.rewritten() {
            for (a, b) in self.original.iter().zip(&self.rewritten) {
                writeln!(f, "  {a}")?;
                writeln!(f, "  = {b}")?;
            }
            for t in &self.thetas {
                writeln!(f, "  θ first: {t}")?;
            }
            for n in &self.numeric {
                writeln!(f, "  solved numerically: {n}")?;
            }
            for j in &self.joint {
                writeln!(f, "  solved jointly: {j}")?;
            }
        }
        for r in &self.runs {
            let pivots = if r.pivots.is_empty() {
                "no θ".to_string()
            } else {
                format!("θ = {}", r.pivots.join(", "))
            };
            write!(
                f,
                "  run ({pivots}): {}, {} iterations, {} nodes",
                r.stop, r.iterations, r.nodes
            )?;
            if f.alternate() {
                write!(f, ", {:.1} ms", ms(r.time))?;
            }
            if let Some(why) = &r.rejected {
                write!(f, "; rejected: {why}")?;
            }
            writeln!(f)?;
        }
        Ok(())
    }
}
