//! Constant arithmetic that overflows is an error, as column arithmetic is.
//!
//! DataFusion's constant folding (the `SimplifyExpressions` optimizer rule) evaluates
//! constant subexpressions with its physical `BinaryExpr` and `NegativeExpr`, which wrap
//! on overflow: `SELECT 9223372036854775807 + 1` would be planned as the literal
//! -9223372036854775808 before Tessera's pipelines see it, while `a + 1` over a column
//! holding that value fails. [`CheckedConstants`] runs before every `SimplifyExpressions`
//! and evaluates each constant `+`, `-`, `*` and negation with Tessera's own (checked) CPU
//! evaluation. One that overflows becomes a call of a checked function
//! ([`CheckedArith`], `tessera_checked_add(l, r)` ...) over the same operands. Folding
//! it fails, and DataFusion keeps an expression whose folding fails as it is (to be
//! evaluated at run time, as for `CASE WHEN false THEN 1 / 0 END`); the pipelines
//! translate it to their own checked arithmetic, and a DataFusion fallback evaluates it
//! with the same checked kernels. So the query fails when the expression is evaluated,
//! with the error column arithmetic gives. Constants that fit are left to DataFusion's
//! folding, and the rule does nothing on plain DataFusion (`tessera.engine =
//! 'datafusion'`), which keeps its own wrapping arithmetic.

use std::sync::Arc;

use datafusion::arrow::array::ArrayRef;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{DFSchema, DataFusionError, ScalarValue};
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::expr_rewriter::NamePreserver;
use datafusion::logical_expr::type_coercion::binary::BinaryTypeCoercer;
use datafusion::logical_expr::{
    BinaryExpr, ColumnarValue, Expr as DfExpr, LogicalPlan, Operator as DfOp, ScalarFunctionArgs, ScalarUDF,
    ScalarUDFImpl, Signature, Volatility,
};
use datafusion::optimizer::{ApplyOrder, OptimizerConfig, OptimizerRule};
use tessera_common::TesseraError;
use tessera_cpu::Evaluator;
use tessera_ir::{ArithOp, Expr};
use tessera_plan::CheckedOp;

use crate::options::plain_datafusion;

/// The optimizer rule; see the module documentation.
#[derive(Debug, Default)]
pub struct CheckedConstants;

impl OptimizerRule for CheckedConstants {
    fn name(&self) -> &str {
        "tessera_checked_constants"
    }

    fn apply_order(&self) -> Option<ApplyOrder> {
        Some(ApplyOrder::BottomUp)
    }

    fn supports_rewrite(&self) -> bool {
        true
    }

    fn rewrite(&self, plan: LogicalPlan, config: &dyn OptimizerConfig) -> datafusion::error::Result<Transformed<LogicalPlan>> {
        if plain_datafusion(&config.options()) {
            return Ok(Transformed::no(plan));
        }
        // Rewritten expressions keep their names, so the plan's schema stays the same.
        let names = NamePreserver::new(&plan);
        plan.map_expressions(|e| {
            let name = names.save(&e);
            let t = e.transform_up(|x| Ok(checked_node(x)))?;
            Ok(if t.transformed { Transformed::yes(name.restore(t.data)) } else { t })
        })
    }
}

/// `x` itself, or, when it is constant arithmetic whose operands evaluate but which
/// overflows, the same arithmetic as a [`CheckedArith`] call.
fn checked_node(x: DfExpr) -> Transformed<DfExpr> {
    let (op, args) = match &x {
        DfExpr::BinaryExpr(BinaryExpr { left, op, right }) => {
            let op = match op {
                DfOp::Plus => CheckedOp::Add,
                DfOp::Minus => CheckedOp::Sub,
                DfOp::Multiply => CheckedOp::Mul,
                _ => return Transformed::no(x),
            };
            (op, vec![left.as_ref().clone(), right.as_ref().clone()])
        }
        DfExpr::Negative(inner) => (CheckedOp::Neg, vec![inner.as_ref().clone()]),
        _ => return Transformed::no(x),
    };
    if !args.iter().all(|a| evaluate_constant(a).is_some_and(|r| r.is_ok())) {
        return Transformed::no(x);
    }
    match evaluate_constant(&x) {
        Some(Err(TesseraError::Execution(m))) if m.starts_with("arithmetic overflow") => {
            let udf = Arc::new(ScalarUDF::new_from_impl(CheckedArith::new(op)));
            Transformed::yes(DfExpr::ScalarFunction(ScalarFunction::new_udf(udf, args)))
        }
        _ => Transformed::no(x),
    }
}

/// Evaluates a constant expression as the pipelines would: None when it is not constant
/// or has no IR form (DataFusion's folding then does as it does).
fn evaluate_constant(e: &DfExpr) -> Option<tessera_common::Result<ArrayRef>> {
    let ir = tessera_plan::translate_expr(e, &DFSchema::empty()).ok()?;
    if !ir.columns().is_empty() {
        return None;
    }
    Some(Evaluator::new().eval(&ir, &[], 1))
}

/// `+`, `-`, `*` or negation that fails on overflow (Tessera's CPU evaluation: arrow's
/// checked kernels, decimals checked against their precision).
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct CheckedArith {
    op: CheckedOp,
    signature: Signature,
}

impl CheckedArith {
    /// The function for `op`.
    pub fn new(op: CheckedOp) -> Self {
        let arity = if op == CheckedOp::Neg { 1 } else { 2 };
        CheckedArith { op, signature: Signature::any(arity, Volatility::Immutable) }
    }

    fn df_op(&self) -> Option<DfOp> {
        match self.op {
            CheckedOp::Add => Some(DfOp::Plus),
            CheckedOp::Sub => Some(DfOp::Minus),
            CheckedOp::Mul => Some(DfOp::Multiply),
            CheckedOp::Neg => None,
        }
    }
}

impl ScalarUDFImpl for CheckedArith {
    fn name(&self) -> &str {
        self.op.function_name()
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, arg_types: &[DataType]) -> datafusion::error::Result<DataType> {
        match (self.df_op(), arg_types) {
            (None, [t]) => Ok(t.clone()),
            (Some(op), [l, r]) => BinaryTypeCoercer::new(l, &op, r).get_result_type(),
            _ => Err(DataFusionError::Plan(format!("wrong number of arguments to {}", self.name()))),
        }
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> datafusion::error::Result<ColumnarValue> {
        let rows = args.number_rows;
        let scalar = args.args.iter().all(|a| matches!(a, ColumnarValue::Scalar(_)));
        let columns = args.args.into_iter().map(|a| a.to_array(rows)).collect::<datafusion::error::Result<Vec<_>>>()?;
        let external = |e: TesseraError| DataFusionError::External(Box::new(e));
        let ty = tessera_plan::ir_type(args.return_field.data_type()).map_err(DataFusionError::Plan)?;
        let col = |i: usize| Box::new(Expr::col(i, format!("arg{i}")));
        let e = match self.op {
            CheckedOp::Add => Expr::Arith { op: ArithOp::Add, left: col(0), right: col(1), ty },
            CheckedOp::Sub => Expr::Arith { op: ArithOp::Sub, left: col(0), right: col(1), ty },
            CheckedOp::Mul => Expr::Arith { op: ArithOp::Mul, left: col(0), right: col(1), ty },
            CheckedOp::Neg => Expr::Negate(col(0)),
        };
        let out = Evaluator::new().eval(&e, &columns, rows).map_err(external)?;
        if scalar {
            Ok(ColumnarValue::Scalar(ScalarValue::try_from_array(&out, 0)?))
        } else {
            Ok(ColumnarValue::Array(out))
        }
    }
}
