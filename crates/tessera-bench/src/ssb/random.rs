//! dbgen's random-number streams as ssb-dbgen uses them.
//!
//! dbgen (TPC-H 1.x/2.x `rnd.c`, `bm_utils.c`, `permute.c`; ssb-dbgen inherits them) keeps
//! one Park–Miller "minimum standard" generator (`x' = 16807 x mod (2^31 - 1)`) per column,
//! the `Seed[]` table in `rnd.h`. Each stream has a per-row *boundary*: after every row,
//! `row_stop()` skips the stream forward so that each row consumes exactly `boundary` draws,
//! whatever it actually used. That is what makes rows independent of each other and lets a
//! table be generated in parallel chunks.
//!
//! [`Stream`] wraps `tpchgen`'s [`RowRandomInt`] (the same generator, with the same
//! per-row boundary and skip-ahead logic) and adds the helpers SSB needs:
//!
//! - [`Stream::next_int`]: dbgen's `UnifInt(lo, hi)` computed on 64-bit `long`s.
//!   ssb-dbgen builds on LP64, so the draw used by `a_rnd()` (`RANDOM(x, 0, MAX_LONG)`) has a
//!   range of 2^31 with no 32-bit overflow. (Later TPC-H dbgen versions — and hence `tpchgen`'s
//!   `RandomAlphaNumeric` — deliberately reproduces the 32-bit overflow, which yields
//!   different characters; that is why addresses are generated here and not by `tpchgen`.)
//! - [`Stream::alpha_numeric`]: `a_rnd()`, the random alphanumeric address strings.
//! - [`Stream::permutation`]: `permute()` (used by `agg_str()`) from ssb-dbgen's
//!   `permute.c` — a full random shuffle of the distribution (one draw in `[0, n-1]` per
//!   position, swapped into place) whose first entries are taken. (This is *not* the
//!   partial Fisher–Yates of later dbgen versions that `tpchgen`'s `RandomStringSequence`
//!   implements.)
//! - [`Stream::pick`]: `pick_str()`, a weighted pick from a `dists.dss` distribution
//!   (delegated to `tpchgen`, which draws identically).

use tpchgen::distribution::Distribution;
use tpchgen::random::RowRandomInt;

use super::inline_str::InlineStr;

/// dbgen's modulus `2^31 - 1` as a double (`dM` in `rnd.h`).
const MODULUS: f64 = 2_147_483_647.0;

/// dbgen's `MAX_LONG` (`0x7FFFFFFF`), the upper bound of `a_rnd()`'s character draws.
const MAX_LONG: i64 = 0x7FFF_FFFF;

/// `alpha_num[]` from `bm_utils.c`: the 64 characters `a_rnd()` picks from.
const ALPHA_NUM: &[u8; 64] = b"0123456789abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ,";

/// One column's random stream: a seed from `Seed[]` and its per-row boundary.
#[derive(Debug, Clone)]
pub(crate) struct Stream {
    rng: RowRandomInt,
}

impl Stream {
    /// A stream starting at `seed` that consumes `draws_per_row` numbers per row.
    pub(crate) fn new(seed: i64, draws_per_row: i32) -> Self {
        Self {
            rng: RowRandomInt::new(seed, draws_per_row),
        }
    }

    /// dbgen's `UnifInt(lo, hi)`: a value in `[lo, hi]`, computed as
    /// `lo + (long)((seed / 2147483647.0) * (hi - lo + 1))` with 64-bit integers.
    #[inline]
    pub(crate) fn next_int(&mut self, lo: i64, hi: i64) -> i64 {
        let seed = self.rng.next_rand();
        let range = (hi - lo + 1) as f64;
        lo + ((seed as f64 / MODULUS) * range) as i64
    }

    /// dbgen's `pick_str()`: a weighted pick from `dist`, one draw.
    #[inline]
    pub(crate) fn pick(&mut self, dist: &'static Distribution) -> &'static str {
        dist.random_value(&mut self.rng)
    }

    /// dbgen's `a_rnd(min, max)`: a length in `[min, max]`, then one draw per five
    /// characters, each character taken from the low six bits of the draw.
    pub(crate) fn alpha_numeric<const N: usize>(&mut self, min: i64, max: i64) -> InlineStr<N> {
        let len = self.next_int(min, max);
        let mut out = InlineStr::new();
        let mut char_int = 0i64;
        for i in 0..len {
            if i % 5 == 0 {
                char_int = self.next_int(0, MAX_LONG);
            }
            out.push(ALPHA_NUM[(char_int & 0x3f) as usize]);
            char_int >>= 6;
        }
        out
    }

    /// dbgen's `permute()` over `0..n` (reusing `scratch`), returning the shuffled order:
    /// for each position `i`, draw `j` in `[0, n-1]` and swap positions `i` and `j`.
    pub(crate) fn permutation<'s>(&mut self, n: usize, scratch: &'s mut Vec<usize>) -> &'s [usize] {
        scratch.clear();
        scratch.extend(0..n);
        let hi = n as i64 - 1;
        for i in 0..n {
            let j = self.next_int(0, hi) as usize;
            scratch.swap(i, j);
        }
        scratch
    }

    /// Skip the rest of the current row (dbgen's `row_stop()` for this stream).
    #[inline]
    pub(crate) fn row_finished(&mut self) {
        self.rng.row_finished();
    }

    /// Skip `rows` whole rows ahead (used to start a chunk in the middle of a table).
    pub(crate) fn advance_rows(&mut self, rows: i64) {
        self.rng.advance_rows(rows);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_int_is_park_miller() {
        // The first draw from seed 1 is 16807; 16807 / (2^31 - 1) * 100 = 0.00078...
        let mut s = Stream::new(1, 1);
        assert_eq!(s.next_int(0, 99), 0);
        // Seed 16807 -> 282475249; 282475249 / (2^31 - 1) * 100 = 13.15...
        assert_eq!(s.next_int(0, 99), 13);
    }

    #[test]
    fn next_int_stays_in_bounds_and_has_no_32bit_overflow() {
        let mut s = Stream::new(12345, 1);
        for _ in 0..10_000 {
            let v = s.next_int(0, MAX_LONG);
            assert!((0..=MAX_LONG).contains(&v));
            let w = s.next_int(5, 9);
            assert!((5..=9).contains(&w));
        }
    }

    #[test]
    fn row_boundary_skips_unused_draws() {
        // A stream with boundary 3 that uses one draw per row must give the same value as a
        // raw generator that skips two draws after each use.
        let mut bounded = Stream::new(777, 3);
        let mut raw = Stream::new(777, 1);
        for _ in 0..5 {
            let a = bounded.next_int(1, 1000);
            bounded.row_finished();
            let b = raw.next_int(1, 1000);
            raw.next_int(1, 1000);
            raw.next_int(1, 1000);
            assert_eq!(a, b);
        }
    }

    #[test]
    fn advance_rows_matches_generating_rows() {
        let mut a = Stream::new(4242, 9);
        for _ in 0..10 {
            let _: InlineStr<24> = a.alpha_numeric(6, 24);
            a.row_finished();
        }
        let mut b = Stream::new(4242, 9);
        b.advance_rows(10);
        let x: InlineStr<24> = a.alpha_numeric(6, 24);
        let y: InlineStr<24> = b.alpha_numeric(6, 24);
        assert_eq!(x, y);
    }

    #[test]
    fn alpha_numeric_lengths_and_alphabet() {
        let mut s = Stream::new(881155353, 9);
        for _ in 0..1000 {
            let v: InlineStr<24> = s.alpha_numeric(6, 24);
            assert!((6..=24).contains(&v.len()));
            assert!(v.as_bytes().iter().all(|b| ALPHA_NUM.contains(b)));
            s.row_finished();
        }
    }

    #[test]
    fn permutation_is_a_permutation() {
        let mut s = Stream::new(709314158, 92);
        let mut scratch = Vec::new();
        let p = s.permutation(92, &mut scratch).to_vec();
        let mut sorted = p.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..92).collect::<Vec<_>>());
    }
}
