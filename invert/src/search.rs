//! Search for discrete θ: enumerate the discrete reads (choices, bools, integers) in order of
//! size, sampling only the continuous ones, until the inverse accepts.
//!
//! Random θ rarely hits the one loop count or branch that works (for a sum loop only one trip
//! count reproduces y). Search runs the inverse again and again with a *prefix* of discrete
//! values: a discrete read past the prefix stops the run and tells the search what domain comes
//! next, and the search extends the prefix with that domain's values, smallest first. Prefixes
//! are run in order of their total size (a choice k has size k, an integer its zigzag rank
//! 0, 1, −1, 2, … ↦ 0, 1, 2, 3, …, a bool false 0 and true 1), so small loop counts and early
//! alternatives come first, and the first preimage found is among the simplest.

use crate::program::Inverse;
use crate::theta::Sampler;
use pinv_core::interp::{RuntimeErrorKind, ThetaAddress, ThetaError, ThetaSource};
use pinv_core::ir::{Const, Domain};

/// Limits of a search.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SearchConfig {
    /// The most runs of the inverse.
    pub max_runs: usize,
    /// The largest total size (sum of ranks) of the discrete values tried.
    pub max_size: u64,
    /// Seed of the sampler for the continuous θ.
    pub seed: u64,
    /// Steps each run of the inverse may take (a run that takes more is not a preimage).
    pub step_limit: u64,
    /// The search gives up after this many runs stopped by the step or depth limit: θ that
    /// send the inverse round a loop without end (an f64 loop bound drawn far out) would
    /// otherwise cost a full step budget per run.
    pub max_exhausted: usize,
    /// When the search gives up, found or not (polled before every run); none by default.
    pub deadline: Option<std::time::Instant>,
}

impl Default for SearchConfig {
    fn default() -> SearchConfig {
        SearchConfig {
            max_runs: 10_000,
            max_size: u64::MAX,
            seed: 0,
            step_limit: 10_000_000,
            max_exhausted: 8,
            deadline: None,
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
    Int {
        lo: i64,
        hi: i64,
    },
    /// The words with bits only in `mask`, enumerated by the number their free bits spell.
    Bits {
        mask: u64,
    },
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
            Domain::Bits { mask } => Some(Discrete::Bits { mask }),
            _ => None,
        }
    }

    /// The value of this domain with the given size rank (smaller ranks are simpler), if any.
    fn nth(self, rank: u64) -> Option<Const> {
        match self {
            Discrete::Choice(n) => (rank < u64::from(n)).then_some(Const::I64(rank as i64)),
            Discrete::Bool => match rank {
                0 => Some(Const::Bool(false)),
                1 => Some(Const::Bool(true)),
                _ => None,
            },
            Discrete::Int { lo, hi } => {
                // Zigzag around the value nearest 0 in range, skipping values out of range.
                let center = 0i64.clamp(lo, hi);
                let below = center.abs_diff(lo);
                let above = hi.abs_diff(center);
                let both = below.min(above);
                let v = if rank <= 2 * both {
                    let offset = rank.div_ceil(2);
                    if rank % 2 == 1 {
                        center.checked_add_unsigned(offset)
                    } else {
                        center.checked_sub_unsigned(offset)
                    }
                } else if above > below {
                    center.checked_add_unsigned(rank - both)
                } else {
                    center.checked_sub_unsigned(rank - both)
                };
                v.filter(|v| (lo..=hi).contains(v)).map(Const::I64)
            }
            Discrete::Bits { mask } => {
                if mask.count_ones() < 64 && rank >> mask.count_ones() != 0 {
                    return None;
                }
                // Deposit the bits of `rank` at the free positions, lowest first.
                let (mut word, mut rest, mut r) = (0u64, mask, rank);
                while rest != 0 {
                    let low = rest & rest.wrapping_neg();
                    if r & 1 == 1 {
                        word |= low;
                    }
                    r >>= 1;
                    rest &= rest - 1;
                }
                Some(Const::I64(word as i64))
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

/// A prefix waiting to be run: its discrete values, its total size, and the domain and rank of
/// its last value (to make its next sibling).
struct Pending {
    size: u64,
    order: u64,
    values: Vec<Const>,
    last: Option<(Discrete, u64)>,
}

impl PartialEq for Pending {
    fn eq(&self, other: &Pending) -> bool {
        (self.size, self.order) == (other.size, other.order)
    }
}

impl Eq for Pending {}

impl PartialOrd for Pending {
    fn partial_cmp(&self, other: &Pending) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Pending {
    /// Reversed, so that the max-heap pops the smallest size first (oldest first on ties).
    fn cmp(&self, other: &Pending) -> std::cmp::Ordering {
        (other.size, other.order).cmp(&(self.size, self.order))
    }
}

/// Searches for a preimage of `y`. See the module docs.
///
/// Prefixes are run in order of total size (uniform-cost search), each once; a prefix that ends
/// in a value of rank r also puts its sibling of rank r + 1 in line, so infinite integer domains
/// are explored lazily. When every prefix has been run and continuous θ were sampled, the search
/// starts over with fresh samples.
impl Inverse {
    /// Searches for a preimage of y, enumerating discrete θ in order of size (see
    /// [`crate::search`]).
    pub fn search(&self, y: &[Const], config: &SearchConfig) -> crate::Result<SearchOutcome> {
        crate::program::check_values("output", self.function(), self.output_types(), y)?;
        Ok(search(self, y, config))
    }
}

pub fn search(inverse: &Inverse, y: &[Const], config: &SearchConfig) -> SearchOutcome {
    let mut sampler = Sampler::new(config.seed);
    let mut runs = 0;
    let mut exhausted = 0;
    let mut order = 0u64;
    loop {
        let mut heap = std::collections::BinaryHeap::new();
        heap.push(Pending {
            size: 0,
            order,
            values: Vec::new(),
            last: None,
        });
        let mut sampled = false;
        while let Some(p) = heap.pop() {
            let late = config
                .deadline
                .is_some_and(|at| std::time::Instant::now() >= at);
            if runs >= config.max_runs || late {
                return SearchOutcome { found: None, runs };
            }
            runs += 1;
            // The next sibling of this prefix's last value.
            if let Some((d, rank)) = p.last {
                if let Some(v) = d.nth(rank + 1) {
                    let mut values = p.values.clone();
                    values.pop();
                    values.push(v);
                    order += 1;
                    let size = p.size + 1;
                    if size <= config.max_size {
                        heap.push(Pending {
                            size,
                            order,
                            values,
                            last: Some((d, rank + 1)),
                        });
                    }
                }
            }
            let mut source = PrefixSource {
                prefix: &p.values,
                pos: 0,
                sampler: &mut sampler,
                wanted: None,
                tape: Vec::new(),
                sampled: false,
            };
            let result = inverse.call_limited(y, &mut source, config.step_limit);
            sampled |= source.sampled;
            let (wanted, tape) = (source.wanted, source.tape);
            match result {
                Ok(x) => {
                    return SearchOutcome {
                        found: Some(Found { x, theta: tape }),
                        runs,
                    }
                }
                Err(crate::Error::Runtime(e)) if matches!(&e.kind, RuntimeErrorKind::Theta(ThetaError::Other(m)) if m == NEED_MORE) => {
                    if let Some(v) = wanted.and_then(|d| d.nth(0)) {
                        let mut values = p.values.clone();
                        values.push(v);
                        order += 1;
                        heap.push(Pending {
                            size: p.size,
                            order,
                            values,
                            last: wanted.map(|d| (d, 0)),
                        });
                    }
                }
                Err(e) if e.is_limit() => {
                    exhausted += 1;
                    if exhausted >= config.max_exhausted {
                        return SearchOutcome { found: None, runs };
                    }
                }
                Err(_) => {}
            }
        }
        if !sampled {
            // Every prefix was run and nothing was sampled: there is nothing more to try.
            return SearchOutcome { found: None, runs };
        }
    }
}
