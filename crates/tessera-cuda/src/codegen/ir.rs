//! The kernel IR: what a generated kernel does for each of a thread's rows ("items"), as
//! statements over typed per-item values, before it is cut into stages and printed.
//!
//! Operators lower into one flat list of [`Stmt`]s. Every C expression is a [`CExpr`]: text
//! pieces and references to values and to the row number, so that the passes
//! (`passes.rs`) know exactly which statement defines and which uses a value, without
//! reading C. The printer (`print.rs`) turns references into `name[i]` (a register array
//! over the items) or `name` (a constant inside a CASE branch) at the very end.

/// A value of the kernel: index into [`KernelIr::values`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ValueId(pub usize);

/// The C type of a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CType {
    /// `bool`
    Bool,
    /// `int` (slots and group numbers: at most `i32::MAX`)
    Int,
    /// `int32_t` (32-bit columns)
    Int32,
    /// `int64_t` (64-bit columns)
    Int64,
    /// `long long` (computed values, hash-table slots)
    LongLong,
    /// `unsigned long long` (packed hash keys)
    ULongLong,
}

impl CType {
    /// The type's name in C.
    pub fn c(self) -> &'static str {
        match self {
            CType::Bool => "bool",
            CType::Int => "int",
            CType::Int32 => "int32_t",
            CType::Int64 => "int64_t",
            CType::LongLong => "long long",
            CType::ULongLong => "unsigned long long",
        }
    }

    /// Bytes a value takes (in a warp queue, see `defer.rs`).
    pub fn bytes(self) -> usize {
        match self {
            CType::Bool => 1,
            CType::Int | CType::Int32 => 4,
            CType::Int64 | CType::LongLong | CType::ULongLong => 8,
        }
    }
}

/// Where a value lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// One per item: a register array `name[ITEMS]` declared for the tile.
    Item,
    /// A constant inside a CASE branch, evaluated for one item.
    Local,
}

/// A declared value.
#[derive(Debug, Clone, PartialEq)]
pub struct Value {
    /// Its name in C (unique among the kernel's per-item values).
    pub name: String,
    /// Its C type.
    pub ty: CType,
    /// Where it lives.
    pub scope: Scope,
}

/// What global memory a value is loaded from: the stage ends before its first use.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Load {
    /// Source column `column`, first loaded where an estimated share `pass` of the rows is
    /// still selected.
    Column {
        /// Index into the kernel's source columns.
        column: usize,
        /// Estimated share of rows still selected there.
        pass: f64,
    },
    /// A payload column of a probed table, at the slot the probe found.
    Payload {
        /// The probe (operator order).
        probe: usize,
        /// Its payload column.
        column: usize,
    },
    /// A probed table's membership bit.
    Bitmap {
        /// The probe (operator order).
        probe: usize,
    },
    /// The key in a probed hash table's first slot for the item's key.
    HashKey {
        /// The probe (operator order).
        probe: usize,
    },
    /// The key in a hash aggregation's first slot for the item's group keys.
    GroupKey,
    /// The first row of a chained table's chain for the item's key.
    Heads {
        /// The probe (operator order).
        probe: usize,
    },
}

/// A piece of a C expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Piece {
    /// C text that names no value.
    Text(String),
    /// A value.
    Value(ValueId),
    /// The item's row number (`r`).
    Row,
    /// A CASE branch that needs statements: evaluated for the item by a lambda.
    Branch(Box<Branch>),
}

/// Statements of a CASE branch and the value they compute (`long long`); or, `over` a
/// chain of build rows, whether the value is true for any of them (`bool`).
#[derive(Debug, Clone, PartialEq)]
pub struct Branch {
    /// The branch's statements (definitions of [`Scope::Local`] values).
    pub stmts: Vec<Stmt>,
    /// Its value.
    pub result: CExpr,
    /// Evaluated once per row of a chain, until it holds.
    pub over: Option<Chain>,
}

/// A walk along a chained table's rows with the same key (a 1:N join's matches).
#[derive(Debug, Clone, PartialEq)]
pub struct Chain {
    /// The C variable holding the current build row (named in the branch's statements).
    pub var: String,
    /// The first row (−1: none).
    pub first: CExpr,
    /// The table's link array: `next[row]` is the row after `row` (−1: none).
    pub next: String,
}

/// A C expression as pieces (see [`cx!`](crate::cx)).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CExpr(pub Vec<Piece>);

/// Something an expression uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Use {
    /// A value.
    Value(ValueId),
    /// The row number.
    Row,
}

impl CExpr {
    /// Plain text.
    pub fn text(s: impl Into<String>) -> CExpr {
        CExpr(vec![Piece::Text(s.into())])
    }

    /// A reference to `v`.
    pub fn value(v: ValueId) -> CExpr {
        CExpr(vec![Piece::Value(v)])
    }

    /// The item's row number.
    pub fn row() -> CExpr {
        CExpr(vec![Piece::Row])
    }

    /// Calls `f` for everything the expression uses, branches included.
    pub fn for_each_use(&self, f: &mut dyn FnMut(Use)) {
        for p in &self.0 {
            match p {
                Piece::Text(_) => {}
                Piece::Value(v) => f(Use::Value(*v)),
                Piece::Row => f(Use::Row),
                Piece::Branch(b) => {
                    if let Some(c) = &b.over {
                        c.first.for_each_use(f);
                    }
                    for s in &b.stmts {
                        s.for_each_use(f);
                    }
                    b.result.for_each_use(f);
                }
            }
        }
    }

    /// Whether the expression uses `u`.
    pub fn uses(&self, u: Use) -> bool {
        let mut found = false;
        self.for_each_use(&mut |x| found |= x == u);
        found
    }
}

/// Appends to a [`CExpr`]: what [`cx!`](crate::cx) accepts.
pub trait Append {
    /// Appends `self` to `e`.
    fn append_to(self, e: &mut CExpr);
}

impl Append for &str {
    fn append_to(self, e: &mut CExpr) {
        if let Some(Piece::Text(t)) = e.0.last_mut() {
            t.push_str(self);
        } else {
            e.0.push(Piece::Text(self.to_string()));
        }
    }
}

impl Append for String {
    fn append_to(self, e: &mut CExpr) {
        self.as_str().append_to(e);
    }
}

impl Append for &String {
    fn append_to(self, e: &mut CExpr) {
        self.as_str().append_to(e);
    }
}

impl Append for CExpr {
    fn append_to(self, e: &mut CExpr) {
        for p in self.0 {
            match p {
                Piece::Text(t) => t.append_to(e),
                other => e.0.push(other),
            }
        }
    }
}

impl Append for &CExpr {
    fn append_to(self, e: &mut CExpr) {
        self.clone().append_to(e);
    }
}

/// Builds a [`CExpr`](crate::codegen::ir::CExpr) from text (`&str`, `String`) and
/// expressions, in order: `cx!["((long long)(", l, ") < ", r, ")"]`.
#[macro_export]
macro_rules! cx {
    ($($part:expr),* $(,)?) => {{
        #[allow(unused_mut)]
        let mut e = $crate::codegen::ir::CExpr::default();
        $( $crate::codegen::ir::Append::append_to($part, &mut e); )*
        e
    }};
}

/// One statement, run for each item still selected.
#[derive(Debug, Clone, PartialEq)]
pub enum Stmt {
    /// Defines `value` as `expr`, a load from global memory when `load` says so.
    Def {
        /// The value defined (once, here).
        value: ValueId,
        /// Its definition.
        expr: CExpr,
        /// What it loads, if it is a load.
        load: Option<Load>,
    },
    /// Drops the item when `cond` holds: it takes part in no later statement.
    Reject {
        /// The condition.
        cond: CExpr,
        /// An error flag raised with it (a build key out of range, a duplicate key):
        /// then no row test, but an error.
        flag: Option<usize>,
        /// Estimated share of the rows still selected after it.
        pass: f64,
    },
    /// A statement for its effect (atomics, stores), with its `;`.
    Effect(CExpr),
    /// Every item becomes one item per row of a chain (a 1:N join's matches): `matched`
    /// takes each row from `first` on (the statements after this one run once per row).
    /// Ends a stage; the rest of the pipeline runs on a warp queue of (item, row) pairs
    /// (`defer.rs`).
    Expand {
        /// The first row of the item's chain (at least 0: the item has a match).
        first: CExpr,
        /// The table's link array (`next[row]`, −1 at the end).
        next: String,
        /// The value that holds the row in the statements after.
        matched: ValueId,
        /// A LEFT OUTER join's: an item without a match stays, once, with `matched`
        /// negative (its build columns NULL).
        outer: bool,
    },
    /// Ends the stage: what follows is a new loop over the items.
    Cut,
}

impl Stmt {
    /// Calls `f` for everything the statement uses.
    pub fn for_each_use(&self, f: &mut dyn FnMut(Use)) {
        match self {
            Stmt::Def { expr, .. } | Stmt::Effect(expr) | Stmt::Expand { first: expr, .. } => expr.for_each_use(f),
            Stmt::Reject { cond, .. } => cond.for_each_use(f),
            Stmt::Cut => {}
        }
    }

    /// Whether the statement uses `u`.
    pub fn uses(&self, u: Use) -> bool {
        let mut found = false;
        self.for_each_use(&mut |x| found |= x == u);
        found
    }
}

/// A kernel before printing: its values and the per-item statements in order, plus the
/// code each thread runs before its first tile and after its last (shared tables, warp
/// reductions, merges).
#[derive(Debug, Clone, Default)]
pub struct KernelIr {
    /// Every value, in the order they were declared.
    pub values: Vec<Value>,
    /// The per-item statements (top level), in order.
    pub stmts: Vec<Stmt>,
    /// C statements before the tile loop (block-level setup), each line ending in `\n`.
    pub prologue: String,
    /// C statements after the tile loop (reductions and merges), each line ending in `\n`.
    pub epilogue: String,
}

impl KernelIr {
    /// The value `v`.
    pub fn value(&self, v: ValueId) -> &Value {
        &self.values[v.0]
    }
}

/// The statements of one stage: one unrolled loop over the items still selected.
pub type Stage = Vec<Stmt>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expressions_know_what_they_use_branches_included() {
        let (a, b) = (ValueId(0), ValueId(1));
        let branch = Branch { stmts: vec![Stmt::Def { value: b, expr: crate::cx!["col0[", CExpr::row(), "]"], load: None }], result: CExpr::value(b), over: None };
        let e = crate::cx!["(", CExpr::value(a), " + ", CExpr(vec![Piece::Branch(Box::new(branch))]), ")"];
        assert!(e.uses(Use::Value(a)) && e.uses(Use::Value(b)) && e.uses(Use::Row));
        assert!(!crate::cx!["1 + 2"].uses(Use::Row));
        // Adjacent text merges into one piece.
        assert_eq!(crate::cx!["a", "b", String::from("c")].0, vec![Piece::Text("abc".into())]);
    }
}
