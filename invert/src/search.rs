//! Search for discrete θ: enumerate the discrete reads (choices, bools, integers) in order of
//! size, sampling only the continuous ones, until the inverse accepts.
//!
//! Random θ rarely hits the one loop count or branch that works (for a sum loop only one trip
//! count reproduces y). Search runs the inverse again and again with a *prefix* of discrete
//! values: a discrete read past the prefix stops the run and tells the search what domain comes
//! next, and the search extends the prefix with that domain's values, smallest first. Prefixes
//! are explored by iterative deepening on their total size (a choice k has size k, an integer its
//! zigzag rank 0, 1, −1, 2, … ↦ 0, 1, 2, 3, …, a bool false 0 and true 1), so small loop counts and
//! early alternatives come first, and the first preimage found is among the simplest.

use crate::program::Inverse;
use crate::theta::Sampler;
use pinv_core::interp::{RuntimeErrorKind, ThetaAddress, ThetaError, ThetaSource};
use pinv_core::ir::{Const, Domain};

/// Limits of a search.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SearchConfig {
    /// The most runs of the inverse.
    pub max_runs: usize,
    /// The largest total size of the discrete values tried.
    pub max_size: u64,
    /// Seed of the sampler for the continuous θ.
    pub seed: u64,
}

impl Default for SearchConfig {
    fn default() -> SearchConfig {
        SearchConfig {
            max_runs: 10_000,
            max_size: 64,
            seed: 0,
        }
    }
}

/// What a search found.
#[derive(Clone, Debug, PartialEq)]
pub struct Found {
    pub x: Vec<Const>,
    /// The whole tape the inverse read.
    pub theta: Vec<Const>,
}

/// The outcome of a search: the preimage found (if any) and how many runs it took.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchOutcome {
    pub found: Option<Found>,
    pub runs: usize,
}

/// The discrete domains the search enumerates.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Discrete {
    Choice(u32),
    Bool,
    Int { lo: i64, hi: i64 },
}

impl Discrete {
    fn of(domain: Domain) -> Option<Discrete> {
        match domain {
            Domain::Bool => Some(Discrete::Bool),
            Domain::Int => Some(Discrete::Int {
                lo: i64::MIN,
                hi: i64::MAX,
            }),
            Domain::IntRange { lo, hi } => Some(Discrete::Int { lo, hi }),
            _ => None,
        }
    }

    /// The values of this domain of size at most `budget`, smallest first, with their sizes.
    fn values(self, budget: u64) -> Vec<(Const, u64)> {
        match self {
            Discrete::Choice(n) => (0..u64::from(n).min(budget + 1))
                .map(|k| (Const::I64(k as i64), k))
                .collect(),
            Discrete::Bool => [(Const::Bool(false), 0), (Const::Bool(true), 1)]
                .into_iter()
                .filter(|&(_, s)| s <= budget)
                .collect(),
            Discrete::Int { lo, hi } => {
                // Zigzag around the value nearest 0 in range.
                let center = 0i64.clamp(lo, hi);
                let mut out = Vec::new();
                for rank in 0..=budget.min(1 << 20) {
                    let offset = rank.div_ceil(2) as i64;
                    let v = if rank % 2 == 1 {
                        center.checked_add(offset)
                    } else {
                        center.checked_sub(offset)
                    };
                    if let Some(v) = v.filter(|v| (lo..=hi).contains(v)) {
                        out.push((Const::I64(v), rank));
                    }
                }
                out
            }
        }
    }
}

/// A θ source that answers discrete reads from a prefix and samples continuous ones.
struct PrefixSource<'s> {
    prefix: &'s [Const],
    pos: usize,
    sampler: &'s mut Sampler,
    /// The domain of the first discrete read past the prefix, if the run got there.
    wanted: Option<Discrete>,
    tape: Vec<Const>,
    /// Whether any continuous θ was sampled (then running again can give something new).
    sampled: bool,
}

const NEED_MORE: &str = "search: the prefix ran out";

impl PrefixSource<'_> {
    fn discrete(&mut self, d: Discrete) -> Result<Const, ThetaError> {
        match self.prefix.get(self.pos) {
            Some(&v) => {
                self.pos += 1;
                self.tape.push(v);
                Ok(v)
            }
            None => {
                self.wanted = Some(d);
                Err(ThetaError::Other(NEED_MORE.to_string()))
            }
        }
    }
}

impl ThetaSource for PrefixSource<'_> {
    fn theta(&mut self, domain: Domain, _: &ThetaAddress<'_>) -> Result<Const, ThetaError> {
        match Discrete::of(domain) {
            Some(d) => self.discrete(d),
            None => {
                let v = self.sampler.draw(domain);
                self.sampled = true;
                self.tape.push(v);
                Ok(v)
            }
        }
    }

    fn choice(&mut self, n: u32, _: &ThetaAddress<'_>) -> Result<u32, ThetaError> {
        let v = self.discrete(Discrete::Choice(n))?;
        Ok(v.as_i64().and_then(|k| u32::try_from(k).ok()).unwrap_or(0))
    }
}

fn size(d: &[(Const, u64)]) -> u64 {
    d.iter().map(|&(_, s)| s).sum()
}

/// Searches for a preimage of `y`. See the module docs.
pub fn search(inverse: &Inverse, y: &[Const], config: &SearchConfig) -> SearchOutcome {
    let mut sampler = Sampler::new(config.seed);
    let mut runs = 0;
    // Iterative deepening on the total size of the discrete values.
    let mut budget = 0;
    while budget <= config.max_size {
        let mut stack: Vec<Vec<(Const, u64)>> = vec![Vec::new()];
        let mut grew = false;
        let mut sampled = false;
        while let Some(prefix) = stack.pop() {
            if runs >= config.max_runs {
                return SearchOutcome { found: None, runs };
            }
            runs += 1;
            let values: Vec<Const> = prefix.iter().map(|&(v, _)| v).collect();
            let mut source = PrefixSource {
                prefix: &values,
                pos: 0,
                sampler: &mut sampler,
                wanted: None,
                tape: Vec::new(),
                sampled: false,
            };
            let result = inverse.call(y, &mut source);
            let (wanted, tape) = (source.wanted, source.tape);
            sampled |= source.sampled;
            match result {
                Ok(x) => {
                    return SearchOutcome {
                        found: Some(Found { x, theta: tape }),
                        runs,
                    }
                }
                Err(crate::Error::Runtime(e)) if matches!(&e.kind, RuntimeErrorKind::Theta(ThetaError::Other(m)) if m == NEED_MORE) =>
                {
                    let Some(d) = wanted else { continue };
                    let used = size(&prefix);
                    // Push larger values first so the smallest is tried first.
                    for (v, s) in d.values(budget.saturating_sub(used)).into_iter().rev() {
                        let mut next = prefix.clone();
                        next.push((v, s));
                        stack.push(next);
                    }
                    if d.values(budget.saturating_sub(used) + 1).len()
                        > d.values(budget.saturating_sub(used)).len()
                    {
                        grew = true;
                    }
                }
                Err(_) => {}
            }
        }
        if !grew && !sampled {
            // Nothing was cut off by the budget and nothing was sampled: the whole tree has
            // been explored.
            break;
        }
        if grew {
            budget += 1;
        }
    }
    SearchOutcome { found: None, runs }
}
