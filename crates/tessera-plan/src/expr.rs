//! DataFusion expressions → IR expressions over a pipeline's layout.
//!
//! The layout of a pipeline is, column for column, the DataFusion schema of the plan
//! node it stands for, so a column reference becomes its index in that schema. Anything
//! without an IR form returns `Err(reason)`, and the plan node holding it is handed to
//! DataFusion.

use std::sync::Arc;

use datafusion::arrow::datatypes::DataType;
use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::common::{DFSchema, ScalarValue};
use datafusion::logical_expr::{BinaryExpr, Expr as DfExpr, ExprSchemable, Operator as DfOp, Subquery};
use tessera_ir::{ArithOp, CmpOp, DatePart, Expr, ResultId, Scalar, Type};

use crate::types::{ir_scalar, ir_type};

/// Arithmetic that fails on overflow, as a function: what constant arithmetic that
/// overflows becomes before DataFusion's constant folding, which wraps (see
/// tessera-engine's `checked` module). The pipelines run it as their ordinary (checked)
/// arithmetic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CheckedOp {
    /// `l + r`.
    Add,
    /// `l - r`.
    Sub,
    /// `l * r`.
    Mul,
    /// `-x`.
    Neg,
}

impl CheckedOp {
    /// The function's name.
    pub fn function_name(self) -> &'static str {
        match self {
            CheckedOp::Add => "tessera_checked_add",
            CheckedOp::Sub => "tessera_checked_sub",
            CheckedOp::Mul => "tessera_checked_mul",
            CheckedOp::Neg => "tessera_checked_neg",
        }
    }

    fn of_function(name: &str) -> Option<CheckedOp> {
        [CheckedOp::Add, CheckedOp::Sub, CheckedOp::Mul, CheckedOp::Neg].into_iter().find(|op| op.function_name() == name)
    }
}

/// The uncorrelated scalar subqueries an expression may read: each one planned into a
/// result of its own, found by the address of its plan (which outlives the planning).
#[derive(Debug, Clone, Default)]
pub struct Subqueries {
    planned: Vec<(usize, ResultId)>,
    /// Accept every uncorrelated subquery, as a placeholder result.
    any: bool,
}

impl Subqueries {
    /// The uncorrelated scalar subqueries in `exprs`, each once, in order.
    pub fn in_exprs(exprs: &[DfExpr]) -> Vec<Subquery> {
        let mut out: Vec<Subquery> = Vec::new();
        for e in exprs {
            let _ = e.apply(|x| {
                if let DfExpr::ScalarSubquery(sq) = x {
                    if sq.outer_ref_columns.is_empty() && !out.iter().any(|o| Arc::ptr_eq(&o.subquery, &sq.subquery)) {
                        out.push(sq.clone());
                    }
                }
                Ok(TreeNodeRecursion::Continue)
            });
        }
        out
    }

    /// These, accepting every other uncorrelated subquery too (as a placeholder result):
    /// for checking whether an expression has an IR form before its subqueries are
    /// planned.
    pub fn or_any(&self) -> Subqueries {
        Subqueries { planned: self.planned.clone(), any: true }
    }

    /// Whether `sq` was planned already.
    pub fn contains(&self, sq: &Subquery) -> bool {
        let key = Arc::as_ptr(&sq.subquery) as usize;
        self.planned.iter().any(|(k, _)| *k == key)
    }

    /// Records that `sq` was planned into `result`.
    pub fn add(&mut self, sq: &Subquery, result: ResultId) {
        self.planned.push((Arc::as_ptr(&sq.subquery) as usize, result));
    }

    fn result_of(&self, sq: &Subquery) -> Option<ResultId> {
        if !sq.outer_ref_columns.is_empty() {
            return None;
        }
        let key = Arc::as_ptr(&sq.subquery) as usize;
        match self.planned.iter().find(|(k, _)| *k == key) {
            Some((_, r)) => Some(*r),
            None => self.any.then_some(ResultId::MAX),
        }
    }
}

/// Translates `e`, whose columns refer to `schema` (scalar subqueries have no IR form).
pub fn translate(e: &DfExpr, schema: &DFSchema) -> Result<Expr, String> {
    translate_in(e, schema, &Subqueries::default())
}

/// Translates `e`, whose columns refer to `schema` and whose uncorrelated scalar
/// subqueries are those of `sq`.
pub fn translate_in(e: &DfExpr, schema: &DFSchema, sq: &Subqueries) -> Result<Expr, String> {
    let translate = |x: &DfExpr, schema: &DFSchema| translate_in(x, schema, sq);
    let ty_of = |x: &DfExpr| -> Result<Type, String> {
        let dt = x.get_type(schema).map_err(|err| err.to_string())?;
        ir_type(&dt)
    };
    let t = |x: &DfExpr| -> Result<Box<Expr>, String> { Ok(Box::new(translate(x, schema)?)) };
    Ok(match e {
        DfExpr::Alias(a) => translate(&a.expr, schema)?,
        DfExpr::Column(c) => {
            let index = schema.index_of_column(c).map_err(|err| err.to_string())?;
            Expr::Column { index, name: c.flat_name() }
        }
        DfExpr::Literal(v, _) => {
            let (value, ty) = ir_scalar(v)?;
            Expr::Literal { value, ty }
        }
        DfExpr::BinaryExpr(BinaryExpr { left, op, right }) => {
            let arith = match op {
                DfOp::Plus => Some(ArithOp::Add),
                DfOp::Minus => Some(ArithOp::Sub),
                DfOp::Multiply => Some(ArithOp::Mul),
                DfOp::Divide => Some(ArithOp::Div),
                DfOp::Modulo => Some(ArithOp::Mod),
                _ => None,
            };
            if let Some(op) = arith {
                let ty = ty_of(e)?;
                let (lt, rt) = (ty_of(left)?, ty_of(right)?);
                if !lt.is_numeric() || !rt.is_numeric() {
                    return Err(format!("arithmetic on {lt} and {rt} is not in the IR yet"));
                }
                return Ok(Expr::Arith { op, left: t(left)?, right: t(right)?, ty });
            }
            let cmp = match op {
                DfOp::Eq => Some(CmpOp::Eq),
                DfOp::NotEq => Some(CmpOp::NotEq),
                DfOp::Lt => Some(CmpOp::Lt),
                DfOp::LtEq => Some(CmpOp::LtEq),
                DfOp::Gt => Some(CmpOp::Gt),
                DfOp::GtEq => Some(CmpOp::GtEq),
                DfOp::IsDistinctFrom => Some(CmpOp::Distinct),
                DfOp::IsNotDistinctFrom => Some(CmpOp::NotDistinct),
                _ => None,
            };
            if let Some(op) = cmp {
                let (lt, rt) = (ty_of(left)?, ty_of(right)?);
                if !comparable(lt, rt) {
                    return Err(format!("comparison of {lt} with {rt} is not in the IR yet"));
                }
                return Ok(Expr::Cmp { op, left: t(left)?, right: t(right)? });
            }
            match op {
                DfOp::And => Expr::And(t(left)?, t(right)?),
                DfOp::Or => Expr::Or(t(left)?, t(right)?),
                other => return Err(format!("operator {other} is not in the IR yet")),
            }
        }
        DfExpr::Not(x) => Expr::Not(t(x)?),
        DfExpr::IsNull(x) => Expr::IsNull(t(x)?),
        DfExpr::IsNotNull(x) => Expr::IsNotNull(t(x)?),
        DfExpr::Negative(x) => {
            if !ty_of(x)?.is_numeric() {
                return Err("negation of a non-number".into());
            }
            Expr::Negate(t(x)?)
        }
        DfExpr::Between(b) => {
            let (et, lt, ht) = (ty_of(&b.expr)?, ty_of(&b.low)?, ty_of(&b.high)?);
            if !comparable(et, lt) || !comparable(et, ht) {
                return Err("BETWEEN over mixed types is not in the IR yet".into());
            }
            let x = translate(&b.expr, schema)?;
            let ge = Expr::Cmp { op: CmpOp::GtEq, left: Box::new(x.clone()), right: t(&b.low)? };
            let le = Expr::Cmp { op: CmpOp::LtEq, left: Box::new(x), right: t(&b.high)? };
            let both = Expr::And(Box::new(ge), Box::new(le));
            if b.negated { Expr::Not(Box::new(both)) } else { both }
        }
        DfExpr::InList(l) => {
            let et = ty_of(&l.expr)?;
            let mut list = Vec::with_capacity(l.list.len());
            for item in &l.list {
                let DfExpr::Literal(v, _) = strip_alias(item) else {
                    return Err("IN list with non-constant items is not in the IR yet".into());
                };
                let v = cast_literal(v, et)?;
                list.push(v);
            }
            Expr::InList { expr: t(&l.expr)?, list, negated: l.negated }
        }
        DfExpr::Like(like) => {
            if like.escape_char.is_some() {
                return Err("LIKE with ESCAPE is not in the IR yet".into());
            }
            let DfExpr::Literal(p, _) = strip_alias(&like.pattern) else {
                return Err("LIKE with a non-constant pattern is not in the IR yet".into());
            };
            let Some(pattern) = p.try_as_str().flatten() else {
                return Err("LIKE pattern is not a string".into());
            };
            if ty_of(&like.expr)? != Type::Utf8 {
                return Err("LIKE on a non-string".into());
            }
            Expr::Like {
                expr: t(&like.expr)?,
                pattern: pattern.to_string(),
                negated: like.negated,
                case_insensitive: like.case_insensitive,
            }
        }
        DfExpr::Case(c) => {
            let ty = ty_of(e)?;
            let mut when_then = Vec::with_capacity(c.when_then_expr.len());
            for (w, th) in &c.when_then_expr {
                let cond = match &c.expr {
                    Some(base) => {
                        let (bt, wt) = (ty_of(base)?, ty_of(w)?);
                        if !comparable(bt, wt) {
                            return Err("CASE operand and WHEN value of different types".into());
                        }
                        Expr::Cmp { op: CmpOp::Eq, left: t(base)?, right: t(w)? }
                    }
                    None => translate(w, schema)?,
                };
                when_then.push((cond, cast_to(translate(th, schema)?, ty_of(th)?, ty)));
            }
            let otherwise = match &c.else_expr {
                Some(x) => Some(Box::new(cast_to(translate(x, schema)?, ty_of(x)?, ty))),
                None => None,
            };
            Expr::Case { when_then, otherwise, ty }
        }
        DfExpr::Cast(c) => {
            let to = ir_type(c.field.data_type())?;
            let from = ty_of(&c.expr)?;
            if !castable(from, to) {
                return Err(format!("CAST from {from} to {to} is not in the IR yet"));
            }
            Expr::Cast { expr: t(&c.expr)?, ty: to }
        }
        DfExpr::ScalarFunction(f) => scalar_function(e, f.name(), &f.args, schema, sq)?,
        DfExpr::ScalarSubquery(subquery) => match sq.result_of(subquery) {
            Some(result) => Expr::Subquery { result, ty: ty_of(e)? },
            None => return Err("a correlated scalar subquery is not in the IR yet".into()),
        },
        other => return Err(format!("expression {} is not in the IR yet", other.variant_name())),
    })
}

fn scalar_function(e: &DfExpr, name: &str, args: &[DfExpr], schema: &DFSchema, sq: &Subqueries) -> Result<Expr, String> {
    let translate = |x: &DfExpr, schema: &DFSchema| translate_in(x, schema, sq);
    let out = ir_type(&e.get_type(schema).map_err(|err| err.to_string())?)?;
    if let Some(op) = CheckedOp::of_function(name) {
        let t = |x: &DfExpr| -> Result<Box<Expr>, String> { Ok(Box::new(translate(x, schema)?)) };
        let numeric = |x: &DfExpr| -> Result<bool, String> {
            Ok(ir_type(&x.get_type(schema).map_err(|err| err.to_string())?)?.is_numeric())
        };
        return match (op, args) {
            (CheckedOp::Neg, [x]) if numeric(x)? => Ok(Expr::Negate(t(x)?)),
            (CheckedOp::Add | CheckedOp::Sub | CheckedOp::Mul, [l, r]) if numeric(l)? && numeric(r)? => {
                let op = match op {
                    CheckedOp::Add => ArithOp::Add,
                    CheckedOp::Sub => ArithOp::Sub,
                    _ => ArithOp::Mul,
                };
                Ok(Expr::Arith { op, left: t(l)?, right: t(r)?, ty: out })
            }
            _ => Err(format!("{name} over these arguments is not in the IR yet")),
        };
    }
    match (name, args) {
        ("date_part" | "datepart", [part, x]) => {
            let DfExpr::Literal(p, _) = strip_alias(part) else {
                return Err("date_part with a non-constant part".into());
            };
            let part = match p.try_as_str().flatten().map(|s| s.to_ascii_lowercase()).as_deref() {
                Some("year") => DatePart::Year,
                Some("quarter") => DatePart::Quarter,
                Some("month") => DatePart::Month,
                Some("day") => DatePart::Day,
                other => return Err(format!("date_part({other:?}) is not in the IR yet")),
            };
            let xt = ir_type(&x.get_type(schema).map_err(|err| err.to_string())?)?;
            if xt != Type::Date32 {
                return Err(format!("date_part over {xt} is not in the IR yet"));
            }
            let inner = Expr::DatePart { part, expr: Box::new(translate(x, schema)?) };
            Ok(cast_to(inner, Type::Int32, out))
        }
        ("substr" | "substring", [x, rest @ ..]) if !rest.is_empty() && rest.len() <= 2 => {
            let xt = ir_type(&x.get_type(schema).map_err(|err| err.to_string())?)?;
            if xt != Type::Utf8 {
                return Err("substring of a non-string".into());
            }
            let int = |a: &DfExpr| -> Result<i64, String> {
                match strip_alias(a) {
                    DfExpr::Literal(v, _) => match v.cast_to(&DataType::Int64) {
                        Ok(ScalarValue::Int64(Some(i))) => Ok(i),
                        _ => Err("substring bounds must be integer constants".into()),
                    },
                    _ => Err("substring with non-constant bounds is not in the IR yet".into()),
                }
            };
            let start = int(&rest[0])?;
            let length = match rest.get(1) {
                Some(l) => {
                    let l = int(l)?;
                    if l < 0 {
                        return Err("negative substring length".into());
                    }
                    Some(l)
                }
                None => None,
            };
            Ok(Expr::Substring { expr: Box::new(translate(x, schema)?), start, length })
        }
        _ => Err(format!("function {name} is not in the IR yet")),
    }
}

fn strip_alias(e: &DfExpr) -> &DfExpr {
    match e {
        DfExpr::Alias(a) => strip_alias(&a.expr),
        e => e,
    }
}

/// Whether the backends compare these two types directly.
fn comparable(a: Type, b: Type) -> bool {
    match (a, b) {
        (Type::Decimal { scale: s1, .. }, Type::Decimal { scale: s2, .. }) => s1 == s2,
        (Type::Null, _) | (_, Type::Null) => true,
        (a, b) => a == b,
    }
}

/// Casts the backends implement (arrow's cast kernel, strict).
fn castable(from: Type, to: Type) -> bool {
    let simple = |t: Type| t.is_numeric() || matches!(t, Type::Boolean | Type::Null);
    (simple(from) && simple(to))
        || from == to
        || matches!((from, to), (Type::Utf8, Type::Date32) | (Type::Date32, Type::Utf8) | (Type::Null, _))
        || (to == Type::Utf8 && from.is_numeric())
}

fn cast_to(e: Expr, from: Type, to: Type) -> Expr {
    if from == to { e } else { Expr::Cast { expr: Box::new(e), ty: to } }
}

fn cast_literal(v: &ScalarValue, to: Type) -> Result<Scalar, String> {
    let dt = crate::types::arrow_type(to);
    let cast = if v.data_type() == dt { v.clone() } else { v.cast_to(&dt).map_err(|e| e.to_string())? };
    Ok(ir_scalar(&cast)?.0)
}
