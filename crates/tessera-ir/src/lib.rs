//! Tessera's physical plan: a DAG of pipelines, as plain data.
//!
//! This is the one representation of a query that both backends consume: the CPU
//! backend executes it, the CUDA backend compiles each pipeline into one fused kernel.
//! It knows nothing of SQL, DataFusion or any backend. Entry points: [`QueryPlan`] (a list
//! of [`Step`]s in dependency order), [`Pipeline`] (`source → operators → sink`) and
//! [`Expr`] (typed scalar expressions). `Display` on a plan gives EXPLAIN's text.
#![warn(missing_docs)]

mod arrow_types;
mod explain;
mod expr;
mod pipeline;
mod types;
mod zones;

pub use arrow_types::{arrow_type, ir_type};
pub use expr::{ArithOp, CmpOp, DatePart, Expr};
pub use pipeline::*;
pub use types::{Field, Scalar, Type, civil_from_days, float_from_order_key, float_order_key, format_date, format_decimal};
pub use zones::{ZoneBound, zone_bounds};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_round_trips_through_json_and_prints() {
        let fields = vec![Field::new("lo_revenue", Type::Int64, false)];
        let plan = QueryPlan {
            steps: vec![Step::Pipeline(Pipeline {
                id: 0,
                source: Source::Scan(Scan {
                    table: "lineorder".into(),
                    version: 1,
                    columns: vec![12],
                    fields: fields.clone(),
                    dictionary: vec![false],
                    rows: 6_000_000,
                    kept_permille: 1000,
                }),
                operators: vec![Operator::Filter(Expr::Cmp {
                    op: CmpOp::Gt,
                    left: Box::new(Expr::col(0, "lo_revenue")),
                    right: Box::new(Expr::lit(Scalar::Int(5), Type::Int64)),
                })],
                sink: Sink::Aggregate(Aggregate {
                    result: 0,
                    group_by: vec![],
                    aggregates: vec![AggExpr {
                        func: AggFunc::Sum,
                        arg: Some(Expr::col(0, "lo_revenue")),
                        distinct: false,
                        ty: Type::Int64,
                        name: "revenue".into(),
                    }],
                    strategy: GroupStrategy::Scalar,
                    fields: vec![Field::new("revenue", Type::Int64, true)],
                    reduced: None,
                    value_ranges: Vec::new(),
                }),
                device: Device::Cpu,
                device_reason: None,
            })],
            output: 0,
            output_fields: vec![Field::new("revenue", Type::Int64, true)],
        };
        let json = serde_json::to_string(&plan).expect("serializes");
        let back: QueryPlan = serde_json::from_str(&json).expect("deserializes");
        assert_eq!(back, plan);
        let text = plan.to_string();
        assert!(text.contains("Scan lineorder"), "{text}");
        assert!(text.contains("Filter lo_revenue#0 > 5"), "{text}");
        assert!(text.contains("-> Aggregate r0 group by [] aggregates [Sum(lo_revenue#0)] (scalar)"), "{text}");
    }
}
