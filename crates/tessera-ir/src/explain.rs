//! Text rendering of a plan for EXPLAIN: one block per pipeline, operators indented,
//! with the device it runs on and, for anything handed to DataFusion, why.

use std::fmt::{self, Write};

use crate::pipeline::{
    BuildStrategy, GroupStrategy, KeyDomain, Operator, Pipeline, QueryPlan, Sink, Source, Step,
};

impl fmt::Display for QueryPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pipelines = self.pipelines().count();
        let externals = self.externals().count();
        writeln!(f, "Tessera plan: {pipelines} pipeline(s), {externals} DataFusion fallback(s); result r{}", self.output)?;
        for step in &self.steps {
            match step {
                Step::Pipeline(p) => write!(f, "{p}")?,
                Step::External(e) => {
                    let inputs: Vec<String> = e.inputs.iter().map(|r| format!("r{r}")).collect();
                    writeln!(
                        f,
                        "DataFusion fallback #{} -> r{}: {} over [{}] (reason: {})",
                        e.id,
                        e.result,
                        e.operator,
                        inputs.join(", "),
                        e.reason
                    )?
                }
            }
        }
        Ok(())
    }
}

fn names(fields: &[crate::Field]) -> String {
    fields.iter().map(|f| f.name.as_str()).collect::<Vec<_>>().join(", ")
}

impl fmt::Display for Pipeline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let device = match self.device {
            crate::Device::Cpu => "CPU",
            crate::Device::Gpu => "GPU",
        };
        write!(f, "Pipeline {} [{device}", self.id)?;
        if let Some(r) = &self.device_reason {
            write!(f, ": {r}")?;
        }
        writeln!(f, "]")?;
        match &self.source {
            Source::Scan(s) => {
                writeln!(f, "  Scan {} ({} rows) [{}]", s.table, s.rows, names(&s.fields))?;
            }
            Source::Result { id, fields } => writeln!(f, "  Read r{id} [{}]", names(fields))?,
        }
        for op in &self.operators {
            match op {
                Operator::Filter(e) => writeln!(f, "  Filter {e}")?,
                Operator::Project { exprs, fields } => {
                    let items: Vec<String> =
                        exprs.iter().zip(fields).map(|(e, fd)| format!("{e} AS {}", fd.name)).collect();
                    writeln!(f, "  Project {}", items.join(", "))?
                }
                Operator::Probe(p) => {
                    let keys: Vec<String> = p.keys.iter().map(|k| k.to_string()).collect();
                    let mut line = format!("  Probe h{} {:?} keys [{}]", p.table, p.kind, keys.join(", "));
                    if !p.build_fields.is_empty() {
                        let _ = write!(line, " payload [{}]", names(&p.build_fields));
                    }
                    if let Some(r) = &p.residual {
                        let _ = write!(line, " residual {r}");
                    }
                    if p.null_aware {
                        line.push_str(" null-aware");
                    }
                    writeln!(f, "{line}")?
                }
            }
        }
        match &self.sink {
            Sink::HashBuild(b) => {
                let keys: Vec<String> = b.keys.iter().map(|k| k.to_string()).collect();
                let strategy = match b.strategy {
                    BuildStrategy::Perfect { min, max } => format!("perfect hash [{min}, {max}]"),
                    BuildStrategy::Hash { .. } => "open addressing".to_string(),
                };
                writeln!(f, "  -> HashBuild h{} keys [{}] payload {:?} ({strategy}, ~{} rows)", b.table, keys.join(", "), b.payload, b.estimated_rows)
            }
            Sink::Aggregate(a) => {
                let keys: Vec<String> = a.group_by.iter().map(|k| k.to_string()).collect();
                let aggs: Vec<String> = a
                    .aggregates
                    .iter()
                    .map(|x| {
                        let arg = x.arg.as_ref().map(|e| e.to_string()).unwrap_or_else(|| "*".into());
                        format!("{:?}({}{arg})", x.func, if x.distinct { "DISTINCT " } else { "" })
                    })
                    .collect();
                let describe = |strategy: &GroupStrategy| match strategy {
                    GroupStrategy::Scalar => "scalar".to_string(),
                    GroupStrategy::Perfect { domains } => {
                        let d: Vec<String> = domains
                            .iter()
                            .map(|d| match d {
                                KeyDomain::Range { min, max } => format!("[{min}, {max}]"),
                                KeyDomain::Dictionary { estimate } => format!("dictionary(~{estimate})"),
                                KeyDomain::Boolean => "boolean".into(),
                            })
                            .collect();
                        format!("perfect hash {}", d.join(" x "))
                    }
                    GroupStrategy::Hash { estimated_groups, .. } => format!("hash table, ~{estimated_groups} groups"),
                };
                let mut strategy = describe(&a.strategy);
                if let Some(r) = &a.reduced {
                    let deps: Vec<String> = a.group_by.iter().zip(&r.dependent).filter(|(_, d)| **d).map(|(k, _)| k.to_string()).collect();
                    strategy = format!("{strategy}; by the other keys alone: {}, as they determine {}", describe(&r.strategy), deps.join(", "));
                }
                writeln!(f, "  -> Aggregate r{} group by [{}] aggregates [{}] ({strategy})", a.result, keys.join(", "), aggs.join(", "))
            }
            Sink::Sort(s) => {
                let keys: Vec<String> = s
                    .keys
                    .iter()
                    .map(|k| format!("{}{}", k.expr, if k.descending { " DESC" } else { "" }))
                    .collect();
                let mut line = format!("  -> Sort r{} by [{}]", s.result, keys.join(", "));
                if let Some(n) = s.fetch {
                    let _ = write!(line, " top {n}");
                }
                if s.skip > 0 {
                    let _ = write!(line, " skip {}", s.skip);
                }
                writeln!(f, "{line}")
            }
            Sink::MarkBuild(m) => {
                let keys: Vec<String> = m.keys.iter().map(|k| k.to_string()).collect();
                let mut line = format!(
                    "  -> MarkBuild h{} keys [{}] keep {} build rows as r{}",
                    m.table,
                    keys.join(", "),
                    if m.anti { "unmatched" } else { "matched" },
                    m.result
                );
                if let Some(r) = &m.residual {
                    let _ = write!(line, " residual {r}");
                }
                writeln!(f, "{line}")
            }
            Sink::Materialize { result, skip, fetch } => {
                let mut line = format!("  -> Materialize r{result}");
                if let Some(n) = fetch {
                    let _ = write!(line, " limit {n}");
                }
                if *skip > 0 {
                    let _ = write!(line, " offset {skip}");
                }
                writeln!(f, "{line}")
            }
        }
    }
}
