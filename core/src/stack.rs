//! Stack growth for the compiler's recursive passes.
//!
//! Some passes recurse along the structure of the program: the reorientation inverts a callee
//! before its caller, so a chain of 10,000 calls is 10,000 nested inversions. Rather than
//! bound every such program by the size of the thread's stack (8 MiB on the main thread, 2 MiB
//! on others, and a crash past it), each level of such recursion calls
//! [`ensure_sufficient_stack`], which continues on a new stack segment allocated on the heap
//! when little is left, as rustc does. The depth is then bounded by the passes' own limits
//! (which report an error with the place in the source), never by a stack overflow.

/// Room left below which a new segment is allocated.
const RED_ZONE: usize = 256 * 1024;

/// The size of each new segment.
const SEGMENT: usize = 4 * 1024 * 1024;

/// Runs `f`, on a new stack segment if the current one has less than `RED_ZONE` left.
#[inline]
pub fn ensure_sufficient_stack<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(RED_ZONE, SEGMENT, f)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn depth(n: u64) -> u64 {
        // A frame that would overflow a 2 MiB stack at n = 100,000 without growth.
        let pad = std::hint::black_box([0u8; 64]);
        if n == 0 {
            u64::from(pad[0])
        } else {
            ensure_sufficient_stack(|| depth(n - 1)) + 1
        }
    }

    #[test]
    fn deep_recursion_grows_the_stack_instead_of_overflowing() {
        let handle = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(|| depth(100_000))
            .expect("spawns");
        assert_eq!(handle.join().expect("no overflow"), 100_000);
    }
}
