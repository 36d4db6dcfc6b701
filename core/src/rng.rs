//! The one small random generator of the test suites, fuzzers and program generators
//! (SplitMix64): deterministic, so that a failing seed reproduces, and without a dependency.
//!
//! It is not for anything users see: θ sampling uses `rand` (`pinv::Sampler`).
//!
//! ```
//! let mut a = pinv_core::rng::Rng::new(7);
//! let mut b = pinv_core::rng::Rng::new(7);
//! assert_eq!(a.next_u64(), b.next_u64());
//! assert!(a.below(10) < 10);
//! ```

/// SplitMix64.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x5DEE_CE66_D1CE_4E5B)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (0 for `n = 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// Uniform in `0..n`, as an index (0 for `n = 0`).
    pub fn index(&mut self, n: usize) -> usize {
        self.below(n as u64) as usize
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// One of `items` (which must not be empty).
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.index(items.len())]
    }

    /// An i64 in `lo..=hi`.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        let width = (i128::from(hi) - i128::from(lo) + 1) as u128;
        if width > u128::from(u64::MAX) {
            return self.next_u64() as i64;
        }
        (i128::from(lo) + i128::from(self.below(width as u64))) as i64
    }
}

#[cfg(test)]
mod tests {
    use super::Rng;

    #[test]
    fn draws_stay_in_their_ranges() {
        let mut r = Rng::new(1);
        for _ in 0..10_000 {
            assert!(r.below(7) < 7);
            let x = r.range(-3, 3);
            assert!((-3..=3).contains(&x));
            let u = r.unit();
            assert!((0.0..1.0).contains(&u));
        }
        assert_eq!(r.below(0), 0);
        let _ = r.range(i64::MIN, i64::MAX);
    }
}
