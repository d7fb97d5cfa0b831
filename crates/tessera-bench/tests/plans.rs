//! The pipeline plans of the suites: SSB plans with no DataFusion fallback, q2.1 as the
//! Crystal star join, and the TPC-H fallbacks listed (the README's table).

use tessera_bench::{Suite, datagen};
use tessera_engine::Session;
use tessera_ir::{GroupStrategy, Operator, QueryPlan, Sink};


fn plans(suite: Suite) -> Vec<(&'static str, QueryPlan)> {
    plans_with_session(suite).1
}

fn plans_with_session(suite: Suite) -> (tempfile::TempDir, Vec<(&'static str, QueryPlan)>, Session) {
    plans_for(suite, tessera_engine::Target::Cpu)
}

fn plans_for(suite: Suite, target: tessera_engine::Target) -> (tempfile::TempDir, Vec<(&'static str, QueryPlan)>, Session) {
    let dir = tempfile::tempdir().unwrap();
    let session = Session::open(dir.path()).unwrap();
    datagen::generate_into_store(suite, 0.01, 2, session.store(), &|_| {}).unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let plans = suite
        .queries()
        .iter()
        .map(|q| (q.name, runtime.block_on(session.plan_query_for(q.sql, target)).unwrap()))
        .collect();
    (dir, plans, session)
}

/// The stored table pipeline `p` scans, loaded (None for one reading an intermediate
/// result, whose kernel is generated without its rows).
fn scanned_table(session: &Session, manifest: &tessera_storage::Manifest, p: &tessera_ir::Pipeline) -> Option<std::sync::Arc<tessera_storage::LoadedTable>> {
    match &p.source {
        tessera_ir::Source::Scan(scan) => Some(session.store().load(manifest.table(&scan.table).unwrap()).unwrap()),
        tessera_ir::Source::Result { .. } => None,
    }
}

/// Generates the GPU kernel of every pipeline the generator supports (in plans made for
/// the GPU), with literals inlined and as parameters, and compiles both with NVRTC for
/// sm_90 (no GPU needed).
/// Returns (pipelines compiled, CPU-only with reasons, those reading an aggregation's
/// result kept on the GPU).
fn compile_suite_kernels(suite: Suite) -> (usize, Vec<String>, Vec<String>) {
    use tessera_cuda::codegen::{KernelOptions, Literals};
    use std::collections::HashMap;
    use tessera_exec::gpu::{GpuQueryState, plan_kernel};
    let (_dir, plans, session) = plans_for(suite, tessera_engine::Target::Gpu);
    let nvrtc = tessera_cuda::test_support::nvrtc_or_skip("suite kernels compile with NVRTC");
    let manifest = session.store().manifest().unwrap();
    let (mut compiled, mut cpu, mut kept) = (0, Vec::new(), Vec::new());
    for (name, plan) in &plans {
        let mut state = GpuQueryState::default();
        let mut shapes = HashMap::new();
        for p in plan.pipelines() {
            // Builds over intermediate results are generated without their rows.
            let table = scanned_table(&session, &manifest, p);
            // The dictionaries placed so far, for the same kernel with parameters.
            let mut scratch = state.planned_copy();
            match plan_kernel(p, table.as_ref(), &mut state, &shapes, KernelOptions { literals: Literals::Inline, ..KernelOptions::default() }) {
                Ok(placed) => {
                    if placed.reads_kept {
                        kept.push(format!("{name} pipeline {}", p.id));
                    }
                    let kernel = placed.kernel;
                    let with_params = plan_kernel(p, table.as_ref(), &mut scratch, &shapes, KernelOptions { literals: Literals::Parameters, ..KernelOptions::default() })
                        .unwrap_or_else(|e| panic!("{name} pipeline {}: inlined but not with parameters: {e:?}", p.id))
                        .kernel;
                    if let (Sink::HashBuild(b), tessera_cuda::codegen::SinkLayout::Build { table }) = (&p.sink, &kernel.sink) {
                        shapes.insert(b.table, table.clone());
                    }
                    // `TESSERA_DUMP_KERNELS=<dir>`: the sources, to read or to count
                    // registers by hand.
                    if let Some(dir) = std::env::var_os(tessera_cuda::compile::DUMP_KERNELS_ENV) {
                        std::fs::create_dir_all(&dir).unwrap();
                        std::fs::write(std::path::Path::new(&dir).join(format!("{suite}-{name}-p{}.cu", p.id)), &with_params.source).unwrap();
                        std::fs::write(std::path::Path::new(&dir).join(format!("{suite}-{name}-p{}-inline.cu", p.id)), &kernel.source).unwrap();
                    }
                    if nvrtc {
                        for k in [&kernel, &with_params] {
                            if let Err(e) = tessera_cuda::compile_cubin(&k.source, "sm_90") {
                                panic!("{name} pipeline {}: generated kernel does not compile: {e}\n{}", p.id, k.source);
                            }
                        }
                    }
                    compiled += 1;
                }
                Err(reasons) => cpu.push(format!("{name} pipeline {}: {}", p.id, tessera_cuda::codegen::unsupported::describe(&reasons))),
            }
        }
    }
    (compiled, cpu, kept)
}

/// The forms of the `lineorder` columns SSB `query`'s pipelines scan, planned for the GPU
/// with `memory_limit` known to placement (None: unknown).
fn lineorder_forms(query: &str, memory_limit: Option<usize>) -> Vec<Option<tessera_cuda::codegen::Narrow>> {
    lineorder_kernels(query, memory_limit).0
}

/// [`lineorder_forms`] with `tessera.gpu_compact_tables` set to `compact`.
fn lineorder_forms_with(query: &str, memory_limit: Option<usize>, compact: tessera_exec::gpu::CompactTables) -> Vec<Option<tessera_cuda::codegen::Narrow>> {
    lineorder_kernels_with(query, memory_limit, compact).0
}

/// [`lineorder_forms`], and the sources of the kernels scanning `lineorder`.
fn lineorder_kernels(query: &str, memory_limit: Option<usize>) -> (Vec<Option<tessera_cuda::codegen::Narrow>>, Vec<String>) {
    lineorder_kernels_with(query, memory_limit, tessera_exec::gpu::CompactTables::Auto)
}

/// [`lineorder_kernels`] with `tessera.gpu_compact_tables` set to `compact`.
fn lineorder_kernels_with(query: &str, memory_limit: Option<usize>, compact: tessera_exec::gpu::CompactTables) -> (Vec<Option<tessera_cuda::codegen::Narrow>>, Vec<String>) {
    use std::collections::HashMap;
    use tessera_cuda::codegen::KernelOptions;
    use tessera_exec::gpu::{GpuQueryState, plan_kernel};
    let (_dir, plans, session) = plans_for(Suite::Ssb, tessera_engine::Target::Gpu);
    let manifest = session.store().manifest().unwrap();
    let (_, plan) = plans.iter().find(|(n, _)| *n == query).unwrap();
    let mut state = GpuQueryState::default();
    state.memory_limit = memory_limit;
    state.compact = compact;
    let (mut shapes, mut forms, mut sources) = (HashMap::new(), Vec::new(), Vec::new());
    for p in plan.pipelines() {
        let table = scanned_table(&session, &manifest, p);
        let Ok(placed) = plan_kernel(p, table.as_ref(), &mut state, &shapes, KernelOptions::default()) else { continue };
        if let (tessera_ir::Sink::HashBuild(b), tessera_cuda::codegen::SinkLayout::Build { table }) = (&p.sink, &placed.kernel.sink) {
            shapes.insert(b.table, table.clone());
        }
        if table.is_some_and(|t| t.name == "lineorder") {
            forms.extend(placed.columns.iter().map(|c| c.narrow));
            sources.push(placed.kernel.source.clone());
        }
    }
    (forms, sources)
}

/// A stored table whose columns would take more than a quarter of the GPU memory limit
/// plain goes up compact (bit-packed, or in runs), others narrowed to whole bytes: SSB SF
/// 0.01's `lineorder` (about 4 MB plain) under a 1 MB limit and under 12 MB (over a
/// quarter, under half: byte-narrowed until 2026-12-01f), and not under 24 MB nor 1 GB;
/// unless `tessera.gpu_compact_tables` says always or never.
#[test]
fn a_table_over_a_quarter_of_the_gpu_memory_limit_goes_up_compact() {
    use tessera_cuda::codegen::Narrow;
    let compact = |n: &Option<Narrow>| matches!(n, Some(Narrow::Bits(_) | Narrow::Runs { .. }));
    for query in ["q1.1", "q3.1"] {
        let small = lineorder_forms(query, Some(1 << 20));
        let quarter = lineorder_forms(query, Some(12 << 20));
        let large = lineorder_forms(query, Some(1 << 30));
        let unknown = lineorder_forms(query, None);
        assert_eq!(quarter, small, "{query}: under 12 MB as under 1 MB");
        assert_eq!(lineorder_forms(query, Some(24 << 20)), large, "{query}: under 24 MB as under 1 GB");
        assert!(!small.is_empty() && small.len() == large.len(), "{query}: {small:?} / {large:?}");
        // Every column is compact under the small limit (SSB's keys, dates and measures
        // all span at most 3/4 of the bits of the form they would otherwise take).
        assert!(small.iter().all(compact), "{query} under 1 MB: {small:?}");
        // Under the large one, whole bytes where they save any (a 32-bit measure
        // spanning more than 16 bits stays as it is).
        assert!(large.iter().all(|n| !compact(n)) && large.iter().any(Option::is_some), "{query} under 1 GB: {large:?}");
        assert_eq!(large, unknown, "{query}: an unknown limit is not a small one");
        // `tessera.gpu_compact_tables` overrides the size: compact under any limit, or
        // whole bytes under any.
        use tessera_exec::gpu::CompactTables;
        assert_eq!(lineorder_forms_with(query, Some(1 << 30), CompactTables::Always), small, "{query}: always");
        assert_eq!(lineorder_forms_with(query, None, CompactTables::Always), small, "{query}: always, no limit known");
        assert_eq!(lineorder_forms_with(query, Some(1 << 20), CompactTables::Never), large, "{query}: never");
    }
}

/// Over compact columns SSB q1.3's probe reads its dates, in runs and the first column
/// every row reads, up front (the run values from directory words loaded a tile ahead),
/// not a row at a time with two dependent loads (`tessera_runs_get`), which took 364 µs
/// against 135 byte-narrowed at SF 20 (H200, 2026-11-30d run 12).
#[test]
fn a_compact_probe_reads_its_first_column_of_runs_up_front() {
    let (forms, sources) = lineorder_kernels("q1.3", Some(1 << 20));
    assert!(forms.iter().any(|n| matches!(n, Some(tessera_cuda::codegen::Narrow::Runs { .. }))), "{forms:?}");
    let probe = &sources[0];
    assert!(probe.contains("tessera_runs_value_lane(col0_runs"), "{probe}");
    // A warp's directory words held one a lane (`Experiments::runs_lanes`), not every
    // item's pair in every lane.
    // (Found from the tile's value of the streams, `tessera_runs_word_at`.)
    assert!(probe.contains("nd") && probe.contains("= tessera_runs_word_at<ITEMS, 4>(col0, kq + kstep);") && !probe.contains("uint2 nd"), "{probe}");
    // Its late bit-packed columns are read after a warp's vote on the dates' test
    // (`Experiments::lean_bit_cuts`), not predicated in that test's stage.
    let (vote, read) = (probe.find("tessera_warp_any(sel)"), probe.find("tessera_bits_get<"));
    assert!(vote.is_some() && read.is_some() && vote < read, "{probe}");
}

#[test]
fn every_ssb_pipeline_generates_a_kernel_that_compiles() {
    let (compiled, cpu, _) = compile_suite_kernels(Suite::Ssb);
    // Every pipeline that scans a table is a kernel: 13 probe pipelines and one build per
    // joined dimension (3 × 1 + 3 × 3 + 4 × 3 + 3 × 4 = 36). Only the small sorts of the
    // aggregated results stay on the CPU (their GPU rank runs with the aggregation).
    let scans_on_cpu: Vec<&String> = cpu.iter().filter(|c| !c.ends_with("sort: sort on the GPU (next: radix sort)")).collect();
    assert!(scans_on_cpu.is_empty(), "SSB scan pipelines left on the CPU:\n{scans_on_cpu:?}");
    assert_eq!(compiled, 49);
}

#[test]
fn tpch_kernels_that_generate_compile() {
    let (compiled, cpu, kept) = compile_suite_kernels(Suite::Tpch);
    println!("TPC-H: {compiled} pipelines generate GPU kernels; on the CPU:\n{}", cpu.join("\n"));
    assert!(compiled > 0);
    // Aggregations' results read where they lie on the GPU: q13's orders per customer
    // (built into a table), q16's part classes and suppliers (COUNT(DISTINCT)'s second
    // aggregation), q15's revenue per supplier (its maximum).
    println!("reading results kept on the GPU: {kept:?}");
    for q in ["q13 pipeline 1", "q15 pipeline 2", "q16 pipeline 3"] {
        assert!(kept.iter().any(|k| k == q), "{q} does not read its input on the GPU: {kept:?}");
    }
}

#[test]
fn every_ssb_query_is_pipelines_only_and_q2_1_is_one_star_join_pipeline() {
    let plans = plans(Suite::Ssb);
    for (name, plan) in &plans {
        assert_eq!(plan.externals().count(), 0, "{name} has a DataFusion fallback:\n{plan}");
    }
    let (_, q21) = plans.iter().find(|(n, _)| *n == "q2.1").unwrap();
    let builds = q21.pipelines().filter(|p| matches!(p.sink, Sink::HashBuild(_))).count();
    assert_eq!(builds, 3, "{q21}");
    let probe = q21
        .pipelines()
        .find(|p| p.operators.iter().filter(|o| matches!(o, Operator::Probe(_))).count() == 3)
        .unwrap_or_else(|| panic!("no pipeline with three chained probes:\n{q21}"));
    match &probe.sink {
        Sink::Aggregate(a) => assert!(matches!(a.strategy, GroupStrategy::Perfect { .. }), "{q21}"),
        other => panic!("probe pipeline ends in {other:?}"),
    }
}

#[test]
fn tpch_runs_without_fallbacks() {
    let mut listed = Vec::new();
    for (name, plan) in plans(Suite::Tpch) {
        for e in plan.externals() {
            listed.push(format!("{name}: {} ({})", e.operator, e.reason));
        }
    }
    // Keep README.md's "TPC-H through pipelines" list in step with this one. Uncorrelated
    // scalar subqueries (q11, q15, q22) are pipelines of their own.
    let expected: Vec<String> = Vec::new();
    assert_eq!(listed, expected, "TPC-H fallbacks changed:\n{}", listed.join("\n"));
}

/// Joins are ordered from statistics, not as written: with the dimensions listed first
/// and joined to each other on a column of five values (`c_region = s_region`, many
/// customers to many suppliers), DataFusion's order joins customer to supplier first
/// (an intermediate of |customer| |supplier| / 5 rows). The planner starts from
/// lineorder's most selective join (one month of dates) instead, so the plan is one
/// probe pipeline over lineorder with the four dimensions' hash tables probed in a
/// chain, and no dimension probes another.
#[test]
fn joins_are_ordered_from_statistics_not_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let session = Session::open(dir.path()).unwrap();
    datagen::generate_into_store(Suite::Ssb, 0.01, 2, session.store(), &|_| {}).unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let sql = "select d_year, count(*), sum(lo_revenue) as revenue \
               from customer, supplier, part, date, lineorder \
               where c_region = s_region and lo_custkey = c_custkey and lo_suppkey = s_suppkey \
                 and lo_partkey = p_partkey and lo_orderdate = d_datekey and d_yearmonthnum = 199712 \
               group by d_year order by d_year";
    let plan = runtime.block_on(session.plan_query(sql)).unwrap();
    let probing: Vec<&tessera_ir::Pipeline> =
        plan.pipelines().filter(|p| p.operators.iter().any(|o| matches!(o, Operator::Probe(_)))).collect();
    assert_eq!(probing.len(), 1, "one probe pipeline expected:\n{plan}");
    let probe = probing[0];
    assert!(matches!(&probe.source, tessera_ir::Source::Scan(s) if s.table == "lineorder"), "{plan}");
    assert_eq!(probe.operators.iter().filter(|o| matches!(o, Operator::Probe(_))).count(), 4, "{plan}");
    let builds = plan.pipelines().filter(|p| matches!(p.sink, Sink::HashBuild(_))).count();
    assert_eq!(builds, 4, "{plan}");
    // The same answer as DataFusion's own plan.
    let ours = runtime.block_on(session.execute(sql)).unwrap();
    runtime.block_on(session.execute("SET tessera.engine = 'datafusion'")).unwrap();
    let reference = runtime.block_on(session.execute(sql)).unwrap();
    let show = |o: &tessera_engine::QueryOutput| {
        datafusion::arrow::util::pretty::pretty_format_batches(&o.batches).unwrap().to_string()
    };
    assert_eq!(show(&ours), show(&reference));
    assert!(ours.num_rows() > 0, "the query should select rows at SF 0.01");
}

/// TPC-H q4 keeps a quarter's orders that have a late lineitem: a few thousand orders
/// against millions of lineitems. The orders are built into a table and the lineitems
/// mark the orders they match (a MarkBuild sink), instead of lineitem being built
/// and probed by the orders; q21's EXISTS and NOT EXISTS (with their residual
/// `l_suppkey <> l_suppkey`) run the same way over its few kept lineitems.
#[test]
fn small_semi_joins_are_run_from_the_large_side() {
    let plans = plans(Suite::Tpch);
    for q in ["q04", "q21"] {
        let (_, plan) = plans.iter().find(|(n, _)| *n == q).unwrap();
        let marks = plan.pipelines().filter(|p| matches!(p.sink, Sink::MarkBuild(_))).count();
        assert!(marks > 0, "{q} has no MarkBuild:\n{plan}");
        // The large side (lineitem) streams through; the kept side's table is small.
        for p in plan.pipelines() {
            let Sink::MarkBuild(m) = &p.sink else { continue };
            let rows = match &p.source {
                tessera_ir::Source::Scan(s) if s.table == "lineitem" => s.rows,
                other => panic!("{q}: a MarkBuild over {other:?}:\n{plan}"),
            };
            let built = plan
                .pipelines()
                .find_map(|b| match &b.sink {
                    Sink::HashBuild(h) if h.table == m.table => Some(h.estimated_rows),
                    _ => None,
                })
                .unwrap_or_else(|| panic!("{q}: h{} is not built:\n{plan}", m.table));
            assert!(built * 4 <= rows, "{q}: h{} of ~{built} rows against {rows} lineitems:\n{plan}", m.table);
        }
    }
    let (_, q21) = plans.iter().find(|(n, _)| *n == "q21").unwrap();
    let residuals = q21.pipelines().filter(|p| matches!(&p.sink, Sink::MarkBuild(m) if m.residual.is_some())).count();
    assert_eq!(residuals, 2, "{q21}");
}

/// TPC-H q18's `o_orderkey IN (… HAVING sum(l_quantity) > 300)` is applied to orders
/// before orders join lineitem (DataFusion leaves it above both joins), so lineitem
/// probes a table of the few orders kept instead of every order.
#[test]
fn semi_joins_move_below_inner_joins() {
    let plans = plans(Suite::Tpch);
    let (_, q18) = plans.iter().find(|(n, _)| *n == "q18").unwrap();
    let semi_over = |table: &str| {
        q18.pipelines().any(|p| {
            matches!(&p.source, tessera_ir::Source::Scan(s) if s.table == table)
                && p.operators.iter().any(|o| matches!(o, Operator::Probe(pr) if pr.kind == tessera_ir::JoinKind::Semi))
        })
    };
    assert!(semi_over("orders"), "the semi join should filter orders:\n{q18}");
    assert!(!semi_over("lineitem"), "the semi join should not run over lineitem:\n{q18}");
}

/// TPC-H q17 and q20 compare each row with an aggregate of lineitem per part (per part
/// and supplier): the aggregation reads only the lineitems of the parts the filtered
/// outer side has (a semi probe before it), not all of lineitem.
#[test]
fn grouped_subqueries_read_only_the_keys_their_join_keeps() {
    let plans = plans(Suite::Tpch);
    for q in ["q17", "q20"] {
        let (_, plan) = plans.iter().find(|(n, _)| *n == q).unwrap();
        let aggregation = plan
            .pipelines()
            .find(|p| {
                matches!(&p.source, tessera_ir::Source::Scan(s) if s.table == "lineitem")
                    && matches!(&p.sink, Sink::Aggregate(a) if !a.group_by.is_empty())
            })
            .unwrap_or_else(|| panic!("{q}: no grouped aggregation over lineitem:\n{plan}"));
        let semi = aggregation
            .operators
            .iter()
            .any(|o| matches!(o, Operator::Probe(p) if p.kind == tessera_ir::JoinKind::Semi));
        assert!(semi, "{q}: lineitem is aggregated whole:\n{plan}");
    }
}

/// Under `tessera.device = 'auto'`, an aggregation straight over a scan expecting a
/// group for every few rows (q18's lineitem by l_orderkey at SF 10: 15 M of 60 M) is kept
/// off the GPU, whose host side would convert every group; fewer groups, or an
/// aggregation behind joins (whose estimate runs far high: q03), keep the GPU. At this
/// test's scale both aggregate through perfect hashes, so their estimates are set here.
#[test]
fn aggregations_of_many_groups_straight_over_a_scan_stay_on_the_cpu() {
    use tessera_exec::gpu::{GPU_MAX_GROUP_FRACTION, too_many_groups};
    let plans = plans(Suite::Tpch);
    let aggregation_over_lineitem = |q: &str| {
        let (_, plan) = plans.iter().find(|(n, _)| *n == q).unwrap();
        plan.pipelines()
            .find(|p| matches!(&p.source, tessera_ir::Source::Scan(s) if s.table == "lineitem") && matches!(p.sink, Sink::Aggregate(_)))
            .unwrap_or_else(|| panic!("{q} aggregates no lineitem scan:\n{plan}"))
            .clone()
    };
    let with_estimate = |mut p: tessera_ir::Pipeline, groups: u64| {
        if let Sink::Aggregate(a) = &mut p.sink {
            a.strategy = GroupStrategy::Hash { estimated_groups: groups, key_ranges: vec![None; a.group_by.len()] };
        }
        p
    };
    let rows = 60_000_000;
    let q18 = aggregation_over_lineitem("q18");
    assert!(q18.operators.iter().all(|o| matches!(o, Operator::Project { .. })), "{q18:?}");
    assert_eq!(too_many_groups(&with_estimate(q18.clone(), rows / 4), rows), Some(rows / 4));
    assert_eq!(too_many_groups(&with_estimate(q18, rows / (2 * GPU_MAX_GROUP_FRACTION)), rows), None);
    let q03 = aggregation_over_lineitem("q03");
    assert!(q03.operators.iter().any(|o| matches!(o, Operator::Probe(_))));
    assert_eq!(too_many_groups(&with_estimate(q03, rows / 2), rows), None);
}

/// A build over an intermediate result runs on the GPU, so that the pipelines probing
/// its table can too: TPC-H q17's per-part `0.2 * avg(l_quantity)` and q18's orders
/// passing the HAVING (kernels generated without the result's rows, compiled by NVRTC).
#[test]
fn builds_over_intermediate_results_generate_kernels() {
    use std::collections::HashMap;
    use tessera_cuda::codegen::KernelOptions;
    use tessera_exec::gpu::{GpuQueryState, plan_kernel};
    let (_dir, plans, _session) = plans_for(Suite::Tpch, tessera_engine::Target::Gpu);
    let nvrtc = tessera_cuda::test_support::nvrtc_or_skip("builds over intermediate results compile with NVRTC");
    for q in ["q17", "q18"] {
        let (_, plan) = plans.iter().find(|(n, _)| *n == q).unwrap();
        let build = plan
            .pipelines()
            .find(|p| matches!(p.source, tessera_ir::Source::Result { .. }) && matches!(p.sink, Sink::HashBuild(_)))
            .unwrap_or_else(|| panic!("{q} builds no table over an intermediate result:\n{plan}"));
        let placed = plan_kernel(build, None, &mut GpuQueryState::default(), &HashMap::new(), KernelOptions::default())
            .unwrap_or_else(|r| panic!("{q} pipeline {}: {}\n{plan}", build.id, tessera_cuda::codegen::unsupported::describe(&r)));
        assert!(matches!(placed.kernel.sink, tessera_cuda::codegen::SinkLayout::Build { .. }));
        if nvrtc {
            tessera_cuda::compile_cubin(&placed.kernel.source, "sm_90").unwrap_or_else(|e| panic!("{q}: {e}\n{}", placed.kernel.source));
        }
    }
}

/// The semi/anti joins run from their large side (MarkBuild sinks: q04's and q21's
/// lineitems, with q21's residual `l_suppkey <> l_suppkey`, and q22's 15 M orders at SF
/// 10) mark the kept side's rows on the GPU: the keys of the rows the CPU built go up as
/// a chained table (`gpu::MarkTable`), and the large side's kernel marks the rows it
/// matches. Both kernels generate and compile, and the marks index the host's rows.
#[test]
fn mark_pipelines_generate_kernels_over_the_hosts_keys() {
    use std::collections::HashMap;
    use tessera_cuda::codegen::{KernelOptions, SinkLayout};
    use tessera_exec::gpu::{GpuQueryState, plan_kernel, plan_marks};
    let (_dir, plans, session) = plans_with_session(Suite::Tpch);
    let nvrtc = tessera_cuda::test_support::nvrtc_or_skip("mark kernels compile with NVRTC");
    let manifest = session.store().manifest().unwrap();
    let mut residuals = 0;
    for q in ["q04", "q21", "q22"] {
        let (_, plan) = plans.iter().find(|(n, _)| *n == q).unwrap();
        let mut state = GpuQueryState::default();
        let mut shapes = HashMap::new();
        let mut marked = 0;
        for p in plan.pipelines() {
            let table = scanned_table(&session, &manifest, p);
            let Sink::MarkBuild(m) = &p.sink else {
                // Other pipelines as placement plans them, for the tables they build.
                if let Ok(placed) = plan_kernel(p, table.as_ref(), &mut state, &shapes, KernelOptions::default())
                    && let (Sink::HashBuild(b), SinkLayout::Build { table }) = (&p.sink, &placed.kernel.sink)
                {
                    shapes.insert(b.table, table.clone());
                }
                continue;
            };
            let build = plan.pipelines().find(|b| matches!(&b.sink, Sink::HashBuild(h) if h.table == m.table)).unwrap();
            let placed = plan_marks(p, m, build, table.as_ref().unwrap(), &mut state, &shapes, KernelOptions::default())
                .unwrap_or_else(|r| panic!("{q} pipeline {}: {}\n{plan}", p.id, tessera_cuda::codegen::unsupported::describe(&r)));
            let marks = placed.marks.as_ref().unwrap();
            // The keys' table: chained, numbered by the host's rows, holding what the
            // residual reads.
            let SinkLayout::Build { table: keys } = &marks.build.kernel.sink else { panic!("{q}: the keys' table is no build") };
            assert!(keys.chain.is_some(), "{q}: the keys' table is not chained");
            assert_eq!(keys.payload.len(), marks.read.len());
            assert_eq!(placed.kernel.sink, SinkLayout::Marks { rows: keys.chain.unwrap() });
            assert!(placed.kernel.source.contains("out_marks["), "{q}:\n{}", placed.kernel.source);
            if m.residual.is_some() {
                assert!(!marks.read.is_empty(), "{q}: a residual reading no build column");
                residuals += 1;
            }
            if nvrtc {
                for k in [&marks.build.kernel, &placed.kernel] {
                    tessera_cuda::compile_cubin(&k.source, "sm_90").unwrap_or_else(|e| panic!("{q} pipeline {}: {e}\n{}", p.id, k.source));
                }
            }
            marked += 1;
        }
        assert!(marked > 0, "{q} marks no rows:\n{plan}");
    }
    assert_eq!(residuals, 2, "q21's two residuals");
}

/// ORDER BY ... LIMIT over the groups of a GPU aggregation ranks them on the GPU, the
/// LIMIT narrowing many groups to those it can keep first (`GpuSort::limit`): q10's 20
/// customers (a perfect hash over the customer key), and q03's 10 orders by revenue and
/// order date (a hash aggregation; the order date, which the order key determines, is
/// a MIN in the reduced form).
#[test]
fn limited_sorts_of_aggregations_rank_on_the_gpu() {
    use std::collections::HashMap;
    use tessera_cuda::codegen::{KernelOptions, SinkLayout};
    use tessera_exec::gpu::{GpuQueryState, plan_kernel, plan_sort};
    let (_dir, plans, session) = plans_for(Suite::Tpch, tessera_engine::Target::Gpu);
    let manifest = session.store().manifest().unwrap();
    for (q, limit, hashed) in [("q03", 10, true), ("q10", 20, false)] {
        let (_, plan) = plans.iter().find(|(n, _)| *n == q).unwrap();
        let mut state = GpuQueryState::default();
        let mut shapes = HashMap::new();
        let mut placed = HashMap::new();
        for p in plan.pipelines() {
            let table = scanned_table(&session, &manifest, p);
            if let Ok(k) = plan_kernel(p, table.as_ref(), &mut state, &shapes, KernelOptions::default()) {
                if let (Sink::HashBuild(b), SinkLayout::Build { table }) = (&p.sink, &k.kernel.sink) {
                    shapes.insert(b.table, table.clone());
                }
                placed.insert(p.id, k);
            }
        }
        let sort = plan.pipelines().find(|p| matches!(p.sink, Sink::Sort(_))).unwrap_or_else(|| panic!("{q} has no sort:\n{plan}"));
        let tessera_ir::Source::Result { id, .. } = &sort.source else { panic!("{q}: its sort reads no result:\n{plan}") };
        let agg = plan.pipelines().find(|a| matches!(&a.sink, Sink::Aggregate(x) if x.result == *id)).unwrap();
        let Sink::Aggregate(a) = &agg.sink else { unreachable!() };
        let kernel = &placed.get(&agg.id).unwrap_or_else(|| panic!("{q}: its aggregation is not on the GPU:\n{plan}")).kernel;
        let SinkLayout::Aggregate { hashed: h, .. } = &kernel.sink else { unreachable!() };
        assert_eq!(h.is_some(), hashed, "{q}");
        let ranked = plan_sort(sort, a, kernel).unwrap_or_else(|r| panic!("{q}: {r}\n{plan}"));
        assert_eq!(ranked.limit, Some(limit), "{q}");
    }
}

/// A pipeline reading a result that lies on the host generates a kernel whatever its
/// sink: here an aggregation and materializations over the groups of a DataFusion step
/// (an aggregate FILTER is not in the IR), the SUM that may be NULL going up with its
/// validity bitmap, a string riding as its row number. All compile with NVRTC.
#[test]
fn pipelines_over_host_results_generate_kernels() {
    use std::collections::HashMap;
    use tessera_cuda::codegen::{KernelOptions, SinkLayout};
    use tessera_exec::gpu::{GpuQueryState, plan_kernel};
    let (_dir, _plans, session) = plans_for(Suite::Tpch, tessera_engine::Target::Gpu);
    let nvrtc = tessera_cuda::test_support::nvrtc_or_skip("pipelines over host results compile with NVRTC");
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let inner = "SELECT o_custkey, count(*) FILTER (WHERE o_orderstatus = 'F') AS ns, count(o_orderpriority) AS np, sum(o_totalprice) AS t FROM orders GROUP BY o_custkey";
    let by_priority = "SELECT o_orderpriority, count(*) FILTER (WHERE o_orderstatus = 'F') AS ns, sum(o_totalprice) AS t FROM orders GROUP BY o_orderpriority";
    for (sql, aggregates) in [
        (format!("SELECT ns, count(*), sum(t), min(np) FROM ({inner}) s WHERE np > 1 GROUP BY ns"), true),
        (format!("SELECT o_custkey, t * 2, np FROM ({inner}) s WHERE t > 1000 AND ns = 2"), false),
        // A string of the result rides as its row number.
        (format!("SELECT o_orderpriority, t FROM ({by_priority}) s WHERE ns > 10"), false),
    ] {
        let plan = runtime.block_on(session.plan_query_for(&sql, tessera_engine::Target::Gpu)).unwrap();
        let distinct = plan.externals().next().unwrap_or_else(|| panic!("no DataFusion step:\n{plan}"));
        let reader = plan
            .pipelines()
            .find(|p| matches!(&p.source, tessera_ir::Source::Result { id, .. } if *id == distinct.result))
            .unwrap_or_else(|| panic!("nothing reads the DataFusion step's result:\n{plan}"));
        let mut state = GpuQueryState::default();
        let placed = plan_kernel(reader, None, &mut state, &HashMap::new(), KernelOptions::default())
            .unwrap_or_else(|r| panic!("pipeline {}: {}\n{plan}", reader.id, tessera_cuda::codegen::unsupported::describe(&r)));
        assert!(!placed.reads_kept);
        assert_eq!(matches!(placed.kernel.sink, SinkLayout::Aggregate { .. }), aggregates, "{plan}");
        // The SUM may be NULL: its column goes up with a bitmap; the counts never are.
        let tessera_ir::Source::Result { fields, .. } = &reader.source else { unreachable!() };
        for (f, c) in fields.iter().zip(&placed.columns) {
            if f.ty == tessera_ir::Type::Utf8 {
                assert!(c.dictionary.is_some_and(|d| d.by_row) && !c.nullable, "{}: {c:?}", f.name);
            } else {
                assert_eq!(c.nullable, f.nullable, "{}", f.name);
            }
        }
        assert!(placed.columns.iter().any(|c| c.nullable), "{fields:?}");
        if nvrtc {
            tessera_cuda::compile_cubin(&placed.kernel.source, "sm_90").unwrap_or_else(|e| panic!("{e}\n{}", placed.kernel.source));
        }
    }
}

/// Aggregations with DISTINCT aggregates DataFusion leaves as they are (two distinct
/// arguments, COUNT(*) beside one) plan as pipelines without a DataFusion step
/// (`tessera_engine::distinct`), and every pipeline that scans a table, and every join
/// of the grouped branches (a key that may be NULL included), generates a kernel that
/// compiles.
#[test]
fn several_distinct_aggregates_are_pipelines_on_the_gpu() {
    use std::collections::HashMap;
    use tessera_cuda::codegen::{KernelOptions, SinkLayout};
    use tessera_exec::gpu::{GpuQueryState, plan_kernel};
    let (_dir, _plans, session) = plans_for(Suite::Tpch, tessera_engine::Target::Gpu);
    let manifest = session.store().manifest().unwrap();
    let nvrtc = tessera_cuda::test_support::nvrtc_or_skip("distinct aggregates compile with NVRTC");
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    for sql in [
        "SELECT o_orderpriority, count(DISTINCT o_custkey), count(DISTINCT o_clerk) FROM orders GROUP BY o_orderpriority",
        "SELECT l_returnflag, count(*), count(DISTINCT l_partkey), sum(DISTINCT l_quantity) FROM lineitem WHERE l_shipdate < DATE '1995-01-01' GROUP BY l_returnflag",
        "SELECT count(DISTINCT l_orderkey), count(DISTINCT l_suppkey), avg(l_discount) FROM lineitem",
        // A group key that may be NULL: the branches join on whether it is and its value.
        "SELECT k, count(DISTINCT o_custkey), count(DISTINCT o_clerk) FROM (SELECT CASE WHEN o_orderstatus = 'F' THEN NULL ELSE o_shippriority END AS k, o_custkey, o_clerk FROM orders) s GROUP BY k",
    ] {
        let plan = runtime.block_on(session.plan_query_for(sql, tessera_engine::Target::Gpu)).unwrap();
        assert_eq!(plan.externals().count(), 0, "{sql}:\n{plan}");
        // Grouped by an integer that may be NULL, the joins of the branches build their
        // tables on the GPU (strings are no join keys there; without GROUP BY the one-row
        // branches are crossed on the CPU). Its scans compute the NULL, which kernels do
        // not (a CASE without a value).
        let grouped = sql.starts_with("SELECT k,");
        let mut state = GpuQueryState::default();
        let mut shapes = HashMap::new();
        for p in plan.pipelines() {
            let table = scanned_table(&session, &manifest, p);
            match plan_kernel(p, table.as_ref(), &mut state, &shapes, KernelOptions::default()) {
                Ok(placed) => {
                    if let (Sink::HashBuild(b), SinkLayout::Build { table }) = (&p.sink, &placed.kernel.sink) {
                        shapes.insert(b.table, table.clone());
                    }
                    if nvrtc {
                        tessera_cuda::compile_cubin(&placed.kernel.source, "sm_90").unwrap_or_else(|e| panic!("{sql}: {e}\n{}", placed.kernel.source));
                    }
                }
                // Grouped by the nullable key, its builds; else its scans.
                Err(r) => assert!(
                    !if grouped { matches!(p.sink, Sink::HashBuild(_)) } else { matches!(p.source, tessera_ir::Source::Scan(_)) },
                    "{sql}: pipeline {} stays on the CPU: {}\n{plan}",
                    p.id,
                    tessera_cuda::codegen::unsupported::describe(&r)
                ),
            }
        }
    }
}

/// A sort whose pipeline filters runs its filter and projections on the GPU and only its
/// sort on the CPU (`gpu::split_sort`): q11's 305 K groups at SF 10, compared with a
/// scalar subquery's value, are read where the aggregation left them on the GPU, and only
/// the groups that pass are materialized. The kernel takes the subquery's value as a
/// parameter and compiles with NVRTC.
#[test]
fn sorts_that_filter_split_into_a_gpu_filter_and_a_cpu_sort() {
    use std::collections::HashMap;
    use tessera_cuda::codegen::{KernelOptions, SinkLayout};
    use tessera_exec::gpu::{GpuQueryState, plan_kernel, split_sort};
    let (_dir, plans, session) = plans_for(Suite::Tpch, tessera_engine::Target::Gpu);
    let manifest = session.store().manifest().unwrap();
    let nvrtc = tessera_cuda::test_support::nvrtc_or_skip("split sorts compile with NVRTC");
    let (_, plan) = plans.iter().find(|(n, _)| *n == "q11").unwrap();
    let mut state = GpuQueryState::default();
    let mut shapes = HashMap::new();
    let mut split = None;
    for p in plan.pipelines() {
        let table = scanned_table(&session, &manifest, p);
        let planned = match split_sort(p) {
            Some(filtered) => {
                let placed = plan_kernel(&filtered, table.as_ref(), &mut state, &shapes, KernelOptions::default())
                    .unwrap_or_else(|r| panic!("pipeline {}: {}\n{plan}", p.id, tessera_cuda::codegen::unsupported::describe(&r)));
                split = Some(placed);
                continue;
            }
            None => plan_kernel(p, table.as_ref(), &mut state, &shapes, KernelOptions::default()),
        };
        if let Ok(placed) = planned
            && let (Sink::HashBuild(b), SinkLayout::Build { table }) = (&p.sink, &placed.kernel.sink)
        {
            shapes.insert(b.table, table.clone());
        }
    }
    let split = split.unwrap_or_else(|| panic!("q11 has no sort that filters:\n{plan}"));
    assert!(split.reads_kept, "q11's filter does not read the aggregation's groups on the GPU:\n{plan}");
    assert!(matches!(split.kernel.sink, SinkLayout::Materialize { .. }));
    assert_eq!(split.kernel.subqueries.len(), 1, "{}", split.kernel.source);
    if nvrtc {
        tessera_cuda::compile_cubin(&split.kernel.source, "sm_90").unwrap_or_else(|e| panic!("{e}\n{}", split.kernel.source));
    }
    // A sort without a filter is not split: all its rows come back either way.
    let (_, q01) = plans.iter().find(|(n, _)| *n == "q01").unwrap();
    assert!(q01.pipelines().filter(|p| matches!(p.sink, Sink::Sort(_))).all(|p| split_sort(p).is_none()), "{q01}");
}

/// q18's subquery (`GROUP BY l_orderkey HAVING sum(l_quantity) > 300`, 15 M groups at SF
/// 10) keeps only its HAVING's groups: the filter that reads the aggregation's result
/// compares a SUM with a constant, which the GPU applies before the groups leave it.
#[test]
fn q18_having_is_applied_to_the_groups_on_the_gpu() {
    use tessera_exec::gpu::plan_having;
    let plans = plans(Suite::Tpch);
    let (_, plan) = plans.iter().find(|(n, _)| *n == "q18").unwrap();
    let agg = plan
        .pipelines()
        .find(|p| matches!(&p.source, tessera_ir::Source::Scan(s) if s.table == "lineitem") && matches!(p.sink, Sink::Aggregate(_)))
        .unwrap_or_else(|| panic!("q18 aggregates no lineitem scan:\n{plan}"));
    let Sink::Aggregate(a) = &agg.sink else { unreachable!() };
    let reader = plan
        .pipelines()
        .find(|p| matches!(&p.source, tessera_ir::Source::Result { id, .. } if *id == a.result))
        .unwrap_or_else(|| panic!("nothing reads q18's aggregation:\n{plan}"));
    let having = plan_having(reader, agg).unwrap_or_else(|e| panic!("{e}:\n{plan}"));
    assert_eq!(having.pipeline, reader.id);
    // sum(l_quantity) > 300.00: the decimal's unscaled value at scale 2.
    assert_eq!(having.terms.len(), 1, "{having:?}");
    assert_eq!((having.terms[0].aggregate, having.terms[0].op, having.terms[0].value), (0, tessera_ir::CmpOp::Gt, 30000));
}

/// The pipeline of query `query` that scans `table`.
fn scan_pipeline<'p>(plans: &'p [(&str, QueryPlan)], query: &str, table: &str) -> &'p tessera_ir::Pipeline {
    let (_, plan) = plans.iter().find(|(name, _)| *name == query).unwrap();
    plan.pipelines()
        .find(|p| matches!(&p.source, tessera_ir::Source::Scan(s) if s.table == table))
        .unwrap_or_else(|| panic!("{query}: no pipeline over {table}"))
}

/// A semi join probe goes ahead of the inner probes before it when it keeps fewer rows:
/// TPC-H q18's orders are looked up in the set of large orders (its `IN`) before their
/// customers, so only the orders kept probe the customer table.
#[test]
fn selective_semi_probes_run_before_inner_probes() {
    let plans = plans(Suite::Tpch);
    let orders = scan_pipeline(&plans, "q18", "orders");
    let probes: Vec<tessera_ir::JoinKind> = orders
        .operators
        .iter()
        .filter_map(|o| match o {
            Operator::Probe(p) => Some(p.kind),
            _ => None,
        })
        .collect();
    assert_eq!(probes, [tessera_ir::JoinKind::Semi, tessera_ir::JoinKind::Inner], "{orders:?}");
}

/// TPC-H q13 counts orders per customer over `customer LEFT JOIN orders`: the orders are
/// counted by customer key first (eager aggregation) and the join builds those counts,
/// not the orders themselves.
#[test]
fn q13_counts_orders_before_joining_customers() {
    let plans = plans(Suite::Tpch);
    let (_, q13) = plans.iter().find(|(name, _)| *name == "q13").unwrap();
    let orders = scan_pipeline(&plans, "q13", "orders");
    assert!(matches!(orders.sink, Sink::Aggregate(_)), "{orders:?}");
    let builds_a_scan = q13
        .pipelines()
        .any(|p| matches!(p.sink, Sink::HashBuild(_)) && matches!(p.source, tessera_ir::Source::Scan(_)));
    assert!(!builds_a_scan, "q13 builds a table straight from a scan:\n{q13}");
}

/// A year of a date as a group key has the years of the date column's range as its
/// domain: TPC-H q07 (two nations' names and l_year), q08 (o_year) and q09 (a nation's
/// name and o_year) group into small perfect-hash domains, not hash tables sized by the
/// rows joined.
#[test]
fn years_of_dates_group_into_perfect_hash_domains() {
    let plans = plans(Suite::Tpch);
    for q in ["q07", "q08", "q09"] {
        let (_, plan) = plans.iter().find(|(name, _)| *name == q).unwrap();
        let aggregate = plan
            .pipelines()
            .find_map(|p| match &p.sink {
                Sink::Aggregate(a) if !a.group_by.is_empty() => Some(a),
                _ => None,
            })
            .unwrap_or_else(|| panic!("{q} has no grouped aggregation:\n{plan}"));
        match &aggregate.strategy {
            GroupStrategy::Perfect { domains } => {
                let years = domains.last().unwrap();
                assert!(matches!(years, tessera_ir::KeyDomain::Range { min: 1992, max: 1998 }), "{q}: {years:?}");
            }
            other => panic!("{q} groups by {other:?}:\n{plan}"),
        }
    }
}

/// Aggregations carry the range of each argument the statistics know
/// (`Aggregate::value_ranges`): SSB q3.1's `SUM(lo_revenue)` lies above zero, which lets
/// the GPU read its groups present from the sums; q4.1's `SUM(lo_revenue -
/// lo_supplycost)` is an expression without a known range.
#[test]
fn aggregations_carry_their_arguments_ranges() {
    let plans = plans(Suite::Ssb);
    let ranges = |q: &str| {
        let (_, plan) = plans.iter().find(|(name, _)| *name == q).unwrap();
        plan.pipelines()
            .find_map(|p| match &p.sink {
                Sink::Aggregate(a) => Some(a.value_ranges.clone()),
                _ => None,
            })
            .unwrap_or_else(|| panic!("{q} has no aggregation:\n{plan}"))
    };
    let q31 = ranges("q3.1");
    assert!(matches!(q31.as_slice(), [Some((lo, hi))] if *lo > 0 && hi >= lo), "{q31:?}");
    assert_eq!(ranges("q4.1"), vec![None]);
}

/// Builds carry their payload columns' ranges where the statistics know them (the GPU
/// build may store them narrowed): SSB q3.1's date table keeps `d_year` from 1992 to
/// 1998; its string payloads (dictionary codes) have none.
#[test]
fn builds_carry_their_payloads_ranges() {
    let plans = plans(Suite::Ssb);
    let (_, plan) = plans.iter().find(|(name, _)| *name == "q3.1").unwrap();
    let ranges: Vec<(String, Option<(i64, i64)>)> = plan
        .pipelines()
        .filter_map(|p| match &p.sink {
            Sink::HashBuild(h) => {
                let fields = p.sink_input_fields();
                assert_eq!(h.payload.len(), h.payload_ranges.len(), "{h:?}");
                Some(h.payload.iter().zip(&h.payload_ranges).map(|(&c, r)| (fields[c].name.clone(), *r)).collect::<Vec<_>>())
            }
            _ => None,
        })
        .flatten()
        .collect();
    assert!(ranges.contains(&("date.d_year".to_string(), Some((1992, 1998)))), "{ranges:?}");
    assert!(ranges.contains(&("customer.c_nation".to_string(), None)), "{ranges:?}");
}

/// Plans shaped for the GPU (`Target::Gpu`): an inner join whose smaller side's keys
/// repeat builds the side whose keys are unique (TPC-H q12 builds orders, not its
/// lineitems), and a semi join without a residual builds a membership table of the
/// large side (q04's lineitems, no payload) instead of marking the small side; with a
/// residual (q21's EXISTS and NOT EXISTS) a chained table of lineitem's repeated order
/// keys, with the payload the residual reads. The same queries planned for the CPU keep
/// the smaller build and the marking.
#[test]
fn plans_for_the_gpu_build_unique_keys_and_membership_tables() {
    let (_d, gpu, _s) = plans_for(Suite::Tpch, tessera_engine::Target::Gpu);
    let (_d2, cpu, _s2) = plans_for(Suite::Tpch, tessera_engine::Target::Cpu);
    let find = |plans: &[(&str, QueryPlan)], name: &str| plans.iter().find(|(n, _)| *n == name).unwrap().1.clone();
    let builds = |plan: &QueryPlan| -> Vec<(String, tessera_ir::HashBuild)> {
        plan.pipelines()
            .filter_map(|p| match (&p.source, &p.sink) {
                (tessera_ir::Source::Scan(s), Sink::HashBuild(h)) => Some((s.table.clone(), h.clone())),
                _ => None,
            })
            .collect()
    };
    let q12 = find(&gpu, "q12");
    assert!(builds(&q12).iter().any(|(t, h)| t == "orders" && !h.repeated_keys), "{q12}");
    assert!(builds(&find(&cpu, "q12")).iter().any(|(t, _)| t == "lineitem"), "{}", find(&cpu, "q12"));
    let q04 = find(&gpu, "q04");
    assert!(!q04.pipelines().any(|p| matches!(p.sink, Sink::MarkBuild(_))), "{q04}");
    assert!(builds(&q04).iter().any(|(t, h)| t == "lineitem" && h.membership && h.payload.is_empty()), "{q04}");
    assert!(find(&cpu, "q04").pipelines().any(|p| matches!(p.sink, Sink::MarkBuild(_))));
    let q21 = find(&gpu, "q21");
    assert!(!q21.pipelines().any(|p| matches!(p.sink, Sink::MarkBuild(_))), "{q21}");
    let chained = builds(&q21).into_iter().filter(|(t, h)| t == "lineitem" && h.repeated_keys && !h.membership && !h.payload.is_empty()).count();
    assert_eq!(chained, 2, "{q21}");
    let residual_probes = q21
        .pipelines()
        .flat_map(|p| p.operators.iter())
        .filter(|o| matches!(o, tessera_ir::Operator::Probe(p) if matches!(p.kind, tessera_ir::JoinKind::Semi | tessera_ir::JoinKind::Anti) && p.residual.is_some()))
        .count();
    assert_eq!(residual_probes, 2, "{q21}");
    assert_eq!(find(&cpu, "q21").pipelines().filter(|p| matches!(p.sink, Sink::MarkBuild(_))).count(), 2);
}

/// TPC-H q10 groups by seven customer and nation columns and q18 by five customer and
/// order columns; `c_custkey` and `o_orderkey` are keys of their tables (in the data),
/// and the joins on keys fix the rest: q10 groups by `c_custkey` alone and q18 by
/// `o_orderkey` alone, each over a perfect-hash domain. Every pipeline of both that
/// scans a table or builds over a result then generates a kernel (NVRTC compiles it
/// where present).
#[test]
fn dependent_group_keys_reduce_q10_and_q18_to_one_key() {
    use std::collections::HashMap;
    use tessera_cuda::codegen::KernelOptions;
    use tessera_exec::gpu::{GpuQueryState, plan_kernel};
    let (_dir, plans, session) = plans_for(Suite::Tpch, tessera_engine::Target::Gpu);
    let nvrtc = tessera_cuda::test_support::nvrtc_or_skip("q10 and q18 kernels compile with NVRTC");
    let manifest = session.store().manifest().unwrap();
    for (q, key) in [("q10", "customer.c_custkey"), ("q18", "orders.o_orderkey")] {
        let (_, plan) = plans.iter().find(|(n, _)| *n == q).unwrap();
        let reduced: Vec<_> = plan
            .pipelines()
            .filter_map(|p| match &p.sink {
                Sink::Aggregate(a) => a.reduced_form(),
                _ => None,
            })
            .collect();
        assert_eq!(reduced.len(), 1, "{q}:\n{plan}");
        let (r, order) = &reduced[0];
        assert_eq!(r.fields.iter().take(r.group_by.len()).map(|f| f.name.as_str()).collect::<Vec<_>>(), vec![key], "{q}:\n{plan}");
        assert!(matches!(r.strategy, tessera_ir::GroupStrategy::Perfect { .. }), "{q}:\n{plan}");
        // Every column of the original output is one of the reduced form's.
        let mut seen = order.clone();
        seen.sort_unstable();
        assert_eq!(seen, (0..order.len()).collect::<Vec<_>>());
        let (mut state, mut shapes) = (GpuQueryState::default(), HashMap::new());
        for p in plan.pipelines() {
            // Builds over intermediate results are generated without their rows; other
            // pipelines over results (the final sorts) stay on the CPU.
            if matches!(p.source, tessera_ir::Source::Result { .. }) && !matches!(p.sink, Sink::HashBuild(_)) {
                continue;
            }
            let table = scanned_table(&session, &manifest, p);
            let placed = plan_kernel(p, table.as_ref(), &mut state, &shapes, KernelOptions::default())
                .unwrap_or_else(|r| panic!("{q} pipeline {}: {}\n{plan}", p.id, tessera_cuda::codegen::unsupported::describe(&r)));
            if let (Sink::HashBuild(b), tessera_cuda::codegen::SinkLayout::Build { table }) = (&p.sink, &placed.kernel.sink) {
                shapes.insert(b.table, table.clone());
            }
            if nvrtc {
                tessera_cuda::compile_cubin(&placed.kernel.source, "sm_90").unwrap_or_else(|e| panic!("{q}: {e}\n{}", placed.kernel.source));
            }
        }
    }
}

/// TPC-H q13: with its orders counted per customer below the outer join (eager
/// aggregation), the count per customer is grouped by `c_custkey`, a key of `customer`
/// whose rows the probe of the grouped orders (unique keys) matches at most once, so it
/// is a projection and the count of customers per count follows in the same pipeline.
/// For both targets.
#[test]
fn one_row_groups_are_projections_in_q13() {
    for target in [tessera_engine::Target::Cpu, tessera_engine::Target::Gpu] {
        let (_dir, plans, _session) = plans_for(Suite::Tpch, target);
        let (_, plan) = plans.iter().find(|(n, _)| *n == "q13").unwrap();
        let aggregates: Vec<&tessera_ir::Aggregate> = plan
            .pipelines()
            .filter_map(|p| match &p.sink {
                Sink::Aggregate(a) => Some(a),
                _ => None,
            })
            .collect();
        let keys: Vec<Vec<&str>> = aggregates.iter().map(|a| a.fields.iter().take(a.group_by.len()).map(|f| f.name.as_str()).collect()).collect();
        assert_eq!(keys, vec![vec!["orders.o_custkey"], vec!["c_orders.c_count"]], "{target:?}:\n{plan}");
        // The outer probe and the count of customers per count are one pipeline.
        let outer = plan
            .pipelines()
            .find(|p| p.operators.iter().any(|o| matches!(o, tessera_ir::Operator::Probe(pr) if pr.kind == tessera_ir::JoinKind::LeftOuter)))
            .unwrap_or_else(|| panic!("{target:?}: no outer probe\n{plan}"));
        assert!(matches!(&outer.sink, Sink::Aggregate(a) if a.fields[0].name == "c_orders.c_count"), "{target:?}:\n{plan}");
    }
}

/// What the planner knows of aggregates' values: a MIN keeps its argument's range
/// (q02's decimal `MIN(ps_supplycost)` beside `ps_partkey` packs into one hash key), and
/// a count per group has few distinct values (q13's customers per order count: a small
/// hash table, not one sized for every customer).
#[test]
fn aggregate_results_keep_what_is_known_of_their_values() {
    let (_dir, plans, _session) = plans_for(Suite::Tpch, tessera_engine::Target::Gpu);
    let (_, q02) = plans.iter().find(|(n, _)| *n == "q02").unwrap();
    let two_keys = q02
        .pipelines()
        .find_map(|p| match &p.sink {
            Sink::HashBuild(h) if h.keys.len() == 2 => Some(h),
            _ => None,
        })
        .unwrap_or_else(|| panic!("q02 builds no table on two keys:\n{q02}"));
    let tessera_ir::BuildStrategy::Hash { key_ranges } = &two_keys.strategy else { panic!("{q02}") };
    assert!(key_ranges.iter().all(Option::is_some), "{key_ranges:?}\n{q02}");
    let (_, q13) = plans.iter().find(|(n, _)| *n == "q13").unwrap();
    let by_count = q13
        .pipelines()
        .find_map(|p| match &p.sink {
            Sink::Aggregate(a) if a.fields[0].name == "c_orders.c_count" => Some(a),
            _ => None,
        })
        .unwrap();
    // SF 0.01: 15 000 orders, so at most √(8 · 15 000) + 1 distinct counts and a NULL's
    // 0, against 1 500 customers.
    let GroupStrategy::Hash { estimated_groups, .. } = by_count.strategy else { panic!("{q13}") };
    assert!(estimated_groups <= 348, "{estimated_groups} groups:\n{q13}");
}

/// Kernels over nullable columns (issue #19, validity bitmaps): the pipelines of queries
/// over a table whose columns hold NULLs are planned for the GPU, generated (with their
/// columns' validity bitmaps) and compiled with NVRTC for sm_90 — no GPU needed. Their
/// answers are checked by `tests/slt/gpu_nulls.slt` (on the CPU here, on the GPU on the
/// device) and the difftest's NULL templates (90–99).
#[allow(clippy::unwrap_used)]
mod nullable_columns {
    use std::collections::HashMap;

    use tessera_cuda::codegen::{KernelOptions, Param};
    use tessera_engine::Session;
    use tessera_exec::gpu::{GpuQueryState, plan_kernel};
    use tessera_ir::{Sink, Source};

    const SETUP: &[&str] = &[
        "CREATE TABLE t (k INT NOT NULL, g INT, v BIGINT, d DECIMAL(10,2), s VARCHAR, c INT)",
        "INSERT INTO t VALUES (1, 1, 10, 1.50, 'a', 1), (2, 1, NULL, NULL, NULL, 2), (3, 2, NULL, NULL, 'b', 3), (4, 2, NULL, 2.25, 'a', 4), \
         (5, NULL, 7, 3.00, NULL, 5), (6, NULL, NULL, NULL, 'c', 6), (7, 3, -4, -1.00, 'b', 7), (8, 3, 20, NULL, 'ab', 8)",
        "CREATE TABLE dim (id INT, name VARCHAR NOT NULL, w BIGINT NOT NULL)",
        "INSERT INTO dim VALUES (1, 'one', 10), (2, 'two', 20), (3, 'three', 30), (NULL, 'none', 40)",
        "CREATE TABLE nk (id INT NOT NULL)",
        "INSERT INTO nk VALUES (1), (3), (5), (7)",
        "CREATE TABLE attr (id INT NOT NULL, a BIGINT, b VARCHAR)",
        "INSERT INTO attr VALUES (1, 100, 'x'), (4, NULL, 'y'), (5, 50, NULL), (8, NULL, NULL)",
    ];

    /// Queries, and how many of their pipelines scanning a table must generate a kernel
    /// (the rest say why not).
    const QUERIES: &[(&str, usize)] = &[
        ("SELECT count(*), count(v), sum(v), min(v), max(v) FROM t", 1),
        // AVG of an integer (a double, as AVG(CAST(v AS DOUBLE))): v summed exactly,
        // divided by the count on the host.
        ("SELECT count(*), avg(v) FROM t", 1),
        ("SELECT g, avg(v), avg(k) FROM t GROUP BY g", 1),
        ("SELECT g, count(*), count(v), sum(v), min(v), max(v) FROM t GROUP BY g", 1),
        ("SELECT g, sum(d), min(d), max(d), avg(d) FROM t GROUP BY g", 1),
        ("SELECT count(*) FROM t WHERE v > 5 OR g IS NULL", 1),
        ("SELECT count(*), sum(k) FROM t WHERE v NOT IN (7, 10)", 1),
        ("SELECT count(*) FROM t WHERE s IS NULL OR s = 'b'", 1),
        ("SELECT count(*) FROM t WHERE s NOT LIKE 'a%'", 1),
        ("SELECT sum(coalesce(v, 0)) FROM t", 1),
        ("SELECT g, sum(CASE WHEN v IS NULL THEN 1 ELSE 0 END) FROM t GROUP BY g", 1),
        // The build of dim (its NULL key dropped) and the probe of it on a NULL key.
        ("SELECT dim.name, sum(t.v), count(t.v) FROM t JOIN dim ON t.g = dim.id GROUP BY dim.name", 2),
        ("SELECT count(*) FROM t WHERE EXISTS (SELECT 1 FROM dim WHERE dim.id = t.g)", 2),
        ("SELECT count(*), sum(k) FROM t WHERE NOT EXISTS (SELECT 1 FROM dim WHERE dim.id = t.g)", 2),
        ("SELECT sum(dim.w), count(*) FROM t LEFT JOIN dim ON t.g = dim.id", 2),
        ("SELECT sum(t.c), count(*) FROM dim JOIN t ON t.c = dim.id", 2),
        // A NULL group key (a dictionary's, a range's) is a group of its own.
        ("SELECT s, count(*), sum(v) FROM t GROUP BY s", 1),
        ("SELECT t.g, sum(dim.w) FROM t JOIN dim ON t.g = dim.id GROUP BY t.g", 2),
        ("SELECT g, max(d) FROM t WHERE v IS NULL GROUP BY g HAVING max(d) > 0", 1),
        // NOT IN is NULL-aware: the build flags whether it saw a row and a NULL key, and
        // the probe reads them.
        ("SELECT count(*) FROM t WHERE g NOT IN (SELECT id FROM dim)", 2),
        ("SELECT count(*) FROM t WHERE k NOT IN (SELECT id FROM dim)", 2),
        // Over keys that cannot be NULL on either side it is a plain anti join
        // (DataFusion plans it so): both pipelines generate.
        ("SELECT count(*), sum(k) FROM t WHERE k NOT IN (SELECT id FROM nk)", 2),
        // A hash group key that may be NULL (a decimal's: no perfect hash) packs NULL
        // as an offset of its own, alone or beside another key.
        ("SELECT d, count(*), sum(v) FROM t GROUP BY d", 1),
        ("SELECT g, d, count(*) FROM t GROUP BY g, d", 1),
        // Build payloads that may be NULL keep validity bits; probes read them, and
        // materialized values that may be NULL are written with theirs.
        ("SELECT t.k, attr.a, attr.b, t.v FROM t JOIN attr ON t.k = attr.id", 2),
        ("SELECT t.g, count(attr.a), sum(attr.a), count(*) FROM t JOIN attr ON t.k = attr.id GROUP BY t.g", 2),
        ("SELECT attr.b, count(*) FROM t JOIN attr ON t.k = attr.id GROUP BY attr.b", 2),
        ("SELECT t.k, attr.a FROM t LEFT JOIN attr ON t.k = attr.id WHERE t.k < 6", 2),
        ("SELECT k, v, d, s FROM t WHERE k > 4", 1),
        // A LEFT OUTER join of a table whose keys repeat (t.g): the probe expands its
        // rows into their matches, and keeps a row without one once. (An aggregate over
        // both sides: with right-side ones only, eager aggregation groups t first.)
        ("SELECT dim.name, count(t.k), sum(t.v * dim.id), count(*) FROM dim LEFT JOIN t ON t.g = dim.id GROUP BY dim.name", 2),
        // MIN/MAX of a dictionary-encoded string (with NULLs) over its codes, COUNT of it.
        ("SELECT g, min(s), max(s), count(s) FROM t GROUP BY g", 1),
        ("SELECT min(s), max(s) FROM t WHERE k > 2", 1),
        // EXISTS / IN inside OR: mark joins, every row with whether it matched.
        ("SELECT count(*), sum(v) FROM t WHERE k > 6 OR EXISTS (SELECT 1 FROM dim WHERE dim.id = t.g)", 2),
        ("SELECT count(*) FROM t WHERE v IS NULL OR g IN (SELECT id FROM dim WHERE w > 10)", 2),
        // Integer `/` and `%` (a zero divisor goes back to the CPU, which reports it).
        ("SELECT count(*), sum(v / 3) FROM t WHERE k % 3 = 1", 1),
        // Decimal division (truncated at the dividend's scale plus 4, as Arrow divides) and
        // remainder (at the larger scale).
        ("SELECT g, sum(d / 3), count(*) FROM t WHERE d / c > 0.5 GROUP BY g", 1),
        ("SELECT g, sum(d % 0.3), count(*) FROM t WHERE k % 2 = 0 AND d % 1 > 0.2 GROUP BY g", 1),
    ];

    #[test]
    fn kernels_over_nullable_columns_generate_and_compile() {
        let with_bitmaps = generate_and_compile(SETUP, QUERIES);
        // Every query reads a column with NULLs.
        assert!(with_bitmaps >= QUERIES.len(), "{with_bitmaps} kernels with validity bitmaps");
    }

    /// Doubles ride in kernels as keys of their total order: compared (with literals and
    /// integers cast), computed with, taken MIN/MAX of, summed, carried as payloads and
    /// materialized.
    /// Doubles as keys stay on the CPU.
    #[test]
    fn kernels_over_doubles_generate_and_compile() {
        const SETUP: &[&str] = &[
            "CREATE TABLE f (id INT NOT NULL, g INT NOT NULL, x DOUBLE, y DOUBLE NOT NULL)",
            "INSERT INTO f VALUES (1, 1, -1.0, 1.5), (2, 1, 0.0, -2.5), (3, 2, NULL, 3.0), (4, 2, 2.5, 0.25)",
            "CREATE TABLE d (g INT NOT NULL, w DOUBLE)",
            "INSERT INTO d VALUES (1, 0.5), (2, NULL)",
        ];
        const QUERIES: &[(&str, usize)] = &[
            ("SELECT count(*) FROM f WHERE x < 0 OR y >= CAST('2.5' AS DOUBLE)", 1),
            ("SELECT g, min(x), max(x), min(y), max(y), count(x) FROM f GROUP BY g", 1),
            ("SELECT min(y), max(y) FROM f WHERE CAST(id AS DOUBLE) > CAST('1.5' AS DOUBLE)", 1),
            ("SELECT f.id, d.w, f.x FROM f JOIN d ON f.g = d.g WHERE f.y > 0", 2),
            ("SELECT count(*) FROM f WHERE CASE WHEN g = 1 THEN y ELSE x END > 1", 1),
            // A decimal literal: DataFusion casts the double to a decimal.
            ("SELECT count(*), min(x) FROM f WHERE y < 0.5", 1),
            // SUM and AVG of doubles, grouped and scalar; a GROUP BY of one stays on the CPU.
            ("SELECT g, sum(y), avg(x) FROM f GROUP BY g", 1),
            ("SELECT avg(x), sum(y) FROM f WHERE g > 1", 1),
            ("SELECT y, count(*) FROM f GROUP BY y", 0),
            // Arithmetic on doubles, and a decimal cast to one.
            ("SELECT g, sum(y * y - x), max(-y / 4) FROM f WHERE y * 2 > x GROUP BY g", 1),
            ("SELECT count(*), min(x) FROM f WHERE y IN (CAST('1.5' AS DOUBLE), CAST('3.0' AS DOUBLE))", 1),
        ];
        generate_and_compile(SETUP, QUERIES);
    }

    /// Makes the tables of `setup`, then plans each query for the GPU and generates the
    /// kernel of each pipeline over a table (compiled where NVRTC is present): each
    /// query's count of kernels must be as given. Returns how many kernels read validity
    /// bitmaps.
    fn generate_and_compile(setup: &[&str], queries: &[(&str, usize)]) -> usize {
        let dir = tempfile::tempdir().unwrap();
        let session = Session::open(dir.path()).unwrap();
        let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
        for sql in setup {
            runtime.block_on(session.execute(sql)).unwrap_or_else(|e| panic!("{sql}: {e}"));
        }
        let nvrtc = tessera_cuda::test_support::nvrtc_or_skip("kernels over nullable columns compile with NVRTC");
        let manifest = session.store().manifest().unwrap();
        let mut with_bitmaps = 0;
        let mut wrong = Vec::new();
        for &(sql, want) in queries {
            let plan = runtime.block_on(session.plan_query_for(sql, tessera_engine::Target::Gpu)).unwrap_or_else(|e| panic!("{sql}: {e}"));
            let (mut state, mut shapes) = (GpuQueryState::default(), HashMap::new());
            let (mut placed, mut reasons) = (0, Vec::new());
            for p in plan.pipelines() {
                let Source::Scan(scan) = &p.source else { continue };
                let table = session.store().load(manifest.table(&scan.table).unwrap()).unwrap();
                match plan_kernel(p, Some(&table), &mut state, &shapes, KernelOptions::default()) {
                    Ok(gp) => {
                        if let (Sink::HashBuild(b), tessera_cuda::codegen::SinkLayout::Build { table }) = (&p.sink, &gp.kernel.sink) {
                            shapes.insert(b.table, table.clone());
                        }
                        with_bitmaps += usize::from(gp.kernel.params.iter().any(|p| matches!(p, Param::Validity { .. })));
                        if nvrtc {
                            tessera_cuda::compile_cubin(&gp.kernel.source, "sm_90").unwrap_or_else(|e| panic!("{sql}: pipeline {}: {e}\n{}", p.id, gp.kernel.source));
                        }
                        placed += 1;
                    }
                    Err(r) => reasons.push(format!("pipeline {}: {}", p.id, tessera_cuda::codegen::unsupported::describe(&r))),
                }
            }
            if placed != want {
                wrong.push(format!("{sql}: {placed} kernels, not {want}; on the CPU: {reasons:?}\n{plan}"));
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
        with_bitmaps
    }
}

/// The planner's estimate of the share of a scan's rows that reaches its first probe
/// (`Scan::kept_permille`, for `probe::early`): SSB q1.3 filters discount (3 of 11
/// values) and quantity (10 of 50), about 55 per mille; q2.1 filters no lineorder column.
#[test]
fn scans_carry_the_share_of_rows_their_filters_keep() {
    let plans = plans_for(Suite::Ssb, tessera_engine::Target::Gpu).1;
    let kept = |query: &str| match &scan_pipeline(&plans, query, "lineorder").source {
        tessera_ir::Source::Scan(s) => s.kept_permille,
        tessera_ir::Source::Result { .. } => unreachable!("a scan pipeline"),
    };
    assert!((20..=120).contains(&kept("q1.3")), "q1.3 keeps {} per mille", kept("q1.3"));
    assert_eq!(kept("q2.1"), 1000);
}
