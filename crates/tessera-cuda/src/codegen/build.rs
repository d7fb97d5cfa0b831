//! The hash-build sink: a dense table (slot = key − min) of the build side's payload
//! columns, with a membership bitmap that probes test and a row array that finds
//! duplicate keys (raising `flags[2]`; keys outside the planned range raise `flags[1]`).

use tessera_ir::{BuildStrategy, Field, HashBuild, Pipeline, Source};

use super::abi::{Out, Param};
use super::builder::{Builder, Lowered};
use super::ir::{CExpr, CType};
use super::layout::{GpuColumn, GpuTable, SinkLayout};
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
    let (BuildStrategy::Perfect { min, max }, [key]) = (&h.strategy, h.keys.as_slice()) else {
        return Err(Reason::BuildStrategy);
    };
    if h.nulls_equal {
        return Err(Reason::NullEqualBuild);
    }
    let slots = (max - min + 1) as usize;
    super::scan::prefetch(b, key.columns().into_iter().chain(h.payload.iter().copied()))?;
    let k = super::filter::expr(b, key, fields)?;
    b.params.push(Param::Out(Out::BuildRows));
    let s = b.var(CType::LongLong, "s", cx!["(long long)(", k, format!(") - {min}LL")]);
    b.reject_flagged(cx![&s, " < 0 || ", &s, format!(" >= {slots}LL")], 1);
    b.reject_flagged(cx!["atomicCAS((int*)&out_rows[", &s, "], 0, (int)(", CExpr::row(), " + 1)) != 0"], 2);
    b.effect(cx!["atomicOr(&out_bits[", &s, " >> 5], 1u << (", &s, " & 31));"]);
    let mut payload = Vec::new();
    for (j, &col) in h.payload.iter().enumerate() {
        let (v, w) = super::scan::column(b, col)?;
        b.params.push(Param::Out(Out::BuildPayload { column: j, width: w }));
        b.effect(cx![format!("out_p{j}["), &s, "] = ", v, ";"]);
        let dictionary = b.dicts.get(col).copied().flatten();
        payload.push(GpuColumn { width: w, dictionary });
    }
    b.params.push(Param::Out(Out::BuildBitmap));
    Ok(SinkLayout::Build { table: GpuTable { min: *min, slots, payload, pass_permille: pass_permille(h.estimated_rows, pipeline) } })
}
