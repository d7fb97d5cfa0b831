//! Grouped aggregation: a group table that maps rows to group numbers, and one
//! accumulator array per aggregate indexed by group number.
//!
//! Each worker thread aggregates its morsels into its own table; the tables are merged
//! at the end. Group numbers come from either
//! - a **perfect hash**: every key has a small known domain (dictionary codes, an
//!   integer range from statistics, booleans), and the group number is the mixed-radix
//!   number of the keys — an array index, no hashing, no comparisons; or
//! - an **open-addressing hash table** over the keys in arrow's row format.
//!
//! Sums of integers and decimals are exact (128-bit); a result that does not fit its
//! SQL type is an error.

use std::collections::HashMap;
use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, Decimal128Array, DictionaryArray, Float64Array, Int64Array, StringArray,
    new_null_array,
};
use arrow::datatypes::{DataType, Int32Type};
use arrow::row::{RowConverter, Rows};
use tessera_common::{Result, TesseraError};
use tessera_ir::{AggExpr, AggFunc, Field, GroupStrategy, KeyDomain, Type};

use crate::eval::{Evaluator, arrow_err, cast_to};
use crate::hash::{hash_bytes, int_values, normalize, plain_type, row_converter, to_rows};
use crate::types::arrow_type;

/// The CPU keeps a perfect-hash group array per worker thread, so it uses one only up
/// to 1 Mi slots (16 workers × 1 Mi × a few accumulators stays in the hundreds of MB);
/// larger perfect domains (the planner allows 4 Mi for the GPU, which has one shared
/// array) are grouped through the hash table instead.
const CPU_PERFECT_MAX_SLOTS: usize = 1 << 20;

/// One key's domain as known at run time.
#[derive(Debug, Clone)]
enum Domain {
    Range { min: i64, size: usize },
    Dictionary { values: ArrayRef },
    Boolean,
}

impl Domain {
    /// Slots, including slot 0 for NULL.
    fn slots(&self) -> usize {
        match self {
            Domain::Range { size, .. } => size + 1,
            Domain::Dictionary { values } => values.len() + 1,
            Domain::Boolean => 3,
        }
    }
}

enum Groups {
    Scalar,
    Perfect { domains: Vec<Domain>, seen: Vec<bool> },
    Hash { converter: RowConverter, key_types: Vec<DataType>, keys: Rows, slots: Vec<u32>, mask: usize },
}

/// A worker's aggregation state.
pub struct GroupTable {
    groups: Groups,
    count: usize,
    accs: Vec<Acc>,
    specs: Vec<AggExpr>,
}

impl std::fmt::Debug for GroupTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GroupTable").field("groups", &self.count).finish()
    }
}

impl GroupTable {
    /// An empty table. Perfect-hash domains over dictionaries are completed from the
    /// first morsel (`first_keys`), since a dictionary's size is known only at run time.
    pub fn new(strategy: &GroupStrategy, aggregates: &[AggExpr], key_types: &[DataType], first_keys: &[ArrayRef]) -> Result<GroupTable> {
        let hash = GroupStrategy::Hash { estimated_groups: 0, key_ranges: Vec::new() };
        let strategy = match strategy {
            GroupStrategy::Perfect { domains } if perfect_slots(domains, first_keys) > CPU_PERFECT_MAX_SLOTS => &hash,
            s => s,
        };
        let (groups, count) = match strategy {
            GroupStrategy::Scalar => (Groups::Scalar, 1),
            GroupStrategy::Perfect { domains } => {
                let mut rt = Vec::with_capacity(domains.len());
                for (i, d) in domains.iter().enumerate() {
                    rt.push(match d {
                        KeyDomain::Range { min, max } => Domain::Range { min: *min, size: (max - min + 1) as usize },
                        KeyDomain::Boolean => Domain::Boolean,
                        KeyDomain::Dictionary { .. } => {
                            let values = first_keys
                                .get(i)
                                .and_then(|k| k.as_dictionary_opt::<Int32Type>())
                                .map(|d| Arc::clone(d.values()))
                                .ok_or_else(|| TesseraError::Internal("dictionary group key is not dictionary-encoded".into()))?;
                            Domain::Dictionary { values }
                        }
                    });
                }
                let slots = rt.iter().try_fold(1usize, |acc, d| acc.checked_mul(d.slots())).unwrap_or(usize::MAX);
                (Groups::Perfect { domains: rt, seen: vec![false; slots] }, slots)
            }
            GroupStrategy::Hash { .. } => {
                let key_types: Vec<DataType> = key_types.iter().map(plain_type).collect();
                let converter = row_converter(&key_types)?;
                let keys = converter.empty_rows(0, 0);
                (Groups::Hash { converter, key_types, keys, slots: vec![u32::MAX; 1024], mask: 1023 }, 0)
            }
        };
        let mut accs: Vec<Acc> = aggregates.iter().map(Acc::new).collect::<Result<_>>()?;
        for a in &mut accs {
            a.resize(count);
        }
        Ok(GroupTable { groups, count, accs, specs: aggregates.to_vec() })
    }

    /// Aggregates one morsel: `keys` are the evaluated group keys, `columns` the input.
    pub fn update(&mut self, keys: &[ArrayRef], columns: &[ArrayRef], rows: usize, eval: &Evaluator) -> Result<()> {
        let ids = self.group_ids(keys, rows)?;
        for (acc, spec) in self.accs.iter_mut().zip(&self.specs) {
            match &spec.arg {
                None => acc.update_count_star(&ids),
                Some(arg) => {
                    let values = eval.eval(arg, columns, rows)?;
                    acc.update(&ids, &values)?;
                }
            }
        }
        Ok(())
    }

    fn group_ids(&mut self, keys: &[ArrayRef], rows: usize) -> Result<Vec<u32>> {
        match &mut self.groups {
            Groups::Scalar => Ok(vec![0; rows]),
            Groups::Perfect { domains, seen } => {
                let mut ids = vec![0u32; rows];
                let mut stride = 1usize;
                for (k, d) in keys.iter().zip(domains.iter()) {
                    let slots = d.slots();
                    match d {
                        Domain::Range { min, size } => {
                            let (vals, nulls) = int_values(k)?;
                            for r in 0..rows {
                                let slot = if nulls.as_ref().is_some_and(|n| n.is_null(r)) {
                                    0
                                } else {
                                    let s = vals[r].wrapping_sub(*min) as u64;
                                    if s >= *size as u64 {
                                        return Err(TesseraError::Internal(format!(
                                            "group key {} outside the range the statistics promised",
                                            vals[r]
                                        )));
                                    }
                                    s as usize + 1
                                };
                                ids[r] += (slot * stride) as u32;
                            }
                        }
                        Domain::Boolean => {
                            let b = k.as_boolean_opt().ok_or_else(|| TesseraError::Internal("boolean key expected".into()))?;
                            for r in 0..rows {
                                let slot = if b.is_null(r) { 0 } else if b.value(r) { 2 } else { 1 };
                                ids[r] += (slot * stride) as u32;
                            }
                        }
                        Domain::Dictionary { values } => {
                            let codes = dictionary_codes(k, values)?;
                            for r in 0..rows {
                                let slot = codes[r].map(|c| c as usize + 1).unwrap_or(0);
                                ids[r] += (slot * stride) as u32;
                            }
                        }
                    }
                    stride *= slots;
                }
                for &g in &ids {
                    seen[g as usize] = true;
                }
                Ok(ids)
            }
            Groups::Hash { converter, key_types, keys: group_keys, slots, mask } => {
                let keys = normalize(keys, key_types)?;
                let rows_enc = to_rows(converter, &keys)?;
                let mut ids = Vec::with_capacity(rows);
                for r in 0..rows {
                    ids.push(group_of(rows_enc.row(r), group_keys, slots, mask, &mut self.count));
                }
                for a in &mut self.accs {
                    a.resize(self.count);
                }
                Ok(ids)
            }
        }
    }

    /// Folds another worker's table (same plan) into this one.
    pub fn merge(&mut self, other: GroupTable) -> Result<()> {
        let mapping: Vec<u32> = match (&mut self.groups, other.groups) {
            (Groups::Scalar, Groups::Scalar) => vec![0],
            (Groups::Perfect { seen, .. }, Groups::Perfect { seen: other_seen, .. }) => {
                for (s, o) in seen.iter_mut().zip(&other_seen) {
                    *s |= *o;
                }
                (0..other.count as u32).collect()
            }
            (
                Groups::Hash { converter, keys: group_keys, slots, mask, .. },
                Groups::Hash { converter: other_converter, keys: other_keys, .. },
            ) => {
                // Rows are only comparable within one converter: re-encode the other's.
                let arrays = other_converter.convert_rows(other_keys.iter()).map_err(arrow_err)?;
                let other_keys = converter.convert_columns(&arrays).map_err(arrow_err)?;
                let mut mapping = Vec::with_capacity(other.count);
                for row in other_keys.iter() {
                    mapping.push(group_of(row, group_keys, slots, mask, &mut self.count));
                }
                mapping
            }
            _ => return Err(TesseraError::Internal("merging group tables of different kinds".into())),
        };
        for (a, b) in self.accs.iter_mut().zip(other.accs) {
            a.resize(self.count);
            a.merge(b, &mapping)?;
        }
        Ok(())
    }

    /// The result: group keys, then aggregates, typed as `fields`.
    pub fn finish(self, fields: &[Field]) -> Result<Vec<ArrayRef>> {
        let (key_columns, order): (Vec<ArrayRef>, Vec<usize>) = match &self.groups {
            Groups::Scalar => (vec![], vec![0]),
            Groups::Perfect { domains, seen } => {
                let order: Vec<usize> = (0..self.count).filter(|&g| seen[g]).collect();
                let mut cols = Vec::new();
                let mut stride = 1usize;
                for (i, d) in domains.iter().enumerate() {
                    let slots = d.slots();
                    let slot_of = |g: usize| (g / stride) % slots;
                    let col: ArrayRef = match d {
                        Domain::Range { min, .. } => {
                            let v: Int64Array =
                                order.iter().map(|&g| (slot_of(g) > 0).then(|| min + slot_of(g) as i64 - 1)).collect();
                            cast_to(&(Arc::new(v) as ArrayRef), fields[i].ty)?
                        }
                        Domain::Boolean => {
                            let v: BooleanArray = order
                                .iter()
                                .map(|&g| match slot_of(g) {
                                    0 => None,
                                    s => Some(s == 2),
                                })
                                .collect();
                            Arc::new(v)
                        }
                        Domain::Dictionary { values } => {
                            let codes: arrow::array::Int32Array =
                                order.iter().map(|&g| (slot_of(g) > 0).then(|| slot_of(g) as i32 - 1)).collect();
                            Arc::new(DictionaryArray::<Int32Type>::try_new(codes, Arc::clone(values)).map_err(arrow_err)?)
                        }
                    };
                    cols.push(col);
                    stride *= slots;
                }
                (cols, order)
            }
            Groups::Hash { converter, keys, .. } => {
                let cols = converter.convert_rows(keys.iter()).map_err(arrow_err)?;
                (cols, (0..self.count).collect())
            }
        };
        let nkeys = key_columns.len();
        let mut out = key_columns;
        for (i, acc) in self.accs.into_iter().enumerate() {
            out.push(acc.finish(&order, fields[nkeys + i].ty)?);
        }
        Ok(out)
    }
}

/// Slots a perfect-hash table over `domains` needs (dictionary sizes from the keys).
fn perfect_slots(domains: &[KeyDomain], first_keys: &[ArrayRef]) -> usize {
    domains
        .iter()
        .enumerate()
        .map(|(i, d)| match d {
            KeyDomain::Range { min, max } => (max - min + 2) as usize,
            KeyDomain::Boolean => 3,
            KeyDomain::Dictionary { .. } => {
                first_keys.get(i).and_then(|k| k.as_dictionary_opt::<Int32Type>()).map(|d| d.values().len() + 1).unwrap_or(usize::MAX)
            }
        })
        .try_fold(1usize, |acc, n| acc.checked_mul(n))
        .unwrap_or(usize::MAX)
}

/// The group number of `row` in an open-addressing table (linear probing) over the
/// group keys `keys`, adding a new group when it is not there; doubles the table to
/// keep the load factor at most 1/2.
fn group_of(row: arrow::row::Row<'_>, keys: &mut Rows, slots: &mut Vec<u32>, mask: &mut usize, count: &mut usize) -> u32 {
    if (*count + 1) * 2 > slots.len() {
        let (s, m) = rehash(keys, slots.len() * 2);
        *slots = s;
        *mask = m;
    }
    let mut s = hash_bytes(row.as_ref()) as usize & *mask;
    loop {
        let g = slots[s];
        if g == u32::MAX {
            keys.push(row);
            slots[s] = *count as u32;
            *count += 1;
            return *count as u32 - 1;
        }
        if keys.row(g as usize) == row {
            return g;
        }
        s = (s + 1) & *mask;
    }
}

fn rehash(keys: &Rows, size: usize) -> (Vec<u32>, usize) {
    let mask = size - 1;
    let mut slots = vec![u32::MAX; size];
    for (g, row) in keys.iter().enumerate() {
        let mut s = hash_bytes(row.as_ref()) as usize & mask;
        while slots[s] != u32::MAX {
            s = (s + 1) & mask;
        }
        slots[s] = g as u32;
    }
    (slots, mask)
}

/// Codes of `k` in the dictionary `values` (remapping through the strings when `k`
/// uses another dictionary).
fn dictionary_codes(k: &ArrayRef, values: &ArrayRef) -> Result<Vec<Option<u32>>> {
    if let Some(d) = k.as_dictionary_opt::<Int32Type>() {
        if Arc::ptr_eq(d.values(), values) {
            return Ok(d.keys().iter().map(|c| c.map(|c| c as u32)).collect());
        }
    }
    let strings = arrow::compute::cast(k, &DataType::Utf8).map_err(arrow_err)?;
    let strings = strings.as_string::<i32>();
    let dict = values.as_string_opt::<i32>().ok_or_else(|| TesseraError::Internal("dictionary of non-strings".into()))?;
    let lookup: HashMap<&str, u32> = dict.iter().enumerate().filter_map(|(i, v)| v.map(|v| (v, i as u32))).collect();
    strings
        .iter()
        .map(|s| match s {
            None => Ok(None),
            Some(s) => lookup
                .get(s)
                .map(|&c| Some(c))
                .ok_or_else(|| TesseraError::Internal(format!("group key '{s}' not in the column's dictionary"))),
        })
        .collect()
}

/// Calls `f(row, value)` for every non-NULL value of an integer-like or decimal column.
fn for_each_int(a: &ArrayRef, mut f: impl FnMut(usize, i128)) -> Result<()> {
    macro_rules! each {
        ($t:ty) => {{
            let p = a.as_primitive::<$t>();
            match p.nulls() {
                None => p.values().iter().enumerate().for_each(|(i, v)| f(i, *v as i128)),
                Some(n) => p.values().iter().enumerate().filter(|(i, _)| n.is_valid(*i)).for_each(|(i, v)| f(i, *v as i128)),
            }
        }};
    }
    use arrow::datatypes as t;
    match a.data_type() {
        DataType::Int8 => each!(t::Int8Type),
        DataType::Int16 => each!(t::Int16Type),
        DataType::Int32 => each!(t::Int32Type),
        DataType::Int64 => each!(t::Int64Type),
        DataType::UInt8 => each!(t::UInt8Type),
        DataType::UInt16 => each!(t::UInt16Type),
        DataType::UInt32 => each!(t::UInt32Type),
        DataType::UInt64 => each!(t::UInt64Type),
        DataType::Date32 => each!(t::Date32Type),
        DataType::Decimal128(..) => each!(t::Decimal128Type),
        other => return Err(TesseraError::Internal(format!("integer aggregate over {other}"))),
    }
    Ok(())
}

fn for_each_f64(a: &ArrayRef, mut f: impl FnMut(usize, f64)) -> Result<()> {
    let a = arrow::compute::cast(a, &DataType::Float64).map_err(arrow_err)?;
    let p = a.as_primitive::<arrow::datatypes::Float64Type>();
    for (i, v) in p.iter().enumerate() {
        if let Some(v) = v {
            f(i, v);
        }
    }
    Ok(())
}

fn is_float(dt: &DataType) -> bool {
    matches!(dt, DataType::Float16 | DataType::Float32 | DataType::Float64)
}

fn decimal_scale(dt: &DataType) -> i8 {
    match dt {
        DataType::Decimal128(_, s) => *s,
        _ => 0,
    }
}

/// One aggregate's per-group state.
enum Acc {
    Count(Vec<i64>),
    Sum { func: AggFunc, ints: Vec<i128>, floats: Vec<f64>, counts: Vec<i64>, float: Option<bool>, scale: i8 },
    MinMax { min: bool, ints: Vec<Option<i128>>, floats: Vec<Option<f64>>, strings: Vec<Option<String>>, bools: Vec<Option<bool>>, kind: Option<u8> },
}

impl Acc {
    fn new(spec: &AggExpr) -> Result<Acc> {
        Ok(match spec.func {
            AggFunc::CountStar | AggFunc::Count => Acc::Count(Vec::new()),
            AggFunc::Sum | AggFunc::Avg => {
                Acc::Sum { func: spec.func, ints: Vec::new(), floats: Vec::new(), counts: Vec::new(), float: None, scale: 0 }
            }
            AggFunc::Min | AggFunc::Max => Acc::MinMax {
                min: spec.func == AggFunc::Min,
                ints: Vec::new(),
                floats: Vec::new(),
                strings: Vec::new(),
                bools: Vec::new(),
                kind: None,
            },
        })
    }

    fn resize(&mut self, n: usize) {
        match self {
            Acc::Count(c) => c.resize(n, 0),
            Acc::Sum { ints, floats, counts, .. } => {
                ints.resize(n, 0);
                floats.resize(n, 0.0);
                counts.resize(n, 0);
            }
            Acc::MinMax { ints, floats, strings, bools, .. } => {
                ints.resize(n, None);
                floats.resize(n, None);
                strings.resize(n, None);
                bools.resize(n, None);
            }
        }
    }

    fn update_count_star(&mut self, ids: &[u32]) {
        if let Acc::Count(c) = self {
            for &g in ids {
                c[g as usize] += 1;
            }
        }
    }

    fn update(&mut self, ids: &[u32], values: &ArrayRef) -> Result<()> {
        match self {
            Acc::Count(c) => {
                match values.logical_nulls() {
                    None => ids.iter().for_each(|&g| c[g as usize] += 1),
                    Some(n) => ids.iter().enumerate().filter(|(i, _)| n.is_valid(*i)).for_each(|(_, &g)| c[g as usize] += 1),
                }
                Ok(())
            }
            Acc::Sum { ints, floats, counts, float, scale, .. } => {
                let is_f = is_float(values.data_type());
                float.get_or_insert(is_f);
                *scale = decimal_scale(values.data_type());
                if is_f {
                    for_each_f64(values, |i, v| {
                        let g = ids[i] as usize;
                        floats[g] += v;
                        counts[g] += 1;
                    })
                } else {
                    let mut overflow = false;
                    for_each_int(values, |i, v| {
                        let g = ids[i] as usize;
                        match ints[g].checked_add(v) {
                            Some(s) => ints[g] = s,
                            None => overflow = true,
                        }
                        counts[g] += 1;
                    })?;
                    if overflow {
                        return Err(TesseraError::Execution("arithmetic overflow in SUM".into()));
                    }
                    Ok(())
                }
            }
            Acc::MinMax { min, ints, floats, strings, bools, kind } => {
                let better_i = |old: Option<i128>, v: i128| old.is_none_or(|o| if *min { v < o } else { v > o });
                match values.data_type() {
                    DataType::Boolean => {
                        *kind = Some(3);
                        let b = values.as_boolean();
                        for (i, v) in b.iter().enumerate() {
                            if let Some(v) = v {
                                let g = ids[i] as usize;
                                let old = bools[g];
                                if old.is_none_or(|o| if *min { !v & o } else { v & !o }) {
                                    bools[g] = Some(v);
                                }
                            }
                        }
                        Ok(())
                    }
                    dt if is_float(dt) => {
                        *kind = Some(1);
                        for_each_f64(values, |i, v| {
                            let g = ids[i] as usize;
                            if floats[g].is_none_or(|o| if *min { v < o } else { v > o }) {
                                floats[g] = Some(v);
                            }
                        })
                    }
                    DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View | DataType::Dictionary(..) => {
                        *kind = Some(2);
                        let s = arrow::compute::cast(values, &DataType::Utf8).map_err(arrow_err)?;
                        for (i, v) in s.as_string::<i32>().iter().enumerate() {
                            if let Some(v) = v {
                                let g = ids[i] as usize;
                                let better = strings[g].as_deref().is_none_or(|o| if *min { v < o } else { v > o });
                                if better {
                                    strings[g] = Some(v.to_string());
                                }
                            }
                        }
                        Ok(())
                    }
                    _ => {
                        *kind = Some(0);
                        for_each_int(values, |i, v| {
                            let g = ids[i] as usize;
                            if better_i(ints[g], v) {
                                ints[g] = Some(v);
                            }
                        })
                    }
                }
            }
        }
    }

    fn merge(&mut self, other: Acc, mapping: &[u32]) -> Result<()> {
        match (self, other) {
            (Acc::Count(a), Acc::Count(b)) => {
                for (i, v) in b.into_iter().enumerate() {
                    a[mapping[i] as usize] += v;
                }
            }
            (Acc::Sum { ints, floats, counts, float, scale, .. }, Acc::Sum { ints: bi, floats: bf, counts: bc, float: bfl, scale: bs, .. }) => {
                if float.is_none() {
                    *float = bfl;
                    *scale = bs;
                }
                for i in 0..bc.len() {
                    let g = mapping[i] as usize;
                    ints[g] = ints[g]
                        .checked_add(bi[i])
                        .ok_or_else(|| TesseraError::Execution("arithmetic overflow in SUM".into()))?;
                    floats[g] += bf[i];
                    counts[g] += bc[i];
                }
            }
            (Acc::MinMax { min, ints, floats, strings, bools, kind }, Acc::MinMax { ints: bi, floats: bf, strings: bs, bools: bb, kind: bk, .. }) => {
                if kind.is_none() {
                    *kind = bk;
                }
                let min = *min;
                for i in 0..bi.len() {
                    let g = mapping[i] as usize;
                    if let Some(v) = bi[i] {
                        if ints[g].is_none_or(|o| if min { v < o } else { v > o }) {
                            ints[g] = Some(v);
                        }
                    }
                    if let Some(v) = bf[i] {
                        if floats[g].is_none_or(|o| if min { v < o } else { v > o }) {
                            floats[g] = Some(v);
                        }
                    }
                    if let Some(v) = &bs[i] {
                        if strings[g].as_deref().is_none_or(|o| if min { v.as_str() < o } else { v.as_str() > o }) {
                            strings[g] = Some(v.clone());
                        }
                    }
                    if let Some(v) = bb[i] {
                        if bools[g].is_none_or(|o| if min { !v & o } else { v & !o }) {
                            bools[g] = Some(v);
                        }
                    }
                }
            }
            _ => return Err(TesseraError::Internal("merging different accumulators".into())),
        }
        Ok(())
    }

    fn finish(self, order: &[usize], ty: Type) -> Result<ArrayRef> {
        let dt = arrow_type(ty);
        match self {
            Acc::Count(c) => Ok(cast_to(&(Arc::new(Int64Array::from_iter_values(order.iter().map(|&g| c[g]))) as ArrayRef), ty)?),
            Acc::Sum { func, ints, floats, counts, float, scale } => {
                let float = float.unwrap_or(false);
                match (func, float) {
                    (AggFunc::Sum, true) => {
                        let v: Float64Array = order.iter().map(|&g| (counts[g] > 0).then_some(floats[g])).collect();
                        cast_to(&(Arc::new(v) as ArrayRef), ty)
                    }
                    (AggFunc::Sum, false) => int_result(order.iter().map(|&g| (counts[g] > 0).then_some(ints[g])), ty, &dt),
                    (_, true) => {
                        let v: Float64Array =
                            order.iter().map(|&g| (counts[g] > 0).then(|| floats[g] / counts[g] as f64)).collect();
                        cast_to(&(Arc::new(v) as ArrayRef), ty)
                    }
                    (_, false) => match ty {
                        Type::Decimal { precision, scale: out_scale } => {
                            let mul = 10i128
                                .checked_pow((out_scale - scale).max(0) as u32)
                                .ok_or_else(|| TesseraError::Execution("arithmetic overflow in AVG".into()))?;
                            let mut vals = Vec::with_capacity(order.len());
                            for &g in order {
                                if counts[g] == 0 {
                                    vals.push(None);
                                    continue;
                                }
                                let v = ints[g]
                                    .checked_mul(mul)
                                    .ok_or_else(|| TesseraError::Execution("arithmetic overflow in AVG".into()))?
                                    / counts[g] as i128;
                                vals.push(Some(v));
                            }
                            let a = Decimal128Array::from(vals).with_precision_and_scale(precision, out_scale).map_err(arrow_err)?;
                            a.validate_decimal_precision(precision)
                                .map_err(|e| TesseraError::Execution(format!("arithmetic overflow in AVG: {e}")))?;
                            Ok(Arc::new(a))
                        }
                        _ => {
                            let v: Float64Array = order
                                .iter()
                                .map(|&g| (counts[g] > 0).then(|| ints[g] as f64 / counts[g] as f64))
                                .collect();
                            cast_to(&(Arc::new(v) as ArrayRef), ty)
                        }
                    },
                }
            }
            Acc::MinMax { ints, floats, strings, bools, kind, .. } => match kind {
                None => Ok(new_null_array(&dt, order.len())),
                Some(0) => int_result(order.iter().map(|&g| ints[g]), ty, &dt),
                Some(1) => {
                    let v: Float64Array = order.iter().map(|&g| floats[g]).collect();
                    cast_to(&(Arc::new(v) as ArrayRef), ty)
                }
                Some(2) => {
                    let v: StringArray = order.iter().map(|&g| strings[g].as_deref()).collect();
                    cast_to(&(Arc::new(v) as ArrayRef), ty)
                }
                _ => {
                    let v: BooleanArray = order.iter().map(|&g| bools[g]).collect();
                    Ok(Arc::new(v))
                }
            },
        }
    }
}

/// An exact integer result as the SQL type `ty`; a value that does not fit is an error.
fn int_result(values: impl Iterator<Item = Option<i128>>, ty: Type, dt: &DataType) -> Result<ArrayRef> {
    match ty {
        Type::Decimal { precision, scale } => {
            let a = Decimal128Array::from_iter(values).with_precision_and_scale(precision, scale).map_err(arrow_err)?;
            a.validate_decimal_precision(precision)
                .map_err(|e| TesseraError::Execution(format!("arithmetic overflow: {e}")))?;
            Ok(Arc::new(a))
        }
        _ => {
            let mut v = Vec::new();
            for x in values {
                v.push(match x {
                    None => None,
                    Some(x) => Some(i64::try_from(x).map_err(|_| {
                        TesseraError::Execution(format!("arithmetic overflow: {x} does not fit in {ty}"))
                    })?),
                });
            }
            let a: ArrayRef = Arc::new(Int64Array::from(v));
            if a.data_type() == dt {
                Ok(a)
            } else {
                arrow::compute::cast_with_options(&a, dt, &crate::eval::STRICT)
                    .map_err(|e| TesseraError::Execution(format!("arithmetic overflow: {e}")))
            }
        }
    }
}
