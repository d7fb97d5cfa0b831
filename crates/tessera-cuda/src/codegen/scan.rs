//! The scan: loading source columns — only for the items still selected where a column
//! is first needed (Crystal's `BlockLoadSel`), or up front for all of a tile when most of
//! the column's sectors would be read anyway ([`EAGER_MIN_SECTORS`]).

use super::builder::{Builder, Lowered, Val};
use super::ir::{CExpr, KernelIr, Load, Stmt};
use super::layout::{GpuColumn, Narrow, Width};
use super::options::BLOCK_THREADS;
use super::unsupported::Reason;
use crate::cx;

/// The value of column `i` of the current layout, loading it on first use; a column that
/// may be NULL is refused (see [`Builder::nulls`]).
pub fn column(b: &mut Builder<'_>, i: usize) -> Lowered<(CExpr, Width)> {
    if b.nulls.get(i).is_some_and(Option::is_some) {
        return Err(Reason::NullableValue(format!("column #{i}")));
    }
    value(b, i)
}

/// The value of column `i` of the current layout, loading it on first use, whether or not
/// it may be NULL (where it is, its value means nothing).
pub fn value(b: &mut Builder<'_>, i: usize) -> Lowered<(CExpr, Width)> {
    match b.layout.get(i).cloned() {
        Some(Val::Local(v, w)) => Ok((v, w)),
        Some(Val::Source(c)) => Ok((load(b, c)?, value_width(&b.cols[c]))),
        None => Err(Reason::Inconsistent(format!("column #{i} out of range"))),
    }
}

/// The width of a source column's values in the row layout: a string column without a
/// dictionary is its row numbers (32 bits) when it has them ([`super::layout::DictRef::by_row`]).
pub(super) fn value_width(c: &GpuColumn) -> Width {
    if c.width == Width::Str && c.dictionary.is_some_and(|d| d.by_row) { Width::I32 } else { c.width }
}

/// The value of source column `c`, loaded here if it is not yet; every layout position
/// still naming the unloaded column now names the value.
pub fn load(b: &mut Builder<'_>, c: usize) -> Lowered<CExpr> {
    let col = b.cols.get(c).ok_or_else(|| Reason::Inconsistent(format!("source column #{c} out of range")))?;
    let (by_row, w) = (col.width == Width::Str, value_width(col));
    if w == Width::Str {
        return Err(Reason::RawString);
    }
    let unloaded = b.layout.iter().any(|slot| matches!(slot, Val::Source(x) if *x == c));
    if unloaded && !b.loaded.contains(&c) {
        let pass = b.pass;
        let v = if by_row {
            // The row number stands for the string (nothing to read).
            b.def(w.ctype(), format!("c{c}"), cx!["(int32_t)", CExpr::row()], None)
        } else {
            let (open, close) = load_parts(c, col, b.column_policy);
            b.def(w.ctype(), format!("c{c}"), cx![open, CExpr::row(), close], Some(Load::Column { column: c, pass }))
        };
        b.column_values.insert(c, v);
    }
    let v = b.column_values.get(&c).cloned().ok_or_else(|| Reason::Inconsistent(format!("source column #{c} is not in the row")))?;
    for slot in b.layout.iter_mut() {
        if matches!(slot, Val::Source(x) if *x == c) {
            *slot = Val::Local(v.clone(), w);
        }
    }
    b.loaded.push(c);
    Ok(v)
}

/// The text around the row of a load of source column `c`: `col{c}[row]`; for a
/// column in bit-packed tiles `(type)tessera_unpack(col{c}, row)` (`tiles.cuh`); for a
/// narrowed one its distance added to its reference, in unsigned arithmetic of the
/// value's width (the sum is the stored value, so it never wraps), a bit-packed one's
/// distance read by `tessera_bits_get<w, BLOCK_THREADS>(col{c}, row)`, a column of runs'
/// by `tessera_runs_get(col{c}, col{c}_runs, row)`. With `policy`
/// (`Experiments::column_loads`) a stored value is read by `tessera_col(col{c} + row)`.
pub fn load_parts(c: usize, col: &GpuColumn, policy: bool) -> (String, &'static str) {
    match col.narrow {
        _ if col.packed => (format!("({})tessera_unpack(col{c}, ", col.width.c()), ")"),
        Some(Narrow::Bits(w)) => (format!("{}tessera_bits_get<{w}, {BLOCK_THREADS}>(col{c}, ", reference_add(c, col)), "))"),
        Some(Narrow::Runs { .. }) => (format!("{}tessera_runs_get(col{c}, col{c}_runs, ", reference_add(c, col)), "))"),
        Some(_) if policy => (format!("{}tessera_col(col{c} + ", reference_add(c, col)), "))"),
        Some(_) => (format!("{}col{c}[", reference_add(c, col)), "])"),
        None if policy => (format!("tessera_col(col{c} + "), ")"),
        None => (format!("col{c}["), "]"),
    }
}

/// The text before a distance of narrowed column `c` that makes it the column's value
/// (a `)` closes it): the distance added to the reference in unsigned arithmetic of the
/// value's width (the sum is the stored value, so it never wraps).
pub fn reference_add(c: usize, col: &GpuColumn) -> String {
    plus_reference(col.width, &format!("col{c}_ref"))
}

/// The text before a distance that makes it a value of `width` (a `)` closes it):
/// `reference` (C text: a parameter's name or a literal) added in unsigned arithmetic of
/// the width. Narrowed columns' references are parameters; narrowed build payloads'
/// (`build::payload_form`) are constants of the kernels.
pub fn plus_reference(width: Width, reference: &str) -> String {
    let u = width.unsigned_c();
    format!("({})(({u}){reference} + ({u})", width.c())
}

/// Loads the source columns still unloaded among layout columns `columns`, here: what a
/// sink reads, in flight together.
pub fn prefetch(b: &mut Builder<'_>, columns: impl IntoIterator<Item = usize>) -> Lowered<()> {
    for i in columns {
        if let Some(Val::Source(c)) = b.layout.get(i).cloned() {
            load(b, c)?;
        }
    }
    Ok(())
}

/// Columns whose estimated share of 32-byte sectors read at their first use (see
/// [`sector_share`]) is at least this are loaded in the kernel's first stage, together,
/// instead of after the predicates and probes before their use.
///
/// Loading a column only for the rows still selected saves DRAM traffic only for the
/// sectors no selected row touches, while each load that waits for a probe's answer is
/// one more round trip in the thread's chain (SSB's probe kernels were latency-bound:
/// most stalls wait on global loads). Up front, a tile's loads are in flight at once.
/// Swept on an H200 from 0 (everything up front, worst: selective queries then read
/// whole columns they need a few sectors of) to 0.75 (`benchmarks/results/README.md`,
/// "Eager loads"). 0.1 until 2026-11-27j, when, with `int` selection flags, warp votes
/// and narrowed word loads, a sweep of 0.1–0.5 put 0.25 first (SSB SF 20's kernels 4.66
/// ms against 5.01 at 0.1): SSB q4.1's and q2.1's star joins then load their later
/// probes' keys for the rows left instead of up front (q4.1 0.59 against 0.75 ms, q2.1
/// 0.42 against 0.50), every other SSB and TPC-H SF 10 kernel within 0.01 ms.
pub const EAGER_MIN_SECTORS: f64 = 0.25;

/// The share of a column's 32-byte sectors that hold at least one of the rows still
/// selected, when a share `pass` of the rows is, independently.
///
/// Narrowed columns are judged by their stored bytes (more rows a sector); judged by
/// their values' width instead, SSB SF 20's kernels narrowed were the same (6.98 and
/// 7.03 ms against 6.99 and 6.96 on an H200, 2026-11-26f). Packed columns are judged by
/// their plain width too. Counting a warp's 32 rows as their unit (the warp decoder
/// reads them all where any is selected) made every SSB column eager and staged, and
/// SSB SF 20 slower on the H200 (packed kernels 16.6 → 19.1 ms; q2.1 1.33 → 2.86 ms,
/// 2026-11-26e run 3).
pub fn sector_share(pass: f64, col: &GpuColumn) -> f64 {
    let per_sector = (256 / col.stored_bits().max(1)) as i32;
    1.0 - (1.0 - pass.clamp(0.0, 1.0)).powi(per_sector)
}

/// The source columns to load up front (see [`EAGER_MIN_SECTORS`]), in the order a
/// kernel lowered without eager loads first loads them.
///
/// `queued_from`: the index in `ir.stmts` of the row test after which a warp queue takes
/// the rows left (`defer::early_split`): a column first read after it is read at the
/// queued rows, not up front. Compact ones then decode only the rows left (SSB SF 20
/// q1.1's and q1.2's compact probes, their dates in runs: 0.310 → 0.260 and 0.249 →
/// 0.200 ms; H200, 2026-12-01b run 1); byte-narrowed ones loaded up front and queued were
/// slower than read at the rows (SF 100 q1.2 1.003 against 0.814 ms, runs 1–2).
pub fn eager_columns(ir: &KernelIr, cols: &[GpuColumn], min_sectors: f64, queued_from: Option<usize>) -> Vec<usize> {
    // Columns read after a 1:N expansion are read per (row, match) from its queue:
    // loading them up front would queue them as well, for rows the join may drop.
    ir.stmts
        .iter()
        .take(queued_from.unwrap_or(usize::MAX))
        .take_while(|s| !matches!(s, Stmt::Expand { .. }))
        .filter_map(|s| match s {
            Stmt::Def { load: Some(Load::Column { column, pass }), .. } => Some((*column, *pass)),
            _ => None,
        })
        .filter(|&(c, pass)| sector_share(pass, &cols[c]) >= min_sectors)
        .map(|(c, _)| c)
        .collect()
}
