//! Typed scalar expressions evaluated inside a pipeline, over its current row layout.
//!
//! Column references are positions in the layout of the operator's input. Every
//! expression knows its result type ([`Expr::ty`]). SQL semantics are the backends'
//! contract: NULL propagates through arithmetic and comparisons, AND/OR/NOT are
//! three-valued, and integer and decimal arithmetic that overflows its result type is an
//! error, never a wrapped value.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::types::{Field, Scalar, Type};

/// Arithmetic operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ArithOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/` (integer division truncates; division by zero is an error)
    Div,
    /// `%`
    Mod,
}

/// Comparison operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum CmpOp {
    /// `=`
    Eq,
    /// `<>`
    NotEq,
    /// `<`
    Lt,
    /// `<=`
    LtEq,
    /// `>`
    Gt,
    /// `>=`
    GtEq,
    /// `IS NOT DISTINCT FROM` (NULL equals NULL, never NULL)
    NotDistinct,
    /// `IS DISTINCT FROM`
    Distinct,
}

/// Fields of a date that `EXTRACT`/`date_part` can take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum DatePart {
    /// Calendar year.
    Year,
    /// Quarter 1..=4.
    Quarter,
    /// Month 1..=12.
    Month,
    /// Day of month 1..=31.
    Day,
}

/// A scalar expression.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Expr {
    /// The input column at `index`; `name` is for display only.
    Column {
        /// Position in the input layout.
        index: usize,
        /// Display name.
        name: String,
    },
    /// A constant.
    Literal {
        /// Value.
        value: Scalar,
        /// Type.
        ty: Type,
    },
    /// `left op right`; operands are already of the types the operator expects, and
    /// `ty` is the result type (overflowing it is an error).
    Arith {
        /// Operator.
        op: ArithOp,
        /// Left operand.
        left: Box<Expr>,
        /// Right operand.
        right: Box<Expr>,
        /// Result type.
        ty: Type,
    },
    /// `left op right` → boolean; operands have the same type.
    Cmp {
        /// Operator.
        op: CmpOp,
        /// Left operand.
        left: Box<Expr>,
        /// Right operand.
        right: Box<Expr>,
    },
    /// Three-valued AND.
    And(Box<Expr>, Box<Expr>),
    /// Three-valued OR.
    Or(Box<Expr>, Box<Expr>),
    /// Three-valued NOT.
    Not(Box<Expr>),
    /// `x IS NULL`.
    IsNull(Box<Expr>),
    /// `x IS NOT NULL`.
    IsNotNull(Box<Expr>),
    /// `x [NOT] IN (list)`, SQL semantics (NULL when not found and the list has a NULL).
    InList {
        /// Tested value.
        expr: Box<Expr>,
        /// Constants of the same type as `expr`.
        list: Vec<Scalar>,
        /// NOT IN.
        negated: bool,
    },
    /// `x [NOT] [I]LIKE pattern` with `%` and `_` wildcards.
    Like {
        /// String operand.
        expr: Box<Expr>,
        /// Constant pattern.
        pattern: String,
        /// NOT LIKE.
        negated: bool,
        /// ILIKE.
        case_insensitive: bool,
    },
    /// Searched CASE: the first `when` that is true gives the value, else `otherwise`
    /// (NULL when absent).
    Case {
        /// (condition, value) pairs.
        when_then: Vec<(Expr, Expr)>,
        /// ELSE value.
        otherwise: Option<Box<Expr>>,
        /// Result type.
        ty: Type,
    },
    /// `CAST(x AS ty)`; a value that does not fit is an error.
    Cast {
        /// Operand.
        expr: Box<Expr>,
        /// Target type.
        ty: Type,
    },
    /// `-x` (overflow is an error).
    Negate(Box<Expr>),
    /// `EXTRACT(part FROM date)` → Int32 in this IR (the planner casts to the SQL type).
    DatePart {
        /// Field.
        part: DatePart,
        /// Date operand.
        expr: Box<Expr>,
    },
    /// `SUBSTRING(x FROM start [FOR length])`, 1-based, in characters.
    Substring {
        /// String operand.
        expr: Box<Expr>,
        /// First character (1-based; may be ≤ 0 as in SQL).
        start: i64,
        /// Number of characters.
        length: Option<i64>,
    },
    /// The value of an uncorrelated scalar subquery: the one column of an earlier
    /// step's result, NULL when that result has no row (more than one row is an error).
    /// The executor replaces it with a literal before the pipeline runs
    /// ([`crate::Pipeline::bind_subqueries`]), so backends never evaluate it.
    Subquery {
        /// The result holding the subquery's rows.
        result: crate::ResultId,
        /// Its type.
        ty: Type,
    },
}

impl Expr {
    /// A column reference.
    pub fn col(index: usize, name: impl Into<String>) -> Expr {
        Expr::Column { index, name: name.into() }
    }

    /// A typed literal.
    pub fn lit(value: Scalar, ty: Type) -> Expr {
        Expr::Literal { value, ty }
    }

    /// The result type over an input layout.
    pub fn ty(&self, input: &[Field]) -> Type {
        match self {
            Expr::Column { index, .. } => input.get(*index).map(|f| f.ty).unwrap_or(Type::Null),
            Expr::Literal { ty, .. }
            | Expr::Arith { ty, .. }
            | Expr::Case { ty, .. }
            | Expr::Cast { ty, .. }
            | Expr::Subquery { ty, .. } => *ty,
            Expr::Cmp { .. }
            | Expr::And(..)
            | Expr::Or(..)
            | Expr::Not(_)
            | Expr::IsNull(_)
            | Expr::IsNotNull(_)
            | Expr::InList { .. }
            | Expr::Like { .. } => Type::Boolean,
            Expr::Negate(e) => e.ty(input),
            Expr::DatePart { .. } => Type::Int32,
            Expr::Substring { .. } => Type::Utf8,
        }
    }

    /// Whether the result can be NULL (conservative).
    pub fn nullable(&self, input: &[Field]) -> bool {
        match self {
            Expr::Column { index, .. } => input.get(*index).is_none_or(|f| f.nullable),
            Expr::Literal { value, .. } => matches!(value, Scalar::Null),
            Expr::IsNull(_) | Expr::IsNotNull(_) => false,
            Expr::Cmp { op: CmpOp::NotDistinct | CmpOp::Distinct, .. } => false,
            Expr::Case { .. } | Expr::Subquery { .. } => true,
            Expr::Arith { op: ArithOp::Div | ArithOp::Mod, left, right, .. } => {
                left.nullable(input) || right.nullable(input)
            }
            other => other.children().iter().any(|c| c.nullable(input)),
        }
    }

    /// Direct sub-expressions.
    pub fn children(&self) -> Vec<&Expr> {
        match self {
            Expr::Column { .. } | Expr::Literal { .. } | Expr::Subquery { .. } => vec![],
            Expr::Arith { left, right, .. } | Expr::Cmp { left, right, .. } => vec![left, right],
            Expr::And(a, b) | Expr::Or(a, b) => vec![a, b],
            Expr::Not(e) | Expr::IsNull(e) | Expr::IsNotNull(e) | Expr::Negate(e) => vec![e],
            Expr::InList { expr, .. }
            | Expr::Like { expr, .. }
            | Expr::Cast { expr, .. }
            | Expr::DatePart { expr, .. }
            | Expr::Substring { expr, .. } => vec![expr],
            Expr::Case { when_then, otherwise, .. } => {
                let mut v: Vec<&Expr> = when_then.iter().flat_map(|(w, t)| [w, t]).collect();
                if let Some(o) = otherwise {
                    v.push(o);
                }
                v
            }
        }
    }

    /// Whether evaluating it can never raise an error, whatever the row: no arithmetic
    /// (overflow), cast (a value that does not fit) or subquery (more than one row) in
    /// it. A backend may then skip it for rows that another test drops, without the
    /// query's outcome depending on the order of the tests.
    pub fn cannot_fail(&self) -> bool {
        let this = match self {
            Expr::Arith { .. } | Expr::Cast { .. } | Expr::Negate(_) | Expr::Subquery { .. } | Expr::Substring { .. } => false,
            Expr::Column { .. }
            | Expr::Literal { .. }
            | Expr::Cmp { .. }
            | Expr::And(..)
            | Expr::Or(..)
            | Expr::Not(_)
            | Expr::IsNull(_)
            | Expr::IsNotNull(_)
            | Expr::InList { .. }
            | Expr::Like { .. }
            | Expr::DatePart { .. }
            | Expr::Case { .. } => true,
        };
        this && self.children().into_iter().all(Expr::cannot_fail)
    }

    /// Input columns referenced, in order of first appearance, without repeats.
    pub fn columns(&self) -> Vec<usize> {
        let mut out = Vec::new();
        self.collect_columns(&mut out);
        out
    }

    fn collect_columns(&self, out: &mut Vec<usize>) {
        if let Expr::Column { index, .. } = self {
            if !out.contains(index) {
                out.push(*index);
            }
        }
        for c in self.children() {
            c.collect_columns(out);
        }
    }

    /// The same expression with every column index mapped through `f`.
    pub fn map_columns(&self, f: &dyn Fn(usize) -> usize) -> Expr {
        self.rewrite(&|e| match e {
            Expr::Column { index, name } => Some(Expr::Column { index: f(*index), name: name.clone() }),
            _ => None,
        })
    }

    /// The results of the scalar subqueries it reads.
    pub fn subqueries(&self) -> Vec<crate::ResultId> {
        let mut out = Vec::new();
        self.collect_subqueries(&mut out);
        out
    }

    fn collect_subqueries(&self, out: &mut Vec<crate::ResultId>) {
        if let Expr::Subquery { result, .. } = self {
            if !out.contains(result) {
                out.push(*result);
            }
        }
        for c in self.children() {
            c.collect_subqueries(out);
        }
    }

    /// The same expression with every sub-expression for which `f` returns a
    /// replacement replaced (top-down: a replaced node's children are not visited).
    pub fn rewrite(&self, f: &dyn Fn(&Expr) -> Option<Expr>) -> Expr {
        if let Some(new) = f(self) {
            return new;
        }
        let m = |e: &Expr| Box::new(e.rewrite(f));
        match self {
            Expr::Column { .. } | Expr::Literal { .. } | Expr::Subquery { .. } => self.clone(),
            Expr::Arith { op, left, right, ty } => Expr::Arith { op: *op, left: m(left), right: m(right), ty: *ty },
            Expr::Cmp { op, left, right } => Expr::Cmp { op: *op, left: m(left), right: m(right) },
            Expr::And(a, b) => Expr::And(m(a), m(b)),
            Expr::Or(a, b) => Expr::Or(m(a), m(b)),
            Expr::Not(e) => Expr::Not(m(e)),
            Expr::IsNull(e) => Expr::IsNull(m(e)),
            Expr::IsNotNull(e) => Expr::IsNotNull(m(e)),
            Expr::Negate(e) => Expr::Negate(m(e)),
            Expr::InList { expr, list, negated } => Expr::InList { expr: m(expr), list: list.clone(), negated: *negated },
            Expr::Like { expr, pattern, negated, case_insensitive } => Expr::Like {
                expr: m(expr),
                pattern: pattern.clone(),
                negated: *negated,
                case_insensitive: *case_insensitive,
            },
            Expr::Cast { expr, ty } => Expr::Cast { expr: m(expr), ty: *ty },
            Expr::DatePart { part, expr } => Expr::DatePart { part: *part, expr: m(expr) },
            Expr::Substring { expr, start, length } => Expr::Substring { expr: m(expr), start: *start, length: *length },
            Expr::Case { when_then, otherwise, ty } => Expr::Case {
                when_then: when_then.iter().map(|(w, t)| (w.rewrite(f), t.rewrite(f))).collect(),
                otherwise: otherwise.as_ref().map(|o| m(o)),
                ty: *ty,
            },
        }
    }

    /// Splits a conjunction into its terms.
    pub fn conjuncts(&self) -> Vec<&Expr> {
        match self {
            Expr::And(a, b) => {
                let mut v = a.conjuncts();
                v.extend(b.conjuncts());
                v
            }
            e => vec![e],
        }
    }

    /// The conjunction of `terms` (None when empty).
    pub fn and_all(terms: Vec<Expr>) -> Option<Expr> {
        terms.into_iter().reduce(|a, b| Expr::And(Box::new(a), Box::new(b)))
    }
}

impl fmt::Display for ArithOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ArithOp::Add => "+",
            ArithOp::Sub => "-",
            ArithOp::Mul => "*",
            ArithOp::Div => "/",
            ArithOp::Mod => "%",
        })
    }
}

impl fmt::Display for CmpOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CmpOp::Eq => "=",
            CmpOp::NotEq => "<>",
            CmpOp::Lt => "<",
            CmpOp::LtEq => "<=",
            CmpOp::Gt => ">",
            CmpOp::GtEq => ">=",
            CmpOp::NotDistinct => "IS NOT DISTINCT FROM",
            CmpOp::Distinct => "IS DISTINCT FROM",
        })
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Column { index, name } => write!(f, "{name}#{index}"),
            Expr::Literal { value, ty } => f.write_str(&value.display(*ty)),
            Expr::Arith { op, left, right, .. } => write!(f, "({left} {op} {right})"),
            Expr::Cmp { op, left, right } => write!(f, "{left} {op} {right}"),
            Expr::And(a, b) => write!(f, "({a} AND {b})"),
            Expr::Or(a, b) => write!(f, "({a} OR {b})"),
            Expr::Not(e) => write!(f, "NOT {e}"),
            Expr::IsNull(e) => write!(f, "{e} IS NULL"),
            Expr::IsNotNull(e) => write!(f, "{e} IS NOT NULL"),
            Expr::Negate(e) => write!(f, "-{e}"),
            Expr::InList { expr, list, negated } => {
                let ty = Type::Null;
                let items: Vec<String> = list.iter().map(|s| s.display(ty)).collect();
                write!(f, "{expr} {}IN ({})", if *negated { "NOT " } else { "" }, items.join(", "))
            }
            Expr::Like { expr, pattern, negated, case_insensitive } => write!(
                f,
                "{expr} {}{} '{pattern}'",
                if *negated { "NOT " } else { "" },
                if *case_insensitive { "ILIKE" } else { "LIKE" }
            ),
            Expr::Case { when_then, otherwise, .. } => {
                f.write_str("CASE")?;
                for (w, t) in when_then {
                    write!(f, " WHEN {w} THEN {t}")?;
                }
                if let Some(o) = otherwise {
                    write!(f, " ELSE {o}")?;
                }
                f.write_str(" END")
            }
            Expr::Cast { expr, ty } => write!(f, "CAST({expr} AS {ty})"),
            Expr::DatePart { part, expr } => write!(f, "EXTRACT({} FROM {expr})", format!("{part:?}").to_uppercase()),
            Expr::Substring { expr, start, length } => match length {
                Some(l) => write!(f, "SUBSTRING({expr} FROM {start} FOR {l})"),
                None => write!(f, "SUBSTRING({expr} FROM {start})"),
            },
            Expr::Subquery { result, .. } => write!(f, "(subquery r{result})"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Scalar, Type};

    fn int(v: i64) -> Expr {
        Expr::lit(Scalar::Int(v), Type::Int64)
    }

    fn cmp(op: CmpOp, l: Expr, r: Expr) -> Expr {
        Expr::Cmp { op, left: Box::new(l), right: Box::new(r) }
    }

    #[test]
    fn only_tests_without_arithmetic_casts_or_subqueries_cannot_fail() {
        let range = Expr::And(Box::new(cmp(CmpOp::GtEq, Expr::col(0, "d"), int(1))), Box::new(cmp(CmpOp::LtEq, Expr::col(0, "d"), int(3))));
        assert!(range.cannot_fail());
        let listed = Expr::Not(Box::new(Expr::InList { expr: Box::new(Expr::col(1, "q")), list: vec![Scalar::Int(1)], negated: false }));
        assert!(listed.cannot_fail());
        // `d * 2 < 3` overflows for some d; so does a cast, deep inside an OR.
        let product = Expr::Arith { op: ArithOp::Mul, left: Box::new(Expr::col(0, "d")), right: Box::new(int(2)), ty: Type::Int64 };
        assert!(!cmp(CmpOp::Lt, product, int(3)).cannot_fail());
        let cast = Expr::Cast { expr: Box::new(Expr::col(0, "d")), ty: Type::Int32 };
        assert!(!Expr::Or(Box::new(range.clone()), Box::new(Expr::IsNull(Box::new(cast)))).cannot_fail());
        assert!(!cmp(CmpOp::Eq, Expr::col(0, "d"), Expr::Subquery { result: 2, ty: Type::Int64 }).cannot_fail());
    }
}
