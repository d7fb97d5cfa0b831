//! The PART dimension (SSB specification §2.4; ssb-dbgen `mk_part()`, `gen_color()` in
//! `build.c`, `agg_str()` in `bm_utils.c`, `permute()` in `permute.c`, `pr_part()`).
//!
//! `p_partkey` runs 1..=200,000 × ⌊1 + log2(SF)⌋. Per row, in dbgen's order:
//!
//! - `p_color`, `p_name`: `agg_str()` shuffles all 92 `colors` on `P_NAME_SD` (92 draws per
//!   row) and joins the first three (`P_NAME_SCL` = 3 in SSB); `gen_color()` then splits off
//!   the first word as `p_color` and leaves the other two as `p_name`;
//! - `p_mfgr` = `MFGR#m`, m in 1..=5 (`P_MFG_SD`);
//! - `p_category` = `p_mfgr` followed by c in 1..=5 (`P_CAT_SD`), e.g. `MFGR#12`;
//! - `p_brand1` = `p_category` followed by b in 1..=40 (`P_BRND_SD`), e.g. `MFGR#1221`;
//! - `p_type`: `pick_str()` from `p_types` (`P_TYPE_SD`);
//! - `p_size`: 1..=50 (`P_SIZE_SD`);
//! - `p_container`: `pick_str()` from `p_cntr` (`P_CNTR_SD`).
//!
//! The category stream: the originally published `shared.h` defined `P_CAT_SD` as 97,
//! outside the `Seed[]` table (reading whatever memory followed it); the maintained
//! ssb-dbgen defines it as `Seed[48]` = 637858759. The SF 1 reference data matches the
//! latter, which is what is used here.

use tpchgen::distribution::Distributions;

use super::inline_str::InlineStr;
use super::random::Stream;
use super::scale::{Scale, chunk};
use super::tbl::{TblFields, TblRow, display_as_tbl};

/// `P_NAME_SD` (`Seed[37]`), 92 draws per row (one per color).
const NAME_SEED: i64 = 709_314_158;
/// `P_MFG_SD` (`Seed[0]`).
const MFGR_SEED: i64 = 1;
/// `P_CAT_SD` (`Seed[48]` in the maintained ssb-dbgen).
const CATEGORY_SEED: i64 = 637_858_759;
/// `P_BRND_SD` (`Seed[1]`).
const BRAND_SEED: i64 = 46_831_694;
/// `P_TYPE_SD` (`Seed[2]`).
const TYPE_SEED: i64 = 1_841_581_359;
/// `P_SIZE_SD` (`Seed[3]`).
const SIZE_SEED: i64 = 1_193_163_244;
/// `P_CNTR_SD` (`Seed[4]`).
const CONTAINER_SEED: i64 = 727_633_698;

/// `P_MFG_MIN..=P_MFG_MAX`, `P_CAT_MIN..=P_CAT_MAX`, `P_BRND_MIN..=P_BRND_MAX`,
/// `P_SIZE_MIN..=P_SIZE_MAX`.
const MFGR_MAX: i64 = 5;
const CATEGORY_MAX: i64 = 5;
const BRAND_MAX: i64 = 40;
const SIZE_MAX: i64 = 50;

/// One row of PART.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Part {
    pub p_partkey: i64,
    pub p_name: InlineStr<32>,
    pub p_mfgr: InlineStr<12>,
    pub p_category: InlineStr<12>,
    pub p_brand1: InlineStr<12>,
    pub p_color: &'static str,
    pub p_type: &'static str,
    pub p_size: i64,
    pub p_container: &'static str,
}

impl TblRow for Part {
    fn write_fields(&self, f: &mut TblFields<'_>) {
        f.int(self.p_partkey)
            .str(self.p_name.as_str())
            .str(self.p_mfgr.as_str())
            .str(self.p_category.as_str())
            .str(self.p_brand1.as_str())
            .str(self.p_color)
            .str(self.p_type)
            .int(self.p_size)
            .str(self.p_container);
    }
}

display_as_tbl!(Part);

/// Generates PART, or chunk `part` of `num_parts` of it.
#[derive(Debug, Clone)]
pub struct PartGenerator {
    start: i64,
    count: i64,
}

impl PartGenerator {
    /// Chunk `part` (1-based) of `num_parts` of PART at `scale_factor`.
    pub fn new(scale_factor: f64, part: i32, num_parts: i32) -> Self {
        let (start, count) = chunk(Self::row_count(scale_factor), part, num_parts);
        Self { start, count }
    }

    /// Rows in the whole PART table: 200,000 × ⌊1 + log2(SF)⌋.
    pub fn row_count(scale_factor: f64) -> i64 {
        Scale::new(scale_factor).part_rows()
    }

    /// Rows this generator produces.
    pub fn len(&self) -> i64 {
        self.count
    }

    /// Whether this generator produces no rows.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Iterate the rows.
    pub fn iter(&self) -> PartIter {
        PartIter::new(self.start, self.count)
    }
}

impl IntoIterator for PartGenerator {
    type Item = Part;
    type IntoIter = PartIter;
    fn into_iter(self) -> PartIter {
        self.iter()
    }
}

/// Iterator over PART rows.
#[derive(Debug, Clone)]
pub struct PartIter {
    dists: &'static Distributions,
    name: Stream,
    mfgr: Stream,
    category: Stream,
    brand: Stream,
    type_: Stream,
    size: Stream,
    container: Stream,
    /// Reused permutation buffer for `agg_str()`.
    scratch: Vec<usize>,
    next_key: i64,
    remaining: i64,
}

impl PartIter {
    fn new(start: i64, count: i64) -> Self {
        let dists = Distributions::static_default();
        let colors = dists.part_colors().size() as i32;
        let mut it = Self {
            dists,
            name: Stream::new(NAME_SEED, colors),
            mfgr: Stream::new(MFGR_SEED, 1),
            category: Stream::new(CATEGORY_SEED, 1),
            brand: Stream::new(BRAND_SEED, 1),
            type_: Stream::new(TYPE_SEED, 1),
            size: Stream::new(SIZE_SEED, 1),
            container: Stream::new(CONTAINER_SEED, 1),
            scratch: Vec::with_capacity(colors.max(0) as usize),
            next_key: start + 1,
            remaining: count,
        };
        for s in it.streams_mut() {
            s.advance_rows(start);
        }
        it
    }

    fn streams_mut(&mut self) -> [&mut Stream; 7] {
        [
            &mut self.name,
            &mut self.mfgr,
            &mut self.category,
            &mut self.brand,
            &mut self.type_,
            &mut self.size,
            &mut self.container,
        ]
    }
}

impl Iterator for PartIter {
    type Item = Part;

    fn next(&mut self) -> Option<Part> {
        if self.remaining <= 0 {
            return None;
        }
        let key = self.next_key;

        // agg_str(): shuffle all colors, take three; gen_color(): first is the color,
        // the other two (space separated) the name.
        let colors = self.dists.part_colors();
        let order = self.name.permutation(colors.size(), &mut self.scratch);
        let word = |i: usize| order.get(i).map_or("", |&c| colors.get_value(c));
        let color = word(0);
        let mut name = InlineStr::new();
        name.push_str(word(1));
        name.push(b' ');
        name.push_str(word(2));

        let mut mfgr = InlineStr::new();
        mfgr.push_str("MFGR#");
        mfgr.push_int(self.mfgr.next_int(1, MFGR_MAX), 1);
        let mut category = mfgr;
        category.push_int(self.category.next_int(1, CATEGORY_MAX), 1);
        let mut brand = category;
        brand.push_int(self.brand.next_int(1, BRAND_MAX), 1);

        let part = Part {
            p_partkey: key,
            p_name: name,
            p_mfgr: mfgr,
            p_category: category,
            p_brand1: brand,
            p_color: color,
            p_type: self.type_.pick(self.dists.part_types()),
            p_size: self.size.next_int(1, SIZE_MAX),
            p_container: self.container.pick(self.dists.part_containers()),
        };

        for s in self.streams_mut() {
            s.row_finished();
        }
        self.next_key += 1;
        self.remaining -= 1;
        Some(part)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = usize::try_from(self.remaining).unwrap_or(0);
        (n, Some(n))
    }
}

impl ExactSizeIterator for PartIter {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_row() {
        let first = PartGenerator::new(1.0, 1, 1)
            .iter()
            .next()
            .map(|p| p.to_string());
        assert_eq!(
            first.as_deref(),
            Some(
                "1|lace spring|MFGR#1|MFGR#11|MFGR#1121|goldenrod|PROMO BURNISHED COPPER|7|JUMBO PKG|"
            )
        );
    }

    #[test]
    fn chunks_concatenate_to_the_whole_table() {
        let whole: Vec<Part> = PartGenerator::new(0.01, 1, 1).iter().collect();
        let chunked: Vec<Part> = (1..=4)
            .flat_map(|p| PartGenerator::new(0.01, p, 4).iter())
            .collect();
        assert_eq!(whole.len(), 2000);
        assert_eq!(whole, chunked);
    }
}
