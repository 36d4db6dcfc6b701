//! Bit matrices over GF(2): the algebra behind xor, shifts, rotations and masks.
//!
//! Over GF(2) a word of `B` bits is a vector, and `x ^ y`, `x << k`, `x >> k` (logical or
//! arithmetic), rotations and `x & c` are linear maps; `!x` and `x ^ c` are affine. A value built
//! from unknown words with them is `M·x ⊕ c` for a bit matrix `M`. [`BitMatrix::reduce`] brings
//! `M` to reduced row echelon form once, when an inverse is built, and gives everything the
//! inverse and the PGF need ([`Reduced`]):
//!
//! - a **generalised inverse** `P` (`M·P·v = v` for every `v` in the image of `M`);
//! - the **free bits** `F`: the non-pivot columns, one mask per input word, and a **null-space
//!   basis** `N` in which the basis vector of free bit `f` has bit `f` set and no other free bit;
//! - an **image test** `Q`: `Q·v = 0` exactly when `v` is in the image.
//!
//! Then every solution of `M·x = v` is `x = P·v ⊕ N·θ` for exactly one `θ` with bits only in
//! `F`, and that θ is `x & F` (the free bits of x itself): the PGF is a mask. A bijection has no
//! free bits and no image test.
//!
//! Matrices are generic over the word ([`num_traits::PrimInt`]: `u64` for the language's i64,
//! and any other width a test or a later word type needs). A matrix maps `cols` input words to
//! `rows` output words and is stored by column: the column of input bit `c` (bit `c % B` of
//! word `c / B`) is its image, `rows` words.
//!
//! ```
//! use pinv::solve::gf2::BitMatrix;
//! // y = x ^ (x >> 3) on 8-bit words (logical shift): a bijection.
//! let m = BitMatrix::<u8>::from_fn(1, 1, |x| vec![x[0] ^ (x[0] >> 3)]);
//! let r = m.reduce();
//! assert_eq!((r.rank, r.free[0]), (8, 0));
//! let x = 0b1011_0110u8;
//! let y = m.apply(&[x]);
//! assert_eq!(r.inverse.apply(&y), vec![x]);
//! ```

use num_traits::PrimInt;

/// The number of bits of a word.
pub fn width<W: PrimInt>() -> usize {
    W::zero().count_zeros() as usize
}

fn bit<W: PrimInt>(w: W, i: usize) -> bool {
    (w >> i) & W::one() == W::one()
}

fn with_bit<W: PrimInt>(i: usize) -> W {
    W::one() << i
}

/// A linear map over GF(2) from `cols` words to `rows` words (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct BitMatrix<W> {
    rows: usize,
    cols: usize,
    /// `data[c * rows + i]`: word `i` of the image of input bit `c`.
    data: Vec<W>,
}

impl<W: PrimInt> BitMatrix<W> {
    /// The zero map from `cols` words to `rows` words.
    pub fn zero(rows: usize, cols: usize) -> BitMatrix<W> {
        BitMatrix {
            rows,
            cols,
            data: vec![W::zero(); rows * cols * width::<W>()],
        }
    }

    /// The identity on `n` words.
    pub fn identity(n: usize) -> BitMatrix<W> {
        let mut m = BitMatrix::zero(n, n);
        for c in 0..n * width::<W>() {
            m.set(c, c, true);
        }
        m
    }

    /// The matrix of a linear function of `cols` words (its images of the unit vectors); `f`
    /// must be linear (no constant part) for the matrix to mean it.
    pub fn from_fn(rows: usize, cols: usize, f: impl Fn(&[W]) -> Vec<W>) -> BitMatrix<W> {
        let b = width::<W>();
        let mut m = BitMatrix::zero(rows, cols);
        let mut x = vec![W::zero(); cols];
        for c in 0..cols * b {
            x[c / b] = with_bit(c % b);
            let y = f(&x);
            m.data[c * rows..(c + 1) * rows].copy_from_slice(&y[..rows]);
            x[c / b] = W::zero();
        }
        m
    }

    /// Output words.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Input words.
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// Whether input bit `c` reaches output bit `r`.
    pub fn get(&self, r: usize, c: usize) -> bool {
        let b = width::<W>();
        bit(self.data[c * self.rows + r / b], r % b)
    }

    pub fn set(&mut self, r: usize, c: usize, on: bool) {
        let b = width::<W>();
        let w = &mut self.data[c * self.rows + r / b];
        let m = with_bit::<W>(r % b);
        *w = if on { *w | m } else { *w & !m };
    }

    /// Sets the block from input word `j` to output word `i`: `cols[b]` is word `i` of the
    /// image of bit `b` of word `j`.
    pub fn set_block(&mut self, i: usize, j: usize, cols: &[W]) {
        let b = width::<W>();
        for (bit, &col) in cols.iter().enumerate().take(b) {
            self.data[(j * b + bit) * self.rows + i] = col;
        }
    }

    /// Makes input bit `c` reach nothing (an input bit known to be zero).
    pub fn clear_column(&mut self, c: usize) {
        for w in self.column_mut(c) {
            *w = W::zero();
        }
    }

    /// The image of input bit `c`.
    pub fn column(&self, c: usize) -> &[W] {
        &self.data[c * self.rows..(c + 1) * self.rows]
    }

    fn column_mut(&mut self, c: usize) -> &mut [W] {
        &mut self.data[c * self.rows..(c + 1) * self.rows]
    }

    /// `M·x`.
    pub fn apply(&self, x: &[W]) -> Vec<W> {
        let b = width::<W>();
        let mut out = vec![W::zero(); self.rows];
        for (j, &w) in x.iter().enumerate().take(self.cols) {
            let mut rest = w;
            while rest != W::zero() {
                let k = rest.trailing_zeros() as usize;
                rest = rest & (rest - W::one());
                for (o, &c) in out.iter_mut().zip(self.column(j * b + k)) {
                    *o = *o ^ c;
                }
            }
        }
        out
    }

    /// `self·other` (apply `other` first).
    pub fn compose(&self, other: &BitMatrix<W>) -> BitMatrix<W> {
        let mut m = BitMatrix::zero(self.rows, other.cols);
        for c in 0..other.cols * width::<W>() {
            let image = self.apply(other.column(c));
            m.column_mut(c).copy_from_slice(&image);
        }
        m
    }

    /// The columns of input words `words`, in that order: the map restricted to them.
    pub fn select_cols(&self, words: &[usize]) -> BitMatrix<W> {
        let b = width::<W>();
        let mut m = BitMatrix::zero(self.rows, words.len());
        for (k, &j) in words.iter().enumerate() {
            for i in 0..b {
                let col = self.column(j * b + i).to_vec();
                m.column_mut(k * b + i).copy_from_slice(&col);
            }
        }
        m
    }

    /// Whether every bit is zero.
    pub fn is_zero(&self) -> bool {
        self.data.iter().all(|&w| w == W::zero())
    }

    /// The block from input word `j` to output word `i` as diagonals: `(d, mask)` pairs such
    /// that output word `i` gets `⊕ shift(x_j, d) & mask`, where `shift(x, d)` is `x` shifted
    /// right by `d` (left by `−d` when `d < 0`; bits shifted in are masked off). Only nonzero
    /// masks are listed. A shift, a rotation or `x ^ (x >> k)` has one or two diagonals each,
    /// so the product costs a few instructions, not one per bit.
    pub fn diagonals(&self, i: usize, j: usize) -> Vec<(isize, W)> {
        let b = width::<W>() as isize;
        let mut out = Vec::new();
        for d in -(b - 1)..b {
            let mut mask = W::zero();
            for r in 0..b {
                let c = r + d;
                if (0..b).contains(&c)
                    && bit(
                        self.data[(j * b as usize + c as usize) * self.rows + i],
                        r as usize,
                    )
                {
                    mask = mask | with_bit(r as usize);
                }
            }
            if mask != W::zero() {
                out.push((d, mask));
            }
        }
        out
    }

    /// Gauss–Jordan elimination (see the module docs).
    pub fn reduce(&self) -> Reduced<W> {
        let b = width::<W>();
        let (nr, nc) = (self.rows * b, self.cols * b);
        // Row r: the coefficients of output bit r (nc bits), then the identity (nr bits).
        let words = (nc + nr).div_ceil(64);
        let mut rows: Vec<Vec<u64>> = (0..nr)
            .map(|r| {
                let mut row = vec![0u64; words];
                for c in 0..nc {
                    if self.get(r, c) {
                        row[c / 64] |= 1 << (c % 64);
                    }
                }
                row[(nc + r) / 64] |= 1 << ((nc + r) % 64);
                row
            })
            .collect();
        let has = |row: &[u64], c: usize| row[c / 64] >> (c % 64) & 1 == 1;
        let mut pivots: Vec<usize> = Vec::new();
        for c in 0..nc {
            let k = pivots.len();
            let Some(p) = (k..nr).find(|&r| has(&rows[r], c)) else {
                continue;
            };
            rows.swap(k, p);
            let pivot = rows[k].clone();
            for (r, row) in rows.iter_mut().enumerate() {
                if r != k && has(row, c) {
                    for (w, &q) in row.iter_mut().zip(&pivot) {
                        *w ^= q;
                    }
                }
            }
            pivots.push(c);
        }
        let rank = pivots.len();
        let mut inverse = BitMatrix::zero(self.cols, self.rows);
        for (k, &p) in pivots.iter().enumerate() {
            for r in 0..nr {
                if has(&rows[k], nc + r) {
                    inverse.set(p, r, true);
                }
            }
        }
        let mut null = BitMatrix::zero(self.cols, self.cols);
        let mut free = vec![W::zero(); self.cols];
        for f in (0..nc).filter(|c| !pivots.contains(c)) {
            free[f / b] = free[f / b] | with_bit(f % b);
            null.set(f, f, true);
            for (k, &p) in pivots.iter().enumerate() {
                if has(&rows[k], f) {
                    null.set(p, f, true);
                }
            }
        }
        let checks = nr - rank;
        let mut image = BitMatrix::zero(checks.div_ceil(b), self.rows);
        for t in 0..checks {
            for r in 0..nr {
                if has(&rows[rank + t], nc + r) {
                    image.set(t, r, true);
                }
            }
        }
        Reduced {
            rank,
            inverse,
            null,
            free,
            image,
        }
    }
}

/// What [`BitMatrix::reduce`] finds (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reduced<W> {
    /// The rank of the map, in bits.
    pub rank: usize,
    /// `P`: output words to input words, `M·P·v = v` for `v` in the image.
    pub inverse: BitMatrix<W>,
    /// `N`: input words to input words; `N·θ` for θ with bits only in `free` is in the kernel.
    pub null: BitMatrix<W>,
    /// Per input word, the bits a solution may choose freely.
    pub free: Vec<W>,
    /// `Q`: output words to test words; `Q·v = 0` exactly when `v` is in the image. No rows
    /// when the map is onto.
    pub image: BitMatrix<W>,
}

impl<W: PrimInt> Reduced<W> {
    /// The solution of `M·x = v` chosen by `theta` (free bits per input word), if `v` is in
    /// the image and `theta` has no bit outside the free ones.
    pub fn solve(&self, v: &[W], theta: &[W]) -> Option<Vec<W>> {
        if self.image.apply(v).iter().any(|&w| w != W::zero()) {
            return None;
        }
        if theta
            .iter()
            .zip(&self.free)
            .any(|(&t, &f)| t & !f != W::zero())
        {
            return None;
        }
        let p = self.inverse.apply(v);
        let n = self.null.apply(theta);
        Some(p.iter().zip(&n).map(|(&a, &b)| a ^ b).collect())
    }

    /// The θ that [`Reduced::solve`] turns back into `x`: its free bits.
    pub fn theta_of(&self, x: &[W]) -> Vec<W> {
        x.iter().zip(&self.free).map(|(&w, &f)| w & f).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn random_matrix<W: PrimInt>(
        rows: usize,
        cols: usize,
        seed: &[u64],
        density: u32,
    ) -> BitMatrix<W> {
        let mut m = BitMatrix::zero(rows, cols);
        let b = width::<W>();
        let mut s = seed.iter().copied().cycle();
        let mut state = s.next().unwrap_or(1) | 1;
        for r in 0..rows * b {
            for c in 0..cols * b {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                if (state % 100) < u64::from(density) {
                    m.set(r, c, true);
                }
            }
            state ^= s.next().unwrap_or(0);
        }
        m
    }

    fn check<W: PrimInt + std::fmt::Debug>(m: &BitMatrix<W>, xs: &[Vec<W>], junk: &[Vec<W>]) {
        let r = m.reduce();
        let zero = vec![W::zero(); m.cols()];
        for x in xs {
            let v = m.apply(x);
            // The image test passes on every image, and the θ of x gives x back.
            let theta = r.theta_of(x);
            assert_eq!(r.solve(&v, &theta).as_ref(), Some(x), "{m:?}");
            // Every θ gives a preimage.
            let other: Vec<W> = junk[0].iter().zip(&r.free).map(|(&j, &f)| j & f).collect();
            let y = r.solve(&v, &other).expect("in the image");
            assert_eq!(m.apply(&y), v);
            assert_eq!(m.apply(&r.null.apply(&other)), vec![W::zero(); m.rows()]);
            let _ = r.solve(&v, &zero);
        }
        for v in junk.iter().filter(|v| v.len() == m.rows()) {
            // Outside the image: no solution; inside: a solution.
            match r.solve(v, &vec![W::zero(); m.cols()]) {
                Some(x) => assert_eq!(&m.apply(&x), v),
                None => assert!(r.image.apply(v).iter().any(|&w| w != W::zero())),
            }
        }
        let b = width::<W>();
        assert_eq!(
            r.free
                .iter()
                .map(|f| f.count_ones() as usize)
                .sum::<usize>(),
            m.cols() * b - r.rank
        );
        assert_eq!(r.image.rows(), (m.rows() * b - r.rank).div_ceil(b));
    }

    #[test]
    fn shifts_rotations_and_masks() {
        let xorshift = BitMatrix::<u64>::from_fn(1, 1, |x| vec![x[0] ^ (x[0] >> 30)]);
        let r = xorshift.reduce();
        assert_eq!((r.rank, r.free[0], r.image.rows()), (64, 0, 0));
        // (I + S)⁻¹ = I + S + S² for a shift by 30: three diagonals.
        assert_eq!(r.inverse.diagonals(0, 0).len(), 3);
        let rot = BitMatrix::<u64>::from_fn(1, 1, |x| vec![x[0].rotate_left(13)]);
        assert_eq!(rot.reduce().inverse.diagonals(0, 0).len(), 2);
        let low = BitMatrix::<u64>::from_fn(1, 1, |x| vec![x[0] & 0xffff_ffff]);
        let r = low.reduce();
        assert_eq!((r.rank, r.free[0]), (32, 0xffff_ffff_0000_0000));
        assert_eq!(r.image.rows(), 1);
        assert_eq!(r.solve(&[1 << 40], &[0]), None);
        assert_eq!(r.solve(&[7], &[1 << 40]), Some(vec![(1 << 40) | 7]));
        // Two outputs of one word: the halves.
        let halves = BitMatrix::<u64>::from_fn(2, 1, |x| {
            vec![x[0] & 0xffff_ffff, (x[0] >> 32) & 0xffff_ffff]
        });
        let r = halves.reduce();
        assert_eq!((r.rank, r.free[0]), (64, 0));
        assert_eq!(r.solve(&[5, 9], &[0]), Some(vec![(9 << 32) | 5]));
        assert_eq!(r.solve(&[5, 1 << 33], &[0]), None);
    }

    proptest! {
        #[test]
        fn solutions_of_random_maps_round_trip(
            seed in proptest::collection::vec(any::<u64>(), 4),
            rows in 1usize..3,
            cols in 1usize..3,
            density in prop_oneof![Just(2u32), Just(10), Just(50)],
            xs in proptest::collection::vec(any::<u64>(), 6),
        ) {
            let m = random_matrix::<u64>(rows, cols, &seed, density);
            let pick = |k: usize, n: usize| -> Vec<u64> { (0..n).map(|i| xs[(k + i) % xs.len()]).collect() };
            let x: Vec<Vec<u64>> = (0..2).map(|k| pick(k, cols)).collect();
            let junk: Vec<Vec<u64>> = (0..2).map(|k| pick(k + 3, rows.max(cols))).map(|mut v| { v.truncate(rows); v }).collect();
            let mut junk = junk;
            junk.insert(0, pick(5, cols));
            check(&m, &x, &junk);
            // Narrow words: the same algebra.
            let m8 = random_matrix::<u8>(rows, cols, &seed, density);
            let x8: Vec<Vec<u8>> = x.iter().map(|v| v.iter().map(|&w| w as u8).collect()).collect();
            let junk8: Vec<Vec<u8>> = junk.iter().map(|v| v.iter().map(|&w| (w >> 8) as u8).collect()).collect();
            check(&m8, &x8, &junk8);
        }

        #[test]
        fn diagonals_compute_the_product(seed in proptest::collection::vec(any::<u64>(), 2), density in 1u32..60, x in any::<u64>()) {
            let m = random_matrix::<u64>(1, 1, &seed, density);
            let mut y = 0u64;
            for (d, mask) in m.diagonals(0, 0) {
                let s = if d >= 0 { x >> d } else { x << -d };
                y ^= s & mask;
            }
            prop_assert_eq!(y, m.apply(&[x])[0]);
        }
    }
}
