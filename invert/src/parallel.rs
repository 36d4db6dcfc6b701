//! Work split over threads with results that do not depend on how many: numbered chunks,
//! made on any thread, used in order on the calling thread.
//!
//! `sample`, `plot` and `check` draw θ (and inputs) from seeded generators. To give the same
//! answer on 1 thread as on 64, the work is cut into chunks whose content depends only on their
//! number (each chunk seeds its own generator from the user's seed and its number, see
//! [`chunk_seed`]); [`ordered`] makes chunks on worker threads and hands them to the caller in
//! number order, and the caller decides when it has enough. Chunks made past that point are
//! dropped: they cost time, never a different answer.
//!
//! Invariants: `consume` sees chunks 0, 1, 2, … with none skipped, on the calling thread; at
//! most `jobs + LOOKAHEAD_PER_JOB · jobs` chunks are held at once (made and not yet used), so
//! memory is bounded whatever the count; a panic in `produce` is re-raised on the calling
//! thread.

use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::{Condvar, Mutex};

/// The stack of each worker thread: the main thread's (8 MiB on Linux), not a spawned thread's
/// default of 2 MiB. The limits on how deep a program may nest, and the native stack a
/// recursive inverse may use, are measured on the main thread.
pub const WORKER_STACK: usize = 8 << 20;

/// How many chunks each worker may make ahead of the one being used.
const LOOKAHEAD_PER_JOB: usize = 2;

/// One thread per core (1 where that cannot be told).
pub fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The seed of chunk `k` of work seeded with `seed`: chunk 0 keeps `seed` itself (so work
/// that fits one chunk gives what it gave before it was cut), the others a SplitMix64 mix
/// of both.
pub fn chunk_seed(seed: u64, k: usize) -> u64 {
    if k == 0 {
        return seed;
    }
    let mut z = seed ^ (k as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Makes chunks `0..chunks` with `produce` on `jobs` threads and gives each to `consume`, in
/// order, on this thread, until `consume` breaks or the chunks run out. With `jobs <= 1`
/// everything runs on this thread, one chunk at a time.
///
/// ```
/// use std::ops::ControlFlow;
/// // Sums of squares of 0..1000 in chunks of 100, stopping once the total passes 10^7:
/// // the same chunks are used whatever the number of threads.
/// let run = |jobs| {
///     let mut used = vec![];
///     pinv::parallel::ordered(jobs, 10, |k| (k * 100..k * 100 + 100).map(|i| i * i).sum::<usize>(), |k, sum| {
///         used.push((k, sum));
///         if used.iter().map(|u| u.1).sum::<usize>() > 10_000_000 { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
///     });
///     used
/// };
/// assert_eq!(run(1), run(4));
/// assert_eq!(run(1).len(), 4);
/// ```
pub fn ordered<T: Send>(
    jobs: usize,
    chunks: usize,
    produce: impl Fn(usize) -> T + Sync,
    mut consume: impl FnMut(usize, T) -> ControlFlow<()>,
) {
    if jobs <= 1 || chunks <= 1 {
        for k in 0..chunks {
            if consume(k, produce(k)).is_break() {
                return;
            }
        }
        return;
    }
    let shared = Shared {
        state: Mutex::new(State {
            next: 0,
            used: 0,
            stop: false,
            made: BTreeMap::new(),
            panic: None,
        }),
        changed: Condvar::new(),
    };
    let lookahead = jobs.saturating_mul(LOOKAHEAD_PER_JOB + 1);
    std::thread::scope(|s| {
        // This thread is one of the `jobs`: it makes chunks too while it waits for the next.
        for _ in 1..jobs.min(chunks) {
            // A thread that cannot be had leaves its share to the others.
            let _ = std::thread::Builder::new()
                .stack_size(WORKER_STACK)
                .spawn_scoped(s, || shared.work(chunks, lookahead, &produce));
        }
        for k in 0..chunks {
            let Some(chunk) = shared.take(k, chunks, lookahead, &produce) else {
                break;
            };
            if consume(k, chunk).is_break() {
                break;
            }
        }
        if let Some(payload) = shared.stop() {
            resume_unwind(payload);
        }
    });
}

struct Shared<T> {
    state: Mutex<State<T>>,
    changed: Condvar,
}

struct State<T> {
    /// The next chunk to make.
    next: usize,
    /// The next chunk to use (the ones before it were handed out).
    used: usize,
    /// No more chunks are wanted.
    stop: bool,
    /// Chunks made and not yet used.
    made: BTreeMap<usize, T>,
    /// A panic in `produce`, to re-raise on the calling thread.
    panic: Option<Box<dyn std::any::Any + Send>>,
}

impl<T> Shared<T> {
    fn lock(&self) -> std::sync::MutexGuard<'_, State<T>> {
        // A poisoned lock means a panic while holding it, which `work` never does (`produce`
        // runs unlocked, under `catch_unwind`): the state is still whole.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn wait<'a>(
        &self,
        guard: std::sync::MutexGuard<'a, State<T>>,
    ) -> std::sync::MutexGuard<'a, State<T>> {
        self.changed
            .wait(guard)
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Makes chunk `k`, unlocked, and files it (or the panic it raised).
    fn make(&self, k: usize, produce: &(impl Fn(usize) -> T + Sync)) {
        let made = catch_unwind(AssertUnwindSafe(|| produce(k)));
        let mut state = self.lock();
        match made {
            Ok(chunk) => {
                state.made.insert(k, chunk);
            }
            Err(payload) => {
                state.panic.get_or_insert(payload);
                state.stop = true;
            }
        }
        self.changed.notify_all();
    }

    /// A worker: makes the next chunk not yet taken, while it is within the lookahead.
    fn work(&self, chunks: usize, lookahead: usize, produce: &(impl Fn(usize) -> T + Sync)) {
        loop {
            let k = {
                let mut state = self.lock();
                while !state.stop && state.next < chunks && state.next >= state.used + lookahead {
                    state = self.wait(state);
                }
                if state.stop || state.next >= chunks {
                    break;
                }
                state.next += 1;
                state.next - 1
            };
            self.make(k, produce);
        }
    }

    /// Chunk `k`, once made, making chunks itself while it waits (so it works alone when no
    /// worker could be started); `None` if making a chunk panicked.
    fn take(
        &self,
        k: usize,
        chunks: usize,
        lookahead: usize,
        produce: &(impl Fn(usize) -> T + Sync),
    ) -> Option<T> {
        let mut state = self.lock();
        loop {
            if state.panic.is_some() {
                return None;
            }
            if let Some(chunk) = state.made.remove(&k) {
                state.used = k + 1;
                self.changed.notify_all();
                return Some(chunk);
            }
            // Chunks `next` and on are not taken: make the next one (`k` itself, if no one
            // took it yet). Chunks before `next` that are not made are being made.
            if state.next < chunks && state.next < k + lookahead {
                let next = state.next;
                state.next += 1;
                drop(state);
                self.make(next, produce);
                state = self.lock();
            } else {
                state = self.wait(state);
            }
        }
    }

    /// Tells the workers to stop; the panic one had, if any.
    fn stop(&self) -> Option<Box<dyn std::any::Any + Send>> {
        let mut state = self.lock();
        state.stop = true;
        self.changed.notify_all();
        state.panic.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_come_in_order_whatever_the_threads_and_a_break_stops_them() {
        for jobs in [1, 2, 3, 8] {
            let mut seen = vec![];
            ordered(
                jobs,
                1000,
                |k| {
                    // Uneven work, so later chunks are often made first.
                    std::thread::sleep(std::time::Duration::from_micros((k % 7) as u64 * 50));
                    k * 3
                },
                |k, v| {
                    seen.push((k, v));
                    if k == 40 {
                        ControlFlow::Break(())
                    } else {
                        ControlFlow::Continue(())
                    }
                },
            );
            let want: Vec<_> = (0..=40).map(|k| (k, k * 3)).collect();
            assert_eq!(seen, want, "jobs = {jobs}");
        }
    }

    #[test]
    fn every_chunk_is_used_when_nothing_breaks() {
        let mut n = 0;
        ordered(
            4,
            37,
            |k| k,
            |k, v| {
                assert_eq!(k, v);
                n += 1;
                ControlFlow::Continue(())
            },
        );
        assert_eq!(n, 37);
    }

    #[test]
    fn a_panic_while_making_a_chunk_reaches_the_caller() {
        let caught = catch_unwind(|| {
            ordered(
                2,
                100,
                |k| {
                    assert!(k != 5, "chunk five");
                    k
                },
                |_, _| ControlFlow::Continue(()),
            )
        });
        assert!(caught.is_err());
    }

    #[test]
    fn chunk_zero_keeps_the_seed_and_the_others_differ() {
        assert_eq!(chunk_seed(7, 0), 7);
        let seeds: std::collections::HashSet<u64> = (0..1000).map(|k| chunk_seed(7, k)).collect();
        assert_eq!(seeds.len(), 1000);
    }
}
