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

/// A filter: one row test per conjunct.
pub fn filter(b: &mut Builder<'_>, predicate: &Expr, fields: &[Field]) -> Lowered<()> {
    for c in predicate.conjuncts() {
        let c = expr(b, c, fields)?;
        b.reject(cx!["!(", c, ")"]);
    }
    Ok(())
}

/// A projection: the new layout's columns, computed ones as values of their own.
pub fn project(b: &mut Builder<'_>, exprs: &[Expr], out: &[Field], fields: &[Field]) -> Lowered<()> {
    let mut vals = Vec::new();
    let mut dicts = Vec::new();
    for (e, f) in exprs.iter().zip(out) {
        dicts.push(match e {
            Expr::Column { index, .. } => b.dicts.get(*index).copied().flatten(),
            _ => None,
        });
        match e {
            Expr::Column { index, .. } => vals.push(b.layout.get(*index).cloned().ok_or_else(|| Reason::Inconsistent(format!("projected column #{index}")))?),
            e => {
                let w = value_width(f.ty).filter(|_| f.ty != Type::Utf8).ok_or(Reason::ValueType(f.ty))?;
                let v = expr(b, e, fields)?;
                let n = b.var(w.ctype(), "p", cx![format!("({})(", w.c()), v, ")"]);
                vals.push(Val::Local(n, w));
            }
        }
    }
    b.layout = vals;
    b.dicts = dicts;
    Ok(())
}

/// A C expression of type `long long` (integers) or `bool` (predicates).
pub fn expr(b: &mut Builder<'_>, e: &Expr, input: &[Field]) -> Lowered<CExpr> {
    Ok(match e {
        Expr::Column { index, .. } => super::scan::column(b, *index)?.0,
        Expr::Literal { value, ty } => match value {
            Scalar::Int(v) => b.literal(*v),
            Scalar::Date32(d) => b.literal(i64::from(*d)),
            Scalar::Decimal(d) if value_width(*ty) == Some(Width::I64) => b.literal(i64::try_from(*d).map_err(|_| Reason::Literal(format!("decimal {d} wider than 64 bits")))?),
            Scalar::Boolean(v) => CExpr::text(v.to_string()),
            other => return Err(Reason::Literal(format!("{other:?}"))),
        },
        Expr::Cmp { op, left, right } => {
            if left.ty(input) == Type::Utf8 || right.ty(input) == Type::Utf8 {
                return Err(Reason::StringComparison);
            }
            let (l, r) = (expr(b, left, input)?, expr(b, right, input)?);
            let op = match op {
                CmpOp::Eq | CmpOp::NotDistinct => "==",
                CmpOp::NotEq | CmpOp::Distinct => "!=",
                CmpOp::Lt => "<",
                CmpOp::LtEq => "<=",
                CmpOp::Gt => ">",
                CmpOp::GtEq => ">=",
            };
            cx!["((long long)(", l, format!(") {op} (long long)("), r, "))"]
        }
        Expr::And(x, y) => cx!["(", expr(b, x, input)?, " && ", expr(b, y, input)?, ")"],
        Expr::Or(x, y) => cx!["(", expr(b, x, input)?, " || ", expr(b, y, input)?, ")"],
        Expr::Not(x) => cx!["(!", expr(b, x, input)?, ")"],
        // Columns on the GPU are not nullable (checked when the kernel is generated).
        Expr::IsNull(_) => CExpr::text("false"),
        Expr::IsNotNull(_) => CExpr::text("true"),
        Expr::InList { expr: x, list, negated } => {
            let x = expr(b, x, input)?;
            let test = in_list(b, x, list)?;
            if *negated { cx!["(!", test, ")"] } else { test }
        }
        Expr::Arith { op, left, right, ty } => arith(b, *op, left, right, *ty, input)?,
        Expr::Negate(x) => cx!["(-(long long)(", expr(b, x, input)?, "))"],
        Expr::Cast { expr: x, ty } => cast(b, x, *ty, input)?,
        Expr::DatePart { part: tessera_ir::DatePart::Year, expr: x } => cx!["tessera_year((long long)(", expr(b, x, input)?, "))"],
        Expr::Case { when_then, otherwise, ty } => {
            if value_width(*ty).is_none() || *ty == Type::Utf8 {
                return Err(Reason::Case(format!("CASE of type {ty}")));
            }
            // The conditional operator evaluates only the branch taken, as SQL does.
            let Some(o) = otherwise else { return Err(Reason::Case("CASE without ELSE (NULL)".into())) };
            let mut s = b.branch(|b| expr(b, o, input))?;
            for (w, t) in when_then.iter().rev() {
                let c = expr(b, w, input)?;
                let v = b.branch(|b| expr(b, t, input))?;
                s = cx!["((", c, ") ? (long long)(", v, ") : (long long)(", s, "))"];
            }
            s
        }
        Expr::Like { expr: x, pattern, negated, case_insensitive } => {
            let test = like(b, x, pattern, *case_insensitive)?;
            if *negated { cx!["(!", test, ")"] } else { test }
        }
        Expr::Subquery { .. } => return Err(Reason::Subquery),
        other => return Err(Reason::Expression(other.to_string())),
    })
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
/// for long lists, else one compare a value.
fn in_list(b: &mut Builder<'_>, x: CExpr, list: &[Scalar]) -> Lowered<CExpr> {
    let mut vals = Vec::new();
    for s in list {
        match s {
            Scalar::Int(v) => vals.push(*v),
            Scalar::Date32(d) => vals.push(i64::from(*d)),
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

/// Integer and decimal `+ - *`, exact in 128 bits and checked against the result type's
/// range (overflow raises `flags[0]`).
fn arith(b: &mut Builder<'_>, op: ArithOp, left: &Expr, right: &Expr, ty: Type, input: &[Field]) -> Lowered<CExpr> {
    let (lt, rt) = (left.ty(input), right.ty(input));
    let scale = |t: Type| match t {
        Type::Decimal { scale, .. } => Some(scale),
        t if t.is_integer() => Some(0),
        _ => None,
    };
    let (Some(ls), Some(rs), Some(os)) = (scale(lt), scale(rt), scale(ty)) else {
        return Err(Reason::Arithmetic(format!("arithmetic on {lt} and {rt}")));
    };
    let (l, r) = (expr(b, left, input)?, expr(b, right, input)?);
    let pow = |k: i8| 10i128.pow(k.max(0) as u32);
    let value = match op {
        ArithOp::Add | ArithOp::Sub => {
            if ls.max(rs) != os {
                return Err(Reason::Arithmetic("decimal add/sub with a rescaled result".into()));
            }
            let sym = if op == ArithOp::Add { "+" } else { "-" };
            cx!["((__int128)(", l, format!(") * {} {sym} (__int128)(", pow(os - ls)), r, format!(") * {})", pow(os - rs))]
        }
        ArithOp::Mul => {
            if ls + rs != os {
                return Err(Reason::Arithmetic("decimal multiplication with a rescaled result".into()));
            }
            cx!["((__int128)(", l, ") * (__int128)(", r, "))"]
        }
        other => return Err(Reason::Arithmetic(other.to_string())),
    };
    let (lo, hi) = value_bounds(ty).ok_or(Reason::ValueType(ty))?;
    Ok(b.var(CType::LongLong, "a", cx!["tessera_checked(", value, format!(", {lo}LL, {hi}LL, flags)")]))
}

/// CAST between integer and decimal types, checked against the target's range.
fn cast(b: &mut Builder<'_>, x: &Expr, ty: Type, input: &[Field]) -> Lowered<CExpr> {
    let from = x.ty(input);
    let v = expr(b, x, input)?;
    let scale = match (from, ty) {
        (f, t) if f == t => return Ok(v),
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
    let value = match scale {
        None => cx!["tessera_checked((__int128)(", v, format!("), {lo}LL, {hi}LL, flags)")],
        Some(k) => cx!["tessera_checked((__int128)(", v, format!(") * {k}, {lo}LL, {hi}LL, flags)")],
    };
    Ok(b.var(CType::LongLong, "k", value))
}
