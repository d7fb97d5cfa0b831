//! The hash-build sink: a table of the build side's payload columns, dense (slot = key −
//! min, with a membership bitmap that probes test and a row array that finds duplicate
//! keys) or open addressing over packed keys ([`super::hash`]). A duplicate key raises
//! `flags[2]`, a key outside the planned range (or a full table) `flags[1]`: the query
//! then runs on the CPU, whose joins take 1:N matches. A membership table (read only by
//! semi/anti probes) keeps one entry a key and takes repeated keys as they come.
//!
//! A build whose keys the statistics say repeat (the build side of a 1:N join) makes a
//! *chained* table instead ([`chained`]): the payload is stored at the build row's own
//! number, and each key's rows are linked from the key's slot, so that a probe walks all
//! its matches. One pass, one `atomicExch` per row; no counting pass, prefix scan and
//! scatter (which would need the pipeline twice or its rows written out in between).

use tessera_ir::{BuildStrategy, Expr, Field, HashBuild, Pipeline, Source, Type};

use super::abi::{Out, Param};
use super::builder::{Builder, Lowered, c_long, set_bit};
use super::hash::{KeyPack, table_slots};
use super::ir::{CExpr, CType};
use super::layout::{GpuColumn, GpuTable, Narrow, SinkLayout, Width};
use super::unsupported::Reason;
use crate::cx;

/// The estimated share of a build pipeline's source rows that reach its table.
fn pass_permille(estimated_rows: u64, build: &Pipeline) -> u32 {
    match &build.source {
        Source::Scan(scan) if scan.rows > 0 => ((estimated_rows.min(scan.rows) * 1000) / scan.rows) as u32,
        _ => 1000,
    }
}

/// Lowers build `h` of `pipeline` over the current layout (`fields`).
pub fn lower(b: &mut Builder<'_>, h: &HashBuild, pipeline: &Pipeline, fields: &[Field]) -> Lowered<SinkLayout> {
    if h.nulls_equal {
        return Err(Reason::NullEqualBuild);
    }
    // A cross join builds its (one-row, as planned here) side without keys: every probe
    // row matches every build row, which no hash table holds.
    if h.keys.is_empty() {
        return Err(Reason::HashKey("none (a join without equal keys)".into()));
    }
    if h.null_aware {
        seen_rows(b, h, fields)?;
    }
    if h.repeated_keys && !h.membership {
        return chained(b, h, pipeline, fields);
    }
    let (min, max, key) = match (&h.strategy, h.keys.as_slice()) {
        (BuildStrategy::Perfect { min, max }, [key]) => (min, max, key),
        (BuildStrategy::Perfect { .. }, _) => return Err(Reason::Inconsistent("a perfect-hash build on several keys".into())),
        (BuildStrategy::Hash { key_ranges }, _) => return hashed(b, h, key_ranges, pipeline, fields),
    };
    let slots = (max - min + 1) as usize;
    super::scan::prefetch(b, key.columns().into_iter().chain(h.payload.iter().copied()))?;
    let s = dense_slot(b, key, *min, slots, fields)?;
    b.params.push(Param::Out(Out::BuildRows));
    reject_repeated(b, h, cx!["atomicCAS((int*)&out_rows[", &s, "], 0, (int)(", CExpr::row(), " + 1)) != 0"]);
    b.effect(set_bit("out_bits", &s));
    let (payload, payload_refs) = write_payload(b, h, &s)?;
    b.params.push(Param::Out(Out::BuildBitmap));
    let table = GpuTable { min: *min, slots, hashed: None, payload, payload_refs, pass_permille: pass_permille(h.estimated_rows, pipeline), membership: h.membership, chain: None };
    Ok(SinkLayout::Build { table })
}

/// An open-addressing build: each row claims the slot of its packed key and writes its
/// payload there. The table has room for every row of the source (probes on the way
/// never add rows: a duplicate build key sends the query to the CPU), so it is never
/// more than half full.
fn hashed(b: &mut Builder<'_>, h: &HashBuild, ranges: &[Option<(i64, i64)>], pipeline: &Pipeline, fields: &[Field]) -> Lowered<SinkLayout> {
    let (pack, slots, word) = packed_key(b, h, ranges, pipeline, fields)?;
    let s = b.var(CType::LongLong, "s", cx![format!("tessera_hash_insert_unique(out_keys, {}ull, ", slots - 1), word, ")"]);
    reject_repeated(b, h, cx![&s, " == -1LL"]);
    b.reject_flagged(cx![&s, " < 0LL"], 1);
    let (payload, payload_refs) = write_payload(b, h, &s)?;
    let table = GpuTable { min: 0, slots, hashed: Some(pack), payload, payload_refs, pass_permille: pass_permille(h.estimated_rows, pipeline), membership: h.membership, chain: None };
    Ok(SinkLayout::Build { table })
}

/// A chained build (see the module doc): each row finds its key's slot (dense: key −
/// min; hashed: claimed or found like a group's), writes its payload at its own row
/// number and pushes that number on the slot's chain (`next[row]` = the old head).
/// Build rows are numbered by the source's rows, so the arrays are as long as the
/// source and the numbers 32-bit.
fn chained(b: &mut Builder<'_>, h: &HashBuild, pipeline: &Pipeline, fields: &[Field]) -> Lowered<SinkLayout> {
    let rows = source_rows(pipeline, h);
    if rows > i32::MAX as u64 {
        return Err(Reason::ChainRows(rows));
    }
    if b.expanded {
        // Build rows are numbered by source row: an expanded row is several.
        return Err(Reason::ExpandedSink("a 1:N build"));
    }
    let (s, min, slots, hashed) = match (&h.strategy, h.keys.as_slice()) {
        (BuildStrategy::Perfect { min, max }, [key]) => {
            let slots = (max - min + 1) as usize;
            super::scan::prefetch(b, key.columns().into_iter().chain(h.payload.iter().copied()))?;
            (dense_slot(b, key, *min, slots, fields)?, *min, slots, None)
        }
        (BuildStrategy::Perfect { .. }, _) => return Err(Reason::Inconsistent("a perfect-hash build on several keys".into())),
        (BuildStrategy::Hash { key_ranges }, _) => {
            let (pack, slots, word) = packed_key(b, h, key_ranges, pipeline, fields)?;
            let s = b.var(CType::LongLong, "s", cx![format!("tessera_hash_find_or_insert(out_keys, {}ull, ", slots - 1), word, ")"]);
            b.reject_flagged(cx![&s, " < 0LL"], 1);
            (s, 0, slots, Some(pack))
        }
    };
    b.params.push(Param::Out(Out::Heads));
    b.params.push(Param::Out(Out::Next));
    b.effect(cx!["out_next[", CExpr::row(), "] = atomicExch(&out_heads[", &s, "], (int)", CExpr::row(), ");"]);
    let (payload, payload_refs) = write_payload(b, h, &CExpr::row())?;
    let table = GpuTable { min, slots, hashed, payload, payload_refs, pass_permille: pass_permille(h.estimated_rows, pipeline), membership: false, chain: Some(rows as usize) };
    Ok(SinkLayout::Build { table })
}

/// What a NULL-aware anti join (`NOT IN`) must know of its build side besides its keys
/// (see `probe.rs`): any row reaching the sink sets `out_bseen[0]`, one whose key is NULL
/// `out_bseen[1]`. Each flag is read before it is written: a store from every row would
/// queue on the two addresses.
fn seen_rows(b: &mut Builder<'_>, h: &HashBuild, fields: &[Field]) -> Lowered<()> {
    if h.keys.len() != 1 || (h.repeated_keys && !h.membership) {
        return Err(Reason::ProbeShape);
    }
    b.params.push(Param::Out(Out::BuildSeen));
    b.effect(cx!["if (out_bseen[0] == 0u) out_bseen[0] = 1u;"]);
    if let (_, Some(ok)) = super::filter::value(b, &h.keys[0], fields)? {
        b.effect(cx!["if (!(", ok, ") && out_bseen[1] == 0u) out_bseen[1] = 1u;"]);
    }
    Ok(())
}

/// The rows of a build's source that its table has room for: a table scan's rows, or
/// for an intermediate result (its rows known only when the query runs) twice the
/// planner's estimate of the build's rows and at least [`MIN_RESULT_SOURCE_ROWS`]. A
/// result with more rows fills the table or overruns its row arrays: the runtime then
/// runs the query on the CPU (`flags[1]`, or the row check before the launch).
pub fn source_rows(pipeline: &Pipeline, h: &HashBuild) -> u64 {
    match &pipeline.source {
        Source::Scan(scan) => scan.rows,
        Source::Result { .. } => h.estimated_rows.saturating_mul(2).max(MIN_RESULT_SOURCE_ROWS),
    }
}

/// The fewest source rows a build over an intermediate result has room for (64 Ki rows
/// are at most 2 MiB of table: estimates of small results are the least reliable).
pub const MIN_RESULT_SOURCE_ROWS: u64 = 1 << 16;

/// A dense table's slot of build key `key` (`key − min`); a key outside the `slots`
/// raises `flags[1]`, a NULL key drops the row ([`key_values`]).
fn dense_slot(b: &mut Builder<'_>, key: &Expr, min: i64, slots: usize, fields: &[Field]) -> Lowered<CExpr> {
    let k = key_values(b, std::slice::from_ref(key), fields)?.into_iter().next().ok_or_else(|| Reason::Inconsistent("a build without a key".into()))?;
    // In unsigned arithmetic: a key far from `min` wraps (never undefined) outside the slots.
    let s = b.var(CType::LongLong, "s", cx!["(long long)((unsigned long long)(", k, format!(") - (unsigned long long){})", c_long(min))]);
    b.reject_flagged(cx![&s, " < 0 || ", &s, format!(" >= {slots}LL")], 1);
    Ok(s)
}

/// An open-addressing build's packed keys (see `hash.rs`): the packing, the table's
/// slots (two a source row) and each row's packed word; the keys array joins the
/// parameters, the key columns and payload are loaded, and a key outside its planned
/// range raises `flags[1]`.
fn packed_key(b: &mut Builder<'_>, h: &HashBuild, ranges: &[Option<(i64, i64)>], pipeline: &Pipeline, fields: &[Field]) -> Lowered<(KeyPack, usize, CExpr)> {
    // Dictionary codes are comparable within one column only: a probe's strings have
    // another dictionary.
    if let Some(k) = h.keys.iter().find(|k| k.ty(fields) == Type::Utf8) {
        return Err(Reason::HashKey(format!("{k}: strings as join keys")));
    }
    let pack = KeyPack::plan(&h.keys, ranges, fields, &b.dicts, &[])?;
    let slots = usize::try_from(table_slots(source_rows(pipeline, h))).map_err(|_| Reason::TableSlots(usize::MAX))?;
    super::scan::prefetch(b, h.keys.iter().flat_map(|k| k.columns()).chain(h.payload.iter().copied()))?;
    let values = key_values(b, &h.keys, fields)?;
    let (word, in_range) = super::hash::pack_values(b, &pack, &values);
    b.params.push(Param::Out(Out::Keys));
    b.reject_flagged(cx!["!(", in_range, ")"], 1);
    Ok((pack, slots, word))
}

/// The values of build keys `keys`; a row with a NULL key is dropped first: it matches
/// no probe (builds whose NULL keys match each other, `nulls_equal`, are refused).
fn key_values(b: &mut Builder<'_>, keys: &[Expr], fields: &[Field]) -> Lowered<Vec<CExpr>> {
    let (values, ok) = super::filter::keys(b, keys, fields)?;
    if let Some(ok) = ok {
        // A key column is a payload column too, as often as not: not NULL from here on.
        super::filter::reject_null_keys(b, keys, ok);
    }
    Ok(values)
}

/// Drops a row whose key is in the table already (`repeated`): quietly for a membership
/// table, else raising `flags[2]` (the query goes to the CPU, whose joins take 1:N).
fn reject_repeated(b: &mut Builder<'_>, h: &HashBuild, repeated: CExpr) {
    if h.membership {
        b.reject(repeated);
    } else {
        b.reject_flagged(repeated, 2);
    }
}

/// Writes the row's payload columns at slot `s` of the table's payload arrays; their
/// layouts and references (see [`payload_form`]). A column that may be NULL sets bit `s`
/// of its validity bitmap where it is not (the bitmap is zero before the launch).
fn write_payload(b: &mut Builder<'_>, h: &HashBuild, s: &CExpr) -> Lowered<(Vec<GpuColumn>, Vec<i64>)> {
    let (mut payload, mut refs) = (Vec::new(), Vec::new());
    for (j, &col) in h.payload.iter().enumerate() {
        let (v, w) = super::scan::value(b, col)?;
        let dictionary = b.dicts.get(col).copied().flatten();
        let nullable = b.nulls.get(col).cloned().flatten();
        let form = if nullable.is_none() { payload_form(b, h, j, col, w) } else { None };
        b.params.push(Param::Out(Out::BuildPayload { column: j, width: w, narrow: form.map(|(n, _)| n) }));
        match form {
            Some((n, reference)) => {
                // The statistics are a hint: a value outside the range sends the query to
                // the CPU backend rather than store a wrapped distance.
                let (u, r) = (w.unsigned_c(), c_long(reference));
                let below = cx!["(long long)(", v.clone(), format!(") < {r}")];
                let distance = b.var(CType::ULongLong, "pd", cx![format!("({u})("), v, format!(") - ({u}){r}")]);
                b.reject_flagged(cx![below, " || ", &distance, format!(" > {}ull", n.max_distance())], 1);
                b.effect(cx![format!("out_p{j}["), s, format!("] = ({})", n.c()), distance, ";"]);
                refs.push(reference);
                payload.push(GpuColumn { narrow: Some(n), ..GpuColumn::plain(w, dictionary) });
            }
            None => {
                b.effect(cx![format!("out_p{j}["), s, "] = ", v, ";"]);
                refs.push(0);
                match nullable {
                    Some(ok) => {
                        b.params.push(Param::Out(Out::BuildPayloadValid { column: j }));
                        b.effect(cx!["if (", ok, ") ", set_bit(&format!("out_pv{j}"), s)]);
                        payload.push(GpuColumn::nullable(w, dictionary));
                    }
                    None => payload.push(GpuColumn::plain(w, dictionary)),
                }
            }
        }
    }
    Ok((payload, refs))
}

/// The narrowed form of payload column `j` (layout column `col`, of width `w`) and its
/// reference, where its values lie in a known range: a dictionary's codes (0 to its size
/// less one), else the range the statistics give ([`HashBuild::payload_ranges`]). A
/// byte form narrower than the width, as source columns take (`Narrow::for_span`); never
/// bit-packed, never for a column that may be NULL; by default only 64-bit columns
/// (`Experiments::narrow_payloads`, where the measurements are).
///
/// Why: a probe reads its payload for the rows that pass its tests, scattered over the
/// table, so the table's size decides whether those reads hit L1 or L2, and a 64-bit
/// value read takes two registers. TPC-H's payloads are 64-bit keys and decimals of a few
/// bytes.
pub fn payload_form(b: &Builder<'_>, h: &HashBuild, j: usize, col: usize, w: Width) -> Option<(Narrow, i64)> {
    if b.narrow_payloads == 0 || w == Width::Str || (w.bytes() as u32) * 8 < b.narrow_payloads {
        return None;
    }
    let (lo, hi) = match b.dicts.get(col).copied().flatten() {
        Some(d) if d.by_row => return None,
        Some(d) => (0, i64::try_from(d.size).ok()?.checked_sub(1)?),
        None => h.payload_ranges.get(j).copied().flatten()?,
    };
    let span = u64::try_from(i128::from(hi) - i128::from(lo)).ok()?;
    Some((Narrow::for_span(span, w, 0)?, lo))
}
