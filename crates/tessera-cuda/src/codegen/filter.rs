//! Filters, projections and the expressions they compute: one row test per conjunct (so
//! later conjuncts' columns load only for the items earlier ones kept), integer and
//! decimal arithmetic checked against the result type's range, IN lists as ranges,
//! compares or a bitmap, CASE branches as lambdas.

use tessera_ir::{ArithOp, CmpOp, Expr, Field, Scalar, Type};

use super::builder::{Builder, Lowered, Val};
use super::ir::{CExpr, CType};
use super::layout::{Width, value_bounds, value_width};
use super::unsupported::Reason;
use crate::cx;

/// Whether `e`'s value is a 32-bit integer: a column (or computed value) of 32 bits, or
/// an integer or date literal that fits in 32 bits (decimals are 64-bit values). A
/// kernel's source holds which, so a literal that does not fit makes another kernel (the
/// plan cache is keyed by the statement's text, the kernel cache by the source).
fn is_32_bit(b: &Builder<'_>, e: &Expr) -> bool {
    match e {
        Expr::Column { index, .. } => match b.layout.get(*index) {
            Some(Val::Local(_, w)) => *w == Width::I32,
            Some(Val::Source(c)) => b.cols.get(*c).is_some_and(|c| super::scan::value_width(c) == Width::I32),
            None => false,
        },
        Expr::Literal { value: Scalar::Int(v), .. } => i32::try_from(*v).is_ok(),
        Expr::Literal { value: Scalar::Date32(_), .. } => true,
        _ => false,
    }
}

/// An upper bound of the magnitude of `e`'s value, where one is known from the kernel's
/// source alone: a 32-bit value's 2^31 (see [`is_32_bit`]; a literal counts by that class,
/// not its value, so literals of one class share a kernel), or a checked result's type
/// range (arithmetic and casts are checked against it). None for anything else: a 64-bit
/// column may hold any 64-bit value. Stricter than `aggregate::magnitude`, which bounds a
/// sum's values by their columns' declared types: an exact result rests on this one.
fn magnitude(b: &Builder<'_>, e: &Expr, input: &[Field]) -> Option<u128> {
    let range = |ty: Type| (ty != Type::Float64).then(|| value_bounds(ty)).flatten().map(|(lo, hi)| lo.unsigned_abs().max(hi.unsigned_abs()));
    match e {
        Expr::Column { .. } | Expr::Literal { value: Scalar::Int(_) | Scalar::Date32(_), .. } => is_32_bit(b, e).then_some(1 << 31),
        Expr::Literal { value: Scalar::Decimal(d), .. } => i32::try_from(*d).is_ok().then_some(1 << 31),
        Expr::Arith { ty, .. } => range(*ty),
        Expr::Cast { expr: x, ty } if x.ty(input) == *ty => magnitude(b, x, input),
        Expr::Cast { ty, .. } => range(*ty),
        _ => None,
    }
}

/// The largest magnitude every value in `lo ..= hi` has at least: a value of no larger
/// magnitude needs no check against the range.
fn inner_magnitude(lo: i128, hi: i128) -> u128 {
    if lo > 0 || hi < 0 { 0 } else { lo.unsigned_abs().min(hi.unsigned_abs()) }
}

/// `m` where a value of that magnitude is exact in 64 bits (below 2^63: `long long`
/// holds ±(2^63 − 1)).
fn fits_64(m: Option<u128>) -> Option<u128> {
    m.filter(|&m| m < 1 << 63)
}

/// `long long` value `v` checked against `lo ..= hi`, or `v` itself where its magnitude
/// `m` is known and every value that small lies in the range.
fn checked(v: CExpr, m: Option<u128>, lo: i128, hi: i128) -> CExpr {
    if m.is_some_and(|m| m <= inner_magnitude(lo, hi)) { v } else { cx!["tessera_checked64(", v, format!(", {lo}LL, {hi}LL, overflow)")] }
}

/// IN lists longer than this test a bitmap instead of comparing with each value. String
/// predicates over a dictionary become IN lists of codes (TPC-H's `NOT LIKE` over a
/// comment dictionary: about 15 000 codes); a chain of that many compares made a 300 KB
/// kernel NVRTC had not compiled after 5 minutes, while a bitmap is one load whatever the
/// list's length.
pub const IN_LIST_MAX_COMPARES: usize = 8;

/// IN lists spanning more values than this (max − min) keep the compares: the bitmap
/// travels with every launch (2^21 bits are 256 KiB). Twice the store's largest
/// dictionary (2^20 values, `tessera_storage::DICTIONARY_MAX_DISTINCT`, decided on a
/// distinct estimate with a few % of error), so a predicate over any dictionary's codes
/// is a bitmap.
pub const IN_LIST_MAX_BITMAP_BITS: u64 = 1 << 21;

/// IN lists of more values than this, spread too wide for a bitmap, stay on the CPU:
/// one compare a value would make a kernel NVRTC takes minutes over (see
/// [`IN_LIST_MAX_COMPARES`]).
pub const IN_LIST_MAX_SPREAD_VALUES: usize = 64;

/// A filter: one row test per conjunct; a conjunct that is NULL drops the row, as false
/// does.
pub fn filter(b: &mut Builder<'_>, predicate: &Expr, fields: &[Field]) -> Lowered<()> {
    for c in predicate.conjuncts() {
        let test = condition(b, c, fields)?;
        b.reject(cx!["!(", test, ")"]);
    }
    Ok(())
}

/// A projection: the new layout's columns, computed ones as values of their own.
pub fn project(b: &mut Builder<'_>, exprs: &[Expr], out: &[Field], fields: &[Field]) -> Lowered<()> {
    let mut vals = Vec::new();
    let mut dicts = Vec::new();
    let mut nulls = Vec::new();
    for (e, f) in exprs.iter().zip(out) {
        dicts.push(match e {
            Expr::Column { index, .. } => b.dicts.get(*index).copied().flatten(),
            _ => None,
        });
        match e {
            Expr::Column { index, .. } => {
                vals.push(b.layout.get(*index).cloned().ok_or_else(|| Reason::Inconsistent(format!("projected column #{index}")))?);
                nulls.push(b.nulls.get(*index).cloned().flatten());
            }
            e => {
                let w = value_width(f.ty).filter(|_| f.ty != Type::Utf8).ok_or(Reason::ValueType(f.ty))?;
                let (v, ok) = value(b, e, fields)?;
                let n = b.var(w.ctype(), "p", cx![format!("({})(", w.c()), v, ")"]);
                vals.push(Val::Local(n, w));
                nulls.push(ok.map(|ok| b.var(CType::Bool, "nv", ok)));
            }
        }
    }
    b.layout = vals;
    b.dicts = dicts;
    b.nulls = nulls;
    Ok(())
}

/// A C expression of type `long long` (integers) or `bool` (predicates) for a value that
/// is never NULL: one that may be (see [`Builder::nulls`]) is refused.
pub fn expr(b: &mut Builder<'_>, e: &Expr, input: &[Field]) -> Lowered<CExpr> {
    match value(b, e, input)? {
        (v, None) => Ok(v),
        (_, Some(_)) => Err(Reason::NullableValue(e.to_string())),
    }
}

/// The values of keys `keys` (of a join or a build) and, when any may be NULL, the
/// condition under which none is (a NULL key matches nothing).
pub fn keys(b: &mut Builder<'_>, keys: &[Expr], input: &[Field]) -> Lowered<(Vec<CExpr>, Option<CExpr>)> {
    let mut values = Vec::with_capacity(keys.len());
    let mut all = None;
    for k in keys {
        let (v, ok) = value(b, k, input)?;
        values.push(v);
        all = both(all, ok);
    }
    Ok((values, all.map(|ok| b.var(CType::Bool, "kn", ok))))
}

/// Drops the rows where `ok` (the condition of [`keys`] over `keys`) does not hold: rows
/// whose key is NULL, which match nothing. Key columns are never NULL after it.
pub fn reject_null_keys(b: &mut Builder<'_>, keys: &[Expr], ok: CExpr) {
    b.reject(cx!["!(", ok, ")"]);
    for k in keys {
        if let Expr::Column { index, .. } = k
            && let Some(n) = b.nulls.get_mut(*index)
        {
            *n = None;
        }
    }
}

/// Whether `e` may be NULL in the current layout (a column that may be is in it, other
/// than under IS \[NOT\] NULL or IS \[NOT\] DISTINCT FROM).
pub fn may_be_null(b: &Builder<'_>, e: &Expr) -> bool {
    match e {
        Expr::Column { index, .. } => b.nulls.get(*index).is_some_and(Option::is_some),
        Expr::IsNull(_) | Expr::IsNotNull(_) | Expr::Cmp { op: CmpOp::Distinct | CmpOp::NotDistinct, .. } => false,
        Expr::Case { when_then, otherwise, .. } => otherwise.as_deref().is_none_or(|o| case_may_be_null(b, when_then, o)),
        e => e.children().into_iter().any(|c| may_be_null(b, c)),
    }
}

/// Whether predicate `e` is TRUE: neither FALSE nor NULL (what a filter keeps, a CASE
/// condition takes and a join's residual matches on).
pub fn condition(b: &mut Builder<'_>, e: &Expr, input: &[Field]) -> Lowered<CExpr> {
    Ok(match value(b, e, input)? {
        (c, None) => c,
        (c, Some(ok)) => cx!["(", ok, " && ", c, ")"],
    })
}

/// A condition of not being NULL, `true` for a value that never is.
fn or_true(ok: Option<CExpr>) -> CExpr {
    ok.unwrap_or_else(|| CExpr::text("true"))
}

/// Both operands' conditions of not being NULL, when either has one: a value computed from
/// both is NULL when either is.
fn both(a: Option<CExpr>, b: Option<CExpr>) -> Option<CExpr> {
    match (a, b) {
        (Some(a), Some(b)) => Some(cx!["(", a, " && ", b, ")"]),
        (a, b) => a.or(b),
    }
}

/// The C expression of `e` (`long long` for integers, `bool` for predicates) and, when it
/// may be NULL, the condition under which it is not: SQL's three-valued logic over the
/// columns a LEFT OUTER join may have left NULL. Operators on a NULL give NULL, except
/// IS [NOT] NULL, IS [NOT] DISTINCT FROM, and AND/OR when the other side decides them
/// (FALSE AND NULL is FALSE, TRUE OR NULL is TRUE). A value that is NULL computes with
/// whatever its column holds there (0, or the build row's value where a residual failed):
/// the arithmetic stays defined, and an error flag it may raise only sends the query to
/// the CPU backend.
pub fn value(b: &mut Builder<'_>, e: &Expr, input: &[Field]) -> Lowered<(CExpr, Option<CExpr>)> {
    Ok(match e {
        Expr::Column { index, .. } => {
            let v = super::scan::value(b, *index)?.0;
            (v, b.nulls.get(*index).cloned().flatten())
        }
        Expr::Literal { value, ty } => (
            match value {
                Scalar::Int(v) => b.literal(*v),
                Scalar::Date32(d) => b.literal(i64::from(*d)),
                Scalar::Decimal(d) if value_width(*ty) == Some(Width::I64) => b.literal(i64::try_from(*d).map_err(|_| Reason::Literal(format!("decimal {d} wider than 64 bits")))?),
                Scalar::Boolean(v) => CExpr::text(v.to_string()),
                Scalar::Float(v) if *ty == Type::Float64 => b.literal(super::layout::float_literal_key(*v).ok_or_else(|| Reason::Literal(format!("{v:?}")))?),
                other => return Err(Reason::Literal(format!("{other:?}"))),
            },
            None,
        ),
        Expr::Cmp { op, left, right } => {
            if left.ty(input) == Type::Utf8 || right.ty(input) == Type::Utf8 {
                return Err(Reason::StringComparison);
            }
            let ((l, lo), (r, ro)) = (value(b, left, input)?, value(b, right, input)?);
            // Floats compare as their order keys, both sides (DataFusion gives both one type).
            if (left.ty(input) == Type::Float64) != (right.ty(input) == Type::Float64) {
                return Err(Reason::Arithmetic(format!("comparison of {} and {}", left.ty(input), right.ty(input))));
            }
            let sym = match op {
                CmpOp::Eq | CmpOp::NotDistinct => "==",
                CmpOp::NotEq | CmpOp::Distinct => "!=",
                CmpOp::Lt => "<",
                CmpOp::LtEq => "<=",
                CmpOp::Gt => ">",
                CmpOp::GtEq => ">=",
            };
            // Two 32-bit values compare in 32 bits: one instruction on the GPU where a
            // 64-bit compare of widened values takes three (SSB's and TPC-H's filters on
            // dates, quantities and discounts against literals).
            let cast = if b.compares_32 && is_32_bit(b, left) && is_32_bit(b, right) { "int" } else { "long long" };
            let cmp = cx![format!("(({cast})("), l, format!(") {sym} ({cast})("), r, "))"];
            match (op, both(lo.clone(), ro.clone())) {
                (_, None) => (cmp, None),
                // Never NULL: two NULLs are not distinct, a NULL and a value are.
                (CmpOp::NotDistinct | CmpOp::Distinct, Some(_)) => {
                    let (lo, ro) = (or_true(lo), or_true(ro));
                    let same = cx!["((", lo.clone(), " && ", ro.clone(), " && ", cmp, ") || (!", lo, " && !", ro, "))"];
                    (if *op == CmpOp::NotDistinct { same } else { cx!["(!", same, ")"] }, None)
                }
                (_, ok) => (cmp, ok),
            }
        }
        Expr::And(x, y) => {
            let ((vx, ox), (vy, oy)) = (value(b, x, input)?, value(b, y, input)?);
            let v = cx!["(", vx.clone(), " && ", vy.clone(), ")"];
            match (ox, oy) {
                (None, None) => (v, None),
                // FALSE whenever a side is a FALSE that is not NULL.
                (ox, oy) => {
                    let (ox, oy) = (or_true(ox), or_true(oy));
                    (v, Some(cx!["((", ox.clone(), " && ", oy.clone(), ") || (", ox, " && !", vx, ") || (", oy, " && !", vy, "))"]))
                }
            }
        }
        Expr::Or(x, y) => {
            let ((vx, ox), (vy, oy)) = (value(b, x, input)?, value(b, y, input)?);
            match (ox, oy) {
                (None, None) => (cx!["(", vx, " || ", vy, ")"], None),
                // TRUE whenever a side is a TRUE that is not NULL.
                (ox, oy) => {
                    let (ox, oy) = (or_true(ox), or_true(oy));
                    let (tx, ty) = (cx!["(", ox.clone(), " && ", vx, ")"], cx!["(", oy.clone(), " && ", vy, ")"]);
                    (cx!["(", tx.clone(), " || ", ty.clone(), ")"], Some(cx!["((", ox, " && ", oy, ") || ", tx, " || ", ty, ")"]))
                }
            }
        }
        Expr::Not(x) => {
            let (v, ok) = value(b, x, input)?;
            (cx!["(!", v, ")"], ok)
        }
        // A column that cannot be NULL is not evaluated.
        Expr::IsNull(x) if !may_be_null(b, x) => (CExpr::text("false"), None),
        Expr::IsNotNull(x) if !may_be_null(b, x) => (CExpr::text("true"), None),
        Expr::IsNull(x) | Expr::IsNotNull(x) => {
            // A column's condition needs not its value (a source column's validity bit).
            let ok = match x.as_ref() {
                Expr::Column { index, .. } => b.nulls.get(*index).cloned().flatten(),
                x => value(b, x, input)?.1,
            };
            let ok = or_true(ok);
            (if matches!(e, Expr::IsNull(_)) { cx!["(!", ok, ")"] } else { ok }, None)
        }
        Expr::InList { expr: x, list, negated } => {
            let (x, ok) = value(b, x, input)?;
            let test = in_list(b, x, list)?;
            (if *negated { cx!["(!", test, ")"] } else { test }, ok)
        }
        Expr::Arith { op, left, right, ty } => arith(b, *op, left, right, *ty, input)?,
        Expr::Negate(x) if x.ty(input) == Type::Float64 => {
            let (v, ok) = value(b, x, input)?;
            (b.var(CType::LongLong, "a", cx!["tessera_float_key(-tessera_float_of_key(", v, "))"]), ok)
        }
        Expr::Negate(x) => {
            let (v, ok) = value(b, x, input)?;
            (cx!["(-(long long)(", v, "))"], ok)
        }
        Expr::Cast { expr: x, ty } => cast(b, x, *ty, input)?,
        Expr::DatePart { part: tessera_ir::DatePart::Year, expr: x } => {
            let (v, ok) = value(b, x, input)?;
            (cx!["tessera_year((long long)(", v, "))"], ok)
        }
        Expr::Case { when_then, otherwise, ty } => {
            if value_width(*ty).is_none() || *ty == Type::Utf8 {
                return Err(Reason::Case(format!("CASE of type {ty}")));
            }
            // The conditional operator evaluates only the branch taken, as SQL does; a
            // condition that is NULL is not taken. A branch that may be NULL is lowered
            // a second time for its condition of not being NULL.
            let nullable = otherwise.as_deref().is_none_or(|o| case_may_be_null(b, when_then, o));
            let branch = |b: &mut Builder<'_>, x: &Expr| -> Lowered<(CExpr, CExpr)> {
                let v = b.branch(|b| expr_value(b, x, input))?;
                let ok = if nullable && may_be_null(b, x) { b.branch(|b| Ok(or_true(value(b, x, input)?.1)))? } else { CExpr::text("true") };
                Ok((v, ok))
            };
            // Without an ELSE, the ELSE is NULL.
            let (mut s, mut s_ok) = match otherwise {
                Some(o) => branch(b, o)?,
                None => (CExpr::text("0LL"), CExpr::text("false")),
            };
            for (w, t) in when_then.iter().rev() {
                let c = condition(b, w, input)?;
                let (v, v_ok) = branch(b, t)?;
                s = cx!["((", c.clone(), ") ? (long long)(", v, ") : (long long)(", s, "))"];
                if nullable {
                    s_ok = cx!["((", c, ") ? (", v_ok, ") : (", s_ok, "))"];
                }
            }
            (s, nullable.then_some(s_ok))
        }
        Expr::Like { expr: x, pattern, negated, case_insensitive } => {
            let test = like(b, x, pattern, *case_insensitive)?;
            // NULL over a NULL string (whose bytes are empty).
            let ok = match x.as_ref() {
                Expr::Column { index, .. } => b.nulls.get(*index).cloned().flatten(),
                _ => None,
            };
            (if *negated { cx!["(!", test, ")"] } else { test }, ok)
        }
        // NULL (a subquery without a row) never reaches a kernel: the launch sends the
        // query to the CPU backend instead, so the value is never NULL here.
        Expr::Subquery { result, ty } => match ty {
            Type::Boolean | Type::Int8 | Type::Int16 | Type::Int32 | Type::Int64 | Type::Date32 | Type::Decimal { .. } => (b.subquery(*result, *ty), None),
            _ => return Err(Reason::Subquery(*ty)),
        },
        other => return Err(Reason::Expression(other.to_string())),
    })
}

/// Whether a CASE may be NULL: one of its values may be, and nothing the CASE tested
/// proves it is not where it is taken — `WHEN x IS NOT NULL [AND ...] THEN x`, or
/// `WHEN x IS NULL THEN ... ELSE x` (an IS NULL is never NULL, so the ELSE is reached
/// only where it was false). These are COALESCE as DataFusion writes it and TPC-H q13's
/// count of a LEFT OUTER join's rows.
fn case_may_be_null(b: &Builder<'_>, when_then: &[(Expr, Expr)], otherwise: &Expr) -> bool {
    let tested_not_null = |w: &Expr, t: &Expr| w.conjuncts().iter().any(|c| matches!(c, Expr::IsNotNull(x) if x.as_ref() == t));
    let when_may = when_then.iter().any(|(w, t)| may_be_null(b, t) && !tested_not_null(w, t));
    let else_tested = when_then.iter().any(|(w, _)| matches!(w, Expr::IsNull(x) if x.as_ref() == otherwise));
    when_may || (may_be_null(b, otherwise) && !else_tested)
}

/// The value of `e`, NULL or not (a CASE branch's: its condition of not being NULL is
/// lowered apart).
fn expr_value(b: &mut Builder<'_>, e: &Expr, input: &[Field]) -> Lowered<CExpr> {
    Ok(value(b, e, input)?.0)
}

/// `x LIKE pattern` over a string column without a dictionary (`tessera_like` in
/// `strings.cuh` matches the row's bytes; the pattern is a C string literal of the
/// kernel). Over a dictionary-encoded column a LIKE never gets here: the executor binds
/// it to a test of codes first.
fn like(b: &mut Builder<'_>, x: &Expr, pattern: &str, case_insensitive: bool) -> Lowered<CExpr> {
    if case_insensitive {
        return Err(Reason::Like("ILIKE".into()));
    }
    // Without an ESCAPE clause a backslash escapes the next character (as DataFusion
    // reads it); the device matcher knows only '%' and '_'.
    if pattern.contains('\\') {
        return Err(Reason::Like(format!("LIKE '{pattern}' with an escape character")));
    }
    let Expr::Column { index, .. } = x else { return Err(Reason::Like("LIKE over a computed string".into())) };
    let c = match b.layout.get(*index) {
        Some(Val::Source(c)) if b.cols.get(*c).is_some_and(|col| col.width == Width::Str) => *c,
        _ => return Err(Reason::Like("LIKE over a column other than a source string column".into())),
    };
    let literal = c_string(pattern.as_bytes());
    if !b.strings.contains(&c) {
        b.strings.push(c);
    }
    Ok(b.var(CType::Bool, "lk", cx![format!("tessera_like(col{c}, col{c}_bytes, "), CExpr::row(), format!(", {literal}, {})", pattern.len())]))
}

/// `bytes` as a C string literal: printable ASCII as is, the rest (and `"`, `\`, `?`) as
/// three-digit octal escapes, which no following character can extend.
fn c_string(bytes: &[u8]) -> String {
    let mut s = String::from("\"");
    for &c in bytes {
        if (0x20..0x7f).contains(&c) && !matches!(c, b'"' | b'\\' | b'?') {
            s.push(char::from(c));
        } else {
            s.push_str(&format!("\\{c:03o}"));
        }
    }
    s.push('"');
    s
}

/// Membership of `x` in `list`: a range test when the values are consecutive, a bitmap
/// for long lists, else one compare a value. Doubles are their order keys, as `x` is
/// (DataFusion gives the list `x`'s type), so membership is the total order's equality.
fn in_list(b: &mut Builder<'_>, x: CExpr, list: &[Scalar]) -> Lowered<CExpr> {
    let mut vals = Vec::new();
    for s in list {
        match s {
            Scalar::Int(v) => vals.push(*v),
            Scalar::Date32(d) => vals.push(i64::from(*d)),
            Scalar::Float(f) => vals.push(super::layout::float_literal_key(*f).ok_or_else(|| Reason::Literal(format!("IN list item {s:?}")))?),
            other => return Err(Reason::Literal(format!("IN list item {other:?}"))),
        }
    }
    vals.sort_unstable();
    vals.dedup();
    let (Some(&first), Some(&last)) = (vals.first(), vals.last()) else { return Ok(CExpr::text("false")) };
    Ok(if last - first == vals.len() as i64 - 1 {
        let (lo, hi) = (b.literal(first), b.literal(last));
        cx!["((long long)(", &x, ") >= ", lo, " && (long long)(", &x, ") <= ", hi, ")"]
    } else if vals.len() > IN_LIST_MAX_COMPARES && (last as i128 - first as i128) < IN_LIST_MAX_BITMAP_BITS as i128 {
        in_bitmap(b, x, &vals)
    } else if vals.len() > IN_LIST_MAX_SPREAD_VALUES {
        return Err(Reason::Literal(format!("an IN list of {} values spread over more than {IN_LIST_MAX_BITMAP_BITS}", vals.len())));
    } else {
        let t = b.var(CType::LongLong, "in", x);
        let mut alts = CExpr::default();
        for (k, &v) in vals.iter().enumerate() {
            let sep = if k == 0 { "" } else { " || " };
            alts = cx![alts, sep, &t, " == ", b.literal(v)];
        }
        cx!["(", alts, ")"]
    })
}

/// Membership of `x` in the sorted, distinct `vals` as a bitmap over `vals[0] ..=
/// vals[last]` in `consts`: its first word, its length in bits, then the bits.
fn in_bitmap(b: &mut Builder<'_>, x: CExpr, vals: &[i64]) -> CExpr {
    let (lo, hi) = (vals[0], vals[vals.len() - 1]);
    let bits = (hi - lo) as usize + 1;
    let mut words = vec![0u64; bits.div_ceil(64)];
    for &v in vals {
        let d = (v - lo) as usize;
        words[d / 64] |= 1u64 << (d % 64);
    }
    let base = b.consts.len();
    b.consts.push(lo);
    b.consts.push(bits as i64);
    b.consts.extend(words.iter().map(|&w| w as i64));
    let d = b.var(CType::LongLong, "in", cx!["(long long)(", x, format!(") - consts[{base}]")]);
    cx![
        "((unsigned long long)(",
        &d,
        format!(") < (unsigned long long)consts[{}] && ((consts[{} + (", base + 1, base + 2),
        &d,
        " >> 6)] >> (",
        &d,
        " & 63)) & 1LL) != 0)"
    ]
}

/// Integer and decimal `+ - *` and integer `/ %`, exact in 128 bits and checked against
/// the result type's range (overflow raises `flags[0]`, and so does a zero divisor: the
/// query then runs on the CPU, which reports it).
fn arith(b: &mut Builder<'_>, op: ArithOp, left: &Expr, right: &Expr, ty: Type, input: &[Field]) -> Lowered<(CExpr, Option<CExpr>)> {
    let (lt, rt) = (left.ty(input), right.ty(input));
    if ty == Type::Float64 {
        return float_arith(b, op, left, right, input);
    }
    let scale = |t: Type| match t {
        Type::Decimal { scale, .. } => Some(scale),
        t if t.is_integer() => Some(0),
        _ => None,
    };
    let (Some(ls), Some(rs), Some(os)) = (scale(lt), scale(rt), scale(ty)) else {
        return Err(Reason::Arithmetic(format!("arithmetic on {lt} and {rt}")));
    };
    let ((l, lo_ok), (r, ro)) = (value(b, left, input)?, value(b, right, input)?);
    let (lo, hi) = value_bounds(ty).ok_or(Reason::ValueType(ty))?;
    let pow = |k: i8| 10i128.pow(k.max(0) as u32);
    // Where both operands' magnitudes are known small enough, the exact result fits 64
    // bits and is computed in them (one IMAD where 128 bits take about 20 instructions,
    // and a check that it may leave out): SSB's products and sums of 32-bit columns.
    // The value, and the bound of its magnitude where it is computed in 64 bits.
    let (ml, mr) = (magnitude(b, left, input), magnitude(b, right, input));
    let (value, m64) = match op {
        ArithOp::Add | ArithOp::Sub => {
            if ls.max(rs) != os {
                return Err(Reason::Arithmetic("decimal add/sub with a rescaled result".into()));
            }
            let sym = if op == ArithOp::Add { "+" } else { "-" };
            let (pl, pr) = (pow(os - ls), pow(os - rs));
            match fits_64(ml.zip(mr).and_then(|(ml, mr)| ml.checked_mul(pl as u128)?.checked_add(mr.checked_mul(pr as u128)?))) {
                Some(m) => (cx!["((long long)(", l, format!(") * {pl}LL {sym} (long long)("), r, format!(") * {pr}LL)")], Some(m)),
                None => (cx!["((__int128)(", l, format!(") * {pl} {sym} (__int128)("), r, format!(") * {pr})")], None),
            }
        }
        ArithOp::Mul => {
            if ls + rs != os {
                return Err(Reason::Arithmetic("decimal multiplication with a rescaled result".into()));
            }
            match fits_64(ml.zip(mr).and_then(|(ml, mr)| ml.checked_mul(mr))) {
                Some(m) => (cx!["((long long)(", l, ") * (long long)(", r, "))"], Some(m)),
                None => (cx!["((__int128)(", l, ") * (__int128)(", r, "))"], None),
            }
        }
        ArithOp::Div if (ls, rs, os) != (0, 0, 0) => {
            // Arrow's decimal division, whose result type DataFusion plans: the dividend
            // times 10^(4 + rs) divided by the divisor, truncated toward zero, at scale
            // ls + 4. Up to rs = 14 the factor fits 64 bits and the scaled dividend 128.
            if os != ls + 4 || !(0..=14).contains(&rs) {
                return Err(Reason::Arithmetic(format!("decimal division at scales {ls} / {rs} into {os}")));
            }
            let quotient = cx!["tessera_decimal_div((__int128)(", l, format!(") * {}LL, (long long)(", pow(4 + rs)), r, "), flags)"];
            (unless_null(both(lo_ok.clone(), ro.clone()), quotient), None)
        }
        ArithOp::Mod if (ls, rs, os) != (0, 0, 0) => {
            // Arrow's decimal remainder: both operands at the larger scale, the remainder
            // truncated (the dividend's sign), at that scale.
            if os != ls.max(rs) || ls < 0 || rs < 0 || ls.max(rs) > 18 {
                return Err(Reason::Arithmetic(format!("decimal % at scales {ls} and {rs} into {os}")));
            }
            let remainder = cx![
                "tessera_decimal_rem((__int128)(",
                l,
                format!(") * {}LL, (__int128)(", pow(os - ls)),
                r,
                format!(") * {}LL, flags)", pow(os - rs))
            ];
            (unless_null(both(lo_ok.clone(), ro.clone()), remainder), None)
        }
        ArithOp::Div | ArithOp::Mod => {
            if (ls, rs, os) != (0, 0, 0) {
                return Err(Reason::Arithmetic(format!("{op} of decimals")));
            }
            // The type's smallest value (`value_bounds` leaves i64::MIN out), written so
            // that C reads no literal out of range.
            let min = type_min(ty).ok_or(Reason::ValueType(ty))?;
            let quotient = cx!["tessera_div((long long)(", l, "), (long long)(", r, format!("), ({}LL - 1LL), {}, flags)", min + 1, op == ArithOp::Mod)];
            (unless_null(both(lo_ok.clone(), ro.clone()), quotient), None)
        }
    };
    let value = match m64 {
        Some(m) => checked(value, Some(m), lo, hi),
        None => cx!["tessera_checked(", value, format!(", {lo}LL, {hi}LL, overflow)")],
    };
    Ok((b.var(CType::LongLong, "a", value), both(lo_ok, ro)))
}

/// A division's or remainder's 128-bit value, computed only where its operands are not
/// NULL (`ok`): a NULL operand's value means nothing, so it is not divided and raises no
/// flag (0 stands in).
fn unless_null(ok: Option<CExpr>, value: CExpr) -> CExpr {
    match ok {
        Some(ok) => cx!["((", ok, ") ? ", value, " : (__int128)0)"],
        None => value,
    }
}

/// `+ - * / %` of doubles (DataFusion casts both operands to double first): IEEE 754 as
/// the CPU computes it, a zero divisor giving an infinity or NaN, never an error. The
/// `_rn` intrinsics round each operation on its own: NVRTC would otherwise fuse a product
/// and a sum into one FMA, whose single rounding the CPU's two do not match.
fn float_arith(b: &mut Builder<'_>, op: ArithOp, left: &Expr, right: &Expr, input: &[Field]) -> Lowered<(CExpr, Option<CExpr>)> {
    let (lt, rt) = (left.ty(input), right.ty(input));
    if lt != Type::Float64 || rt != Type::Float64 {
        return Err(Reason::Arithmetic(format!("arithmetic on {lt} and {rt}")));
    }
    let f = match op {
        ArithOp::Add => "__dadd_rn",
        ArithOp::Sub => "__dsub_rn",
        ArithOp::Mul => "__dmul_rn",
        ArithOp::Div => "__ddiv_rn",
        // C's fmod, exact as Rust's `%` of doubles is (the dividend's sign; NaN for 0).
        ArithOp::Mod => "fmod",
    };
    let ((l, lo), (r, ro)) = (value(b, left, input)?, value(b, right, input)?);
    let v = cx![format!("tessera_float_key({f}(tessera_float_of_key("), l, "), tessera_float_of_key(", r, ")))"];
    Ok((b.var(CType::LongLong, "a", v), both(lo, ro)))
}

/// The smallest value of integer type `ty`.
fn type_min(ty: Type) -> Option<i64> {
    Some(match ty {
        Type::Int8 => i64::from(i8::MIN),
        Type::Int16 => i64::from(i16::MIN),
        Type::Int32 => i64::from(i32::MIN),
        Type::Int64 => i64::MIN,
        Type::UInt8 | Type::UInt16 | Type::UInt32 | Type::UInt64 => 0,
        _ => return None,
    })
}

/// CAST between integer and decimal types, checked against the target's range.
fn cast(b: &mut Builder<'_>, x: &Expr, ty: Type, input: &[Field]) -> Lowered<(CExpr, Option<CExpr>)> {
    let from = x.ty(input);
    let (v, ok) = value(b, x, input)?;
    let scale = match (from, ty) {
        (f, t) if f == t => return Ok((v, ok)),
        // Rounded to the nearest double, as Rust's `as f64` (and Arrow's cast) round.
        (f, Type::Float64) if f.is_integer() => return Ok((b.var(CType::LongLong, "k", cx!["tessera_float_key((double)(long long)(", v, "))"]), ok)),
        // v / 10^scale, the unscaled value rounded to a double first, as Arrow casts a
        // decimal to a double.
        (Type::Decimal { scale, .. }, Type::Float64) if (0..=22).contains(&scale) => {
            return Ok((b.var(CType::LongLong, "k", cx!["tessera_float_key(__ddiv_rn((double)(long long)(", v, format!("), 1e{scale}))")]), ok));
        }
        // round(v · 10^scale), as Arrow casts a double to a decimal; 10^scale is exact as a
        // double up to 10^22.
        (Type::Float64, Type::Decimal { scale, .. }) if (0..=22).contains(&scale) => {
            let (lo, hi) = value_bounds(ty).ok_or(Reason::ValueType(ty))?;
            return Ok((b.var(CType::LongLong, "k", cx!["tessera_float_to_decimal(", v, format!(", 1e{scale}, {lo}LL, {hi}LL, flags)")]), ok));
        }
        (f, t) if f.is_integer() && t.is_integer() => None,
        (f, Type::Decimal { scale, .. }) if f.is_integer() || matches!(f, Type::Decimal { .. }) => {
            let fs = match f {
                Type::Decimal { scale, .. } => scale,
                _ => 0,
            };
            if scale < fs {
                return Err(Reason::Arithmetic("decimal cast that drops digits".into()));
            }
            Some(10i128.pow((scale - fs) as u32))
        }
        (f, t) => return Err(Reason::Cast { from: f, to: t }),
    };
    let (lo, hi) = value_bounds(ty).ok_or(Reason::ValueType(ty))?;
    // Values are 64-bit at most: an unscaled one is checked in 64 bits, and a scaled one
    // known small enough scales in them. One whose magnitude the target's range holds is
    // not checked at all (an Int32 widened to Int64: SSB's sums).
    let m = magnitude(b, x, input);
    let value = match scale {
        None => checked(cx!["((long long)(", v, "))"], m, lo, hi),
        Some(k) => match fits_64(m.and_then(|m| m.checked_mul(k as u128))) {
            Some(m) => checked(cx!["((long long)(", v, format!(") * {k}LL)")], Some(m), lo, hi),
            None => cx!["tessera_checked((__int128)(", v, format!(") * {k}, {lo}LL, {hi}LL, overflow)")],
        },
    };
    Ok((b.var(CType::LongLong, "k", value), ok))
}
