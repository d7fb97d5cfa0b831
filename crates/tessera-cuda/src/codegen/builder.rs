//! The state of lowering one pipeline into the kernel IR: the values and statements so
//! far, what each column of the operators' current row layout is, and the kernel's
//! parameters beyond the fixed ones. Operator files (`scan.rs`, `filter.rs`, `probe.rs`,
//! sinks) add statements through it.

use super::abi::Param;
use super::ir::{Branch, CExpr, CType, Chain, KernelIr, Load, Piece, Scope, Stmt, Value, ValueId};
use super::layout::{DictRef, GpuColumn, Width};
use super::unsupported::Reason;

/// What lowering a part of a pipeline gives, or why it cannot run on the GPU.
pub type Lowered<T> = Result<T, Reason>;

/// A column of the current row layout.
#[derive(Clone)]
pub enum Val {
    /// A source column not loaded yet: index into the kernel's columns.
    Source(usize),
    /// A computed or loaded value with its width.
    Local(CExpr, Width),
}

/// Lowering state (see the module doc).
pub struct Builder<'a> {
    /// The kernel's source columns.
    pub cols: &'a [GpuColumn],
    /// What is lowered so far.
    pub ir: KernelIr,
    /// Open CASE branches, innermost last: their statements so far.
    branches: Vec<Vec<Stmt>>,
    /// Per column of the current layout: its value.
    pub layout: Vec<Val>,
    /// Per column of the current layout: its dictionary when it holds codes.
    pub dicts: Vec<Option<DictRef>>,
    /// Per column of the current layout: when it may be NULL (a source column whose data
    /// holds NULLs, a LEFT OUTER join's build columns, values computed from them), the
    /// condition under which it is not (a `bool` expression of the kernel: a source
    /// column's validity bit, see [`valid`]); where it is NULL its value means nothing.
    /// Filters and projections read such columns with SQL's three-valued logic
    /// (`filter::value`), probes and builds drop or miss NULL keys, aggregations skip NULL
    /// inputs and group NULL keys apart; other sinks' inputs refuse them.
    pub nulls: Vec<Option<CExpr>>,
    /// Source columns loaded so far (values named `c{i}`).
    pub loaded: Vec<usize>,
    /// The value holding each source column loaded so far.
    pub column_values: std::collections::HashMap<usize, CExpr>,
    /// The estimated share of rows still selected here: the probes' pass rates
    /// multiplied (filters count as keeping every row).
    pub pass: f64,
    /// Literal values passed at launch so far (`lit{k}`), when literals are parameters.
    pub literals: Option<Vec<i64>>,
    /// Scalar subqueries whose values are passed at launch (`sq{k}`).
    pub subqueries: Vec<(tessera_ir::ResultId, tessera_ir::Type)>,
    /// Lookup tables the kernel reads from `consts` (e.g. long IN lists' bitmaps).
    pub consts: Vec<i64>,
    /// Parameters after the source columns: per probe its arrays, then the sink's.
    pub params: Vec<Param>,
    /// Whether an [`Stmt::Expand`] was lowered (a kernel expands its items once).
    pub expanded: bool,
    /// Source string columns whose bytes are read.
    pub strings: Vec<usize>,
    /// Comparisons of two 32-bit values are made in 32 bits ([`super::Experiments`]).
    pub compares_32: bool,
    /// The most shared memory a block's direct group table may take
    /// ([`super::SHARED_AGG_BYTES`] unless `Experiments::direct_max_bytes` says otherwise).
    pub group_table_bytes: usize,
    /// The most shared memory a direct table of a large domain takes
    /// ([`super::aggregate::DIRECT_DOMAIN_MAX_BYTES`] unless
    /// `Experiments::direct_domain_bytes` says otherwise).
    pub direct_domain_bytes: usize,
    /// Whether columns load through `tessera_col` (`Experiments::column_loads` set).
    pub column_policy: bool,
    /// Lanes adding into one group combine first (`Experiments::warp_combine`).
    pub warp_combine: bool,
    /// Copies of a global group table's arrays (`aggregate::global_copies`).
    pub global_copies: usize,
    /// Copies may leave the seen flags to their fold (`Experiments::presence`).
    pub presence: bool,
    /// What a test over a bitmap read from L2 costs in the hoisted tests' order
    /// (`Experiments::bitmap_cost`, `probe::L2_BITMAP_COST`).
    pub l2_bitmap_cost: u32,
    /// Items a thread of the kernel being lowered (for `probe::test_order`'s warp
    /// skips).
    pub items: u32,
    /// Builds store payload columns of at least this many bits narrowed where their
    /// range is known (`Experiments::narrow_payloads`, see `build::payload_form`; 0:
    /// none).
    pub narrow_payloads: u32,
    tmp: usize,
}

/// Whether source column `c`'s value in the item's row is not NULL: its validity bit
/// (`col{c}_valid`, see [`super::abi::Param::Validity`]). Read where it is used, not
/// loaded ahead: the 32 rows a warp's lanes hold at once share one word, which one load
/// brings to all of them (and L1 holds for the next use).
pub fn valid(c: usize) -> CExpr {
    let r = CExpr::row();
    crate::cx![format!("(((__ldg(&col{c}_valid["), &r, " >> 5]) >> (", &r, " & 31)) & 1u) != 0u)"]
}

/// Whether bit `s` of bitmap `array` is set (bit `s & 31` of word `s >> 5`, Arrow's
/// order), read through the read-only cache: a table's membership bits, a payload's
/// validity. `s` is a name (a value or the row), not an expression to parenthesize.
pub fn bit_of(array: &str, s: &CExpr) -> CExpr {
    crate::cx![format!("((__ldg(&{array}["), s, " >> 5]) >> (", s, " & 31)) & 1u) != 0"]
}

/// A statement setting bit `s` of bitmap `array` (see [`bit_of`]) with an `atomicOr`: a
/// build's membership bits, the validity of a payload or a materialized column.
pub fn set_bit(array: &str, s: &CExpr) -> CExpr {
    crate::cx![format!("atomicOr(&{array}["), s, " >> 5], 1u << (", s, " & 31));"]
}

impl<'a> Builder<'a> {
    /// A builder for a kernel over `cols`, literals as parameters or not.
    pub fn new(cols: &'a [GpuColumn], literal_params: bool) -> Self {
        Builder {
            cols,
            ir: KernelIr::default(),
            branches: Vec::new(),
            layout: (0..cols.len()).map(Val::Source).collect(),
            dicts: cols.iter().map(|c| c.dictionary).collect(),
            nulls: cols.iter().enumerate().map(|(i, c)| c.nullable.then(|| valid(i))).collect(),
            loaded: Vec::new(),
            column_values: std::collections::HashMap::new(),
            pass: 1.0,
            literals: literal_params.then(Vec::new),
            subqueries: Vec::new(),
            consts: Vec::new(),
            params: Vec::new(),
            expanded: false,
            strings: Vec::new(),
            compares_32: true,
            group_table_bytes: super::SHARED_AGG_BYTES,
            direct_domain_bytes: super::aggregate::DIRECT_DOMAIN_MAX_BYTES,
            column_policy: false,
            warp_combine: false,
            global_copies: 0,
            presence: true,
            l2_bitmap_cost: super::probe::L2_BITMAP_COST,
            items: super::ITEMS_PER_THREAD,
            narrow_payloads: 64,
            tmp: 0,
        }
    }

    /// A new name `{prefix}N`.
    pub fn fresh(&mut self, prefix: &str) -> String {
        self.tmp += 1;
        format!("{prefix}{}", self.tmp)
    }

    /// Whether statements go into a CASE branch (values are then constants of the branch).
    pub fn in_branch(&self) -> bool {
        !self.branches.is_empty()
    }

    /// Appends a statement (to the innermost open branch, if any).
    pub fn push(&mut self, s: Stmt) {
        match self.branches.last_mut() {
            Some(b) => b.push(s),
            None => self.ir.stmts.push(s),
        }
    }

    /// Defines a new value `name` of type `ty` as `expr`; returns a reference to it.
    pub fn def(&mut self, ty: CType, name: String, expr: CExpr, load: Option<Load>) -> CExpr {
        let scope = if self.in_branch() { Scope::Local } else { Scope::Item };
        let id = ValueId(self.ir.values.len());
        self.ir.values.push(Value { name, ty, scope });
        // A load inside a branch runs for one item, where it is needed: no stage waits on it.
        let load = if scope == Scope::Item { load } else { None };
        self.push(Stmt::Def { value: id, expr, load });
        CExpr::value(id)
    }

    /// A new value `{prefix}N` of type `ty`, set to `expr`.
    pub fn var(&mut self, ty: CType, prefix: &str, expr: CExpr) -> CExpr {
        let name = self.fresh(prefix);
        self.def(ty, name, expr, None)
    }

    /// Drops the item when `cond` holds, a row test keeping an estimated share `pass` of
    /// the items.
    pub fn reject_estimated(&mut self, cond: CExpr, pass: f64) {
        self.pass *= pass;
        self.reject(cond);
    }

    /// Drops the item when `cond` holds (a row test).
    pub fn reject(&mut self, cond: CExpr) {
        let pass = self.pass;
        self.push(Stmt::Reject { cond, flag: None, pass });
    }

    /// Drops the item when `cond` holds, raising error flag `flag`.
    pub fn reject_flagged(&mut self, cond: CExpr, flag: usize) {
        let pass = self.pass;
        self.push(Stmt::Reject { cond, flag: Some(flag), pass });
    }

    /// A statement for its effect.
    pub fn effect(&mut self, e: CExpr) {
        self.push(Stmt::Effect(e));
    }

    /// Ends the current stage.
    pub fn cut(&mut self) {
        self.push(Stmt::Cut);
    }

    /// A query literal: inlined, or the next kernel parameter.
    pub fn literal(&mut self, v: i64) -> CExpr {
        match &mut self.literals {
            Some(params) => {
                params.push(v);
                CExpr::text(format!("lit{}", params.len() - 1))
            }
            // i64::MIN has no C literal: `-9223372036854775808LL` is the negation of an
            // unsigned 2^63, so `5 > it` is false (checked with NVRTC 13.0).
            None => CExpr::text(c_long(v)),
        }
    }

    /// The value of the scalar subquery held by `result` (of type `ty`): a kernel
    /// parameter, one per subquery however often it is read.
    pub fn subquery(&mut self, result: tessera_ir::ResultId, ty: tessera_ir::Type) -> CExpr {
        let k = match self.subqueries.iter().position(|&(r, _)| r == result) {
            Some(k) => k,
            None => {
                self.subqueries.push((result, ty));
                self.subqueries.len() - 1
            }
        };
        CExpr::text(format!("sq{k}"))
    }

    /// Lowers a CASE branch with `f`: its statements go into a lambda evaluated for the
    /// item (so only the branch taken runs, as SQL wants). What the branch loads or
    /// computes stays inside it; its literals and consts are the kernel's.
    pub fn branch(&mut self, f: impl FnOnce(&mut Self) -> Lowered<CExpr>) -> Lowered<CExpr> {
        self.branch_over(None, f)
    }

    /// Whether the condition `f` lowers holds for any row of a chain from `first` along
    /// `next` (a 1:N table's matches of the item's key): `f` gets the C variable holding
    /// the row. Lowered like a CASE branch, in a loop that stops at the first row for
    /// which it holds.
    pub fn any_in_chain(&mut self, first: CExpr, next: String, f: impl FnOnce(&mut Self, CExpr) -> Lowered<CExpr>) -> Lowered<CExpr> {
        let var = self.fresh("m");
        let row = CExpr::text(var.clone());
        let chain = Chain { var, first, next };
        self.branch_over(Some(chain), |b| f(b, row))
    }

    /// Makes each item one item per row of the chain from `first` along `next`; the
    /// value holding the row.
    pub fn expand(&mut self, first: CExpr, next: String, outer: bool) -> Lowered<CExpr> {
        if self.expanded || self.in_branch() {
            return Err(Reason::SecondExpansion);
        }
        self.expanded = true;
        let name = self.fresh("m");
        let id = ValueId(self.ir.values.len());
        self.ir.values.push(Value { name, ty: CType::Int, scope: Scope::Item });
        self.push(Stmt::Expand { first, next, matched: id, outer });
        Ok(CExpr::value(id))
    }

    fn branch_over(&mut self, over: Option<Chain>, f: impl FnOnce(&mut Self) -> Lowered<CExpr>) -> Lowered<CExpr> {
        let saved = (self.layout.clone(), self.dicts.clone(), self.nulls.clone(), self.loaded.clone(), self.column_values.clone(), self.pass);
        self.branches.push(Vec::new());
        let result = f(self);
        let stmts = self.branches.pop().unwrap_or_default();
        (self.layout, self.dicts, self.nulls, self.loaded, self.column_values, self.pass) = saved;
        let value = result?;
        Ok(if stmts.is_empty() && over.is_none() { value } else { CExpr(vec![Piece::Branch(Box::new(Branch { stmts, result: value, over }))]) })
    }
}

/// `x` as a C `long long` literal (i64::MIN too, which has none: see [`Builder::literal`]).
pub(super) fn c_long(x: i64) -> String {
    if x == i64::MIN { "(-9223372036854775807LL - 1LL)".into() } else { format!("{x}LL") }
}
