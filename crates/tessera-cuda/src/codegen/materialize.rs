//! The materialization sink: each row reaching it takes the next output position with
//! one atomic per warp (`warp_append` in the device library), then writes its values.
//! A value that may be NULL also sets its row's bit in the column's validity bitmap
//! where it is not (`out_v{i}`, zero before the launch: Arrow's layout, as downloaded).

use tessera_ir::{Field, Type};

use super::abi::{Out, Param};
use super::builder::{Builder, Lowered, set_bit};
use super::ir::CExpr;
use super::layout::{GpuColumn, SinkLayout, value_width};
use super::unsupported::Reason;
use crate::cx;

/// Lowers a materialization of the current layout (`fields`); `limited`: with LIMIT or
/// OFFSET (which rows then is up to the input order, which blocks do not keep).
pub fn lower(b: &mut Builder<'_>, fields: &[Field], limited: bool) -> Lowered<SinkLayout> {
    if limited {
        return Err(Reason::LimitWithoutOrder);
    }
    super::scan::prefetch(b, 0..fields.len())?;
    b.params.push(Param::Out(Out::Count));
    let mut columns = Vec::new();
    let mut writes = CExpr::default();
    for (i, f) in fields.iter().enumerate() {
        let dictionary = b.dicts.get(i).copied().flatten();
        // Decimals of more than 18 digits (SUMs, and what is computed from them) are held
        // in 64 bits, as kernels compute them (a value beyond raises the overflow flag).
        if value_width(f.ty).is_none() || (f.ty == Type::Utf8 && dictionary.is_none()) {
            return Err(Reason::ColumnType { column: f.name.clone(), ty: f.ty });
        }
        let (v, w) = super::scan::value(b, i)?;
        b.params.push(Param::Out(Out::Materialized { column: i, width: w }));
        writes = cx![writes, format!(" out_m{i}[pos] = "), v, ";"];
        match b.nulls.get(i).cloned().flatten() {
            Some(ok) => {
                b.params.push(Param::Out(Out::MaterializedValid { column: i }));
                writes = cx![writes, " if (", ok, ") ", set_bit(&format!("out_v{i}"), &CExpr::text("pos"))];
                columns.push(GpuColumn::nullable(w, dictionary));
            }
            None => columns.push(GpuColumn::plain(w, dictionary)),
        }
    }
    b.effect(cx!["{ const unsigned long long pos = warp_append(out_count);", writes, " }"]);
    Ok(SinkLayout::Materialize { columns })
}
