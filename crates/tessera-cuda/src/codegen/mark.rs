//! The mark sink: a semi or anti join run from its other side ([`tessera_ir::MarkBuild`],
//! TPC-H q22's 15 M orders looking up the few customers `NOT EXISTS` keeps). The kept
//! side's rows stay on the host, where its build ran; their keys (and the columns a
//! residual reads) go up as a chained table whose row numbers are the host table's
//! (`build.rs`, over an intermediate result). This kernel probes it and sets
//! `out_marks[row]` for every build row a probe row matches; the host then keeps the
//! rows marked (semi) or not (anti). A NULL probe key marks nothing, and a build row
//! with a NULL key is in no chain, so nothing marks it: an anti join keeps it, as
//! `NOT EXISTS` does.
//!
//! Without a residual, all rows of a chain share its key and are marked together: a
//! probe walks the chain from its head and stops at the first row marked already (every
//! probe starts at the head and walks the same way, so a row marked means the rows after
//! it are being marked by the probe that marked it). With a residual each row of the
//! chain is tested, and marked where it holds.

use tessera_ir::{Field, JoinKind, MarkBuild};

use super::abi::{Out, Param};
use super::builder::{Builder, Lowered};
use super::layout::{GpuTable, SinkLayout};
use super::unsupported::Reason;
use crate::cx;

/// Lowers mark sink `m` reading table `t` as probe `probe_no` (after the operators'
/// probes), over the current layout (`fields`). `m.fields` are the payload columns `t`
/// holds, which a residual reads after `fields`.
pub fn lower(b: &mut Builder<'_>, m: &MarkBuild, probe_no: usize, t: &GpuTable, fields: &[Field]) -> Lowered<SinkLayout> {
    let Some(rows) = t.chain else {
        return Err(Reason::Inconsistent("marks of a table without build row numbers".into()));
    };
    if t.payload.len() != m.fields.len() {
        return Err(Reason::Inconsistent(format!("a mark sink reading {} build columns of a table holding {}", m.fields.len(), t.payload.len())));
    }
    for (j, pc) in t.payload.iter().enumerate() {
        b.params.push(Param::Payload { probe: probe_no, column: j, width: pc.width, narrow: pc.narrow });
        if pc.nullable {
            b.params.push(Param::PayloadValid { probe: probe_no, column: j });
        }
    }
    // A NULL probe key marks nothing: its row is dropped as a semi join's would be.
    let (first, next) = super::probe::chain_first(b, &m.keys, JoinKind::Semi, probe_no, t, fields)?;
    b.params.push(Param::Out(Out::Marks));
    match &m.residual {
        None => {
            let row = b.fresh("m");
            b.effect(cx![format!("for (int {row} = "), first, format!("; {row} >= 0 && out_marks[{row}] == 0u; {row} = __ldg(&{next}[{row}])) out_marks[{row}] = 1u;")]);
        }
        Some(residual) => {
            let joined: Vec<Field> = fields.iter().chain(&m.fields).cloned().collect();
            // The chain walk stops at a row for which its condition is true: this one
            // marks the row where the residual holds and is never true, so every row is
            // seen.
            let walk = b.any_in_chain(first, next, |b, row| {
                super::probe::gather_payload(b, t, probe_no, &row);
                let holds = super::filter::condition(b, residual, &joined)?;
                Ok(cx!["(out_marks[", row.clone(), "] == 0u && (", holds, ") ? (out_marks[", row, "] = 1u, false) : false)"])
            })?;
            b.effect(cx!["(void)", walk, ";"]);
        }
    }
    Ok(SinkLayout::Marks { rows })
}
