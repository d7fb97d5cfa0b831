//! The executor: runs a planned query's steps in order — pipelines on a backend,
//! fallback subtrees on DataFusion — passing results between them as Arrow.
//!
//! Entry point: [`Executor::run`].
#![warn(missing_docs)]

mod build_cache;
mod experiments;
pub mod gpu;
mod group_columns;
mod zones;
/// How literals reach GPU kernels (re-exported for the session settings).
pub use tessera_cuda::codegen::{KernelOptions, Literals, MAX_ITEMS_PER_THREAD};

use std::sync::{Arc, Mutex};
use std::sync::atomic::{AtomicU64, Ordering};

use arrow::array::{ArrayRef, RecordBatch, RecordBatchOptions};
use arrow::datatypes::SchemaRef;
use datafusion::prelude::SessionContext;
use tessera_common::{Result, TesseraError};
use tessera_cpu::{Chunk, CpuBackend, CpuState, STRICT, arrow_err};
use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use experiments::ExecExperiments;

use datafusion::common::ScalarValue;
use tessera_ir::{Device, Expr, HashTableId, Operator, Pipeline, QueryPlan, Scalar, Sink, Source, Step};

use crate::gpu::{GpuPipeline, GpuQueryState, GpuRuntime};
use tessera_cuda::codegen::{Reason, Site, Unsupported, unsupported::describe};
use tessera_plan::PlannedQuery;
use tessera_storage::Store;

/// Runs planned queries against a store.
#[derive(Debug)]
pub struct Executor {
    store: Arc<Store>,
    cpu: CpuBackend,
    gpu: OnceLock<Option<GpuRuntime>>,
    fallbacks: AtomicU64,
    pipelines: AtomicU64,
    /// Placements of the plans run so far (see [`PlacementCache`]).
    placements: PlacementCache,
    /// The placements of cached plans' runs, by the plan's number (see
    /// [`Executor::placement_of`]).
    by_plan: Mutex<HashMap<u64, PlanPlacement>>,
    /// The last query's steps run on the CPU and DataFusion, for EXPLAIN ANALYZE.
    last_runs: Mutex<Vec<StepRun>>,
}

/// A step of the last query run on the CPU backend or DataFusion, with its times.
#[derive(Debug, Clone)]
pub struct StepRun {
    /// "pipeline 3" or "fallback 0".
    pub step: String,
    /// The CPU backend's pipeline (false: a DataFusion fallback).
    pub cpu: bool,
    /// Rows and times (a fallback has only `morsels_ms`, its whole time, and `rows_out`).
    pub run: tessera_cpu::PipelineRun,
}

/// GPU placements (kernels generated, reasons, the GPU sorts) by plan, so that a query
/// run again skips placement and code generation: 0.1–0.3 ms a query on the H200's host
/// for SSB (2026-11-23; q1.1 0.2 → 0.05 ms, SSB SF 1 in total 7.8 → 4.6 ms). Keyed by the plan's full text (its scans name table versions, so a
/// write makes a new key), the device setting and the kernel options; a cached plan's
/// runs find theirs by the plan's number ([`PlannedQuery::id`], see [`PlanPlacement`]).
type PlacementCache = tessera_common::TextCache<Arc<Placement>>;

/// Entries kept at most in each of the two caches (by text, by plan number); a cache is
/// cleared when full (as the session's plan cache).
const PLACEMENT_CACHE_ENTRIES: usize = 512;

/// A cached plan's placement with the device setting and kernel options it was made
/// under, which a run compares with its own rather than formatting them into a text key
/// (the options' Debug text took microseconds of each warm query).
type PlanPlacement = (DevicePref, KernelOptions, Arc<Placement>);

impl Executor {
    /// An executor over `store` using every core.
    pub fn new(store: Arc<Store>) -> Self {
        Executor {
            store,
            cpu: CpuBackend::default(),
            gpu: OnceLock::new(),
            fallbacks: AtomicU64::new(0),
            pipelines: AtomicU64::new(0),
            placements: PlacementCache::new(PLACEMENT_CACHE_ENTRIES),
            by_plan: Mutex::new(HashMap::new()),
            last_runs: Mutex::new(Vec::new()),
        }
    }

    /// DataFusion subtrees run so far (the fallback counter).
    pub fn fallback_count(&self) -> u64 {
        self.fallbacks.load(Ordering::Relaxed)
    }

    /// The CPU and DataFusion steps of the query run last, with their times.
    pub fn last_runs(&self) -> Vec<StepRun> {
        self.last_runs.lock().map(|r| r.clone()).unwrap_or_default()
    }

    /// CPU worker threads.
    pub fn cpu_threads(&self) -> usize {
        self.cpu.threads()
    }

    /// Pipelines run so far.
    pub fn pipeline_count(&self) -> u64 {
        self.pipelines.load(Ordering::Relaxed)
    }

    /// Runs `planned` and returns its rows typed as `schema` (DataFusion's schema of the
    /// query).
    pub async fn run(&self, planned: &PlannedQuery, ctx: &SessionContext, schema: &SchemaRef, device: DevicePref) -> Result<Vec<RecordBatch>> {
        self.run_at(planned, ctx, schema, device, None).await
    }

    /// [`Executor::run`] with the manifest the statement read already (`seen`; None: read
    /// here), against which its pipelines check their tables: a warm statement then
    /// reads the manifest (a `stat` of its file) once, not once in the session and again
    /// here.
    pub async fn run_at(&self, planned: &PlannedQuery, ctx: &SessionContext, schema: &SchemaRef, device: DevicePref, seen: Option<Arc<tessera_storage::Manifest>>) -> Result<Vec<RecordBatch>> {
        if let (false, Some(gpu)) = (device == DevicePref::Cpu, self.gpu()) {
            gpu.clear_last_runs();
            let started = std::time::Instant::now();
            let mut placement = self.placement_of(gpu, planned, device)?;
            if let Ok(mut t) = gpu.last_placement_ms.lock() {
                *t = started.elapsed().as_secs_f64() * 1e3;
            }
            tessera_common::trace::mark("placement");
            // A stream of its own and a reservation of the memory its kernels need; when
            // that cannot be had (more than the limit, or queued too long behind other
            // queries' reservations) the query runs on the CPU backend below.
            let admitted = !placement.kernels.is_empty() && {
                let Placement { kernels, state, .. } = &mut placement;
                match gpu.admit(state, kernels.values().map(|k| k.as_ref())) {
                    Ok(()) => true,
                    Err(TesseraError::ResourcesExhausted(_)) => false,
                    Err(e) => return Err(e),
                }
            };
            tessera_common::trace::mark("admitted");
            if admitted {
                match self.run_steps(planned, ctx, schema, Some((gpu, placement)), seen.clone()).await {
                    Err(TesseraError::RetryOnCpu(_)) => {}
                    // Over the GPU memory limit even after evicting cached columns: the
                    // CPU backend needs no GPU memory.
                    Err(TesseraError::ResourcesExhausted(_)) => {}
                    other => return other,
                }
            }
        }
        self.run_steps(planned, ctx, schema, None, seen).await
    }

    /// Sets the GPU memory limit (`tessera.gpu_memory_limit`; None: the default). Opens
    /// the GPU if it is not open yet; does nothing without one. A new limit drops the
    /// cached placements: the forms a table's columns go up in depend on it (a table
    /// over half the limit goes up compact, see `gpu::compact_table`).
    pub fn set_gpu_memory_limit(&self, limit: Option<usize>) {
        if let Some(gpu) = self.gpu() {
            if gpu.set_memory_limit(limit) {
                self.drop_placements();
            }
        }
    }

    /// Which stored tables go up compact on the GPU (`tessera.gpu_compact_tables`); a
    /// change drops the cached placements, as a new memory limit does. Does nothing
    /// without a GPU.
    pub fn set_gpu_compact_tables(&self, compact: gpu::CompactTables) {
        if let Some(gpu) = self.gpu() {
            if gpu.set_compact_tables(compact) {
                self.drop_placements();
            }
        }
    }

    /// Forgets the cached placements (their kernels were made for the columns' forms of
    /// the settings they were placed under).
    fn drop_placements(&self) {
        self.placements.clear();
        if let Ok(mut m) = self.by_plan.lock() {
            m.clear();
        }
    }

    /// How GPU kernels are generated (`tessera.kernel_literals`,
    /// `tessera.gpu_items_per_thread`); does nothing without a GPU.
    pub fn set_kernel_options(&self, options: KernelOptions) {
        if let Some(gpu) = self.gpu() {
            gpu.set_kernel_options(options);
        }
    }

    /// The GPU runtime, opened on first use (None without a GPU).
    pub fn gpu(&self) -> Option<&GpuRuntime> {
        self.gpu
            .get_or_init(|| {
                if std::env::var_os("TESSERA_DISABLE_GPU").is_some() {
                    return None;
                }
                GpuRuntime::open(Some(self.store.dir().join("kernels")))
            })
            .as_ref()
    }

    /// Decides which pipelines run on the GPU and generates their kernels.
    fn placement(&self, gpu: &GpuRuntime, plan: &QueryPlan, device: DevicePref) -> Result<Placement> {
        let mut banned: HashSet<usize> = HashSet::new();
        loop {
            let mut p = Placement::default();
            let mut shapes = HashMap::new();
            for pipe in plan.pipelines() {
                // A HAVING applied on the GPU leaves only its groups to download.
                let having = gpu_having(plan, pipe);
                let marked = matches!(&pipe.sink, Sink::HashBuild(b) if marker(plan, b.table).is_some());
                // A sort that filters: its filter on the GPU, its sort on the CPU.
                let split = split_sort_of(plan, pipe, &p);
                let planned_pipe = split.as_ref().unwrap_or(pipe);
                let planned = if banned.contains(&pipe.id) {
                    Err(vec![Unsupported::new(Site::Placement, Reason::ProbedOnCpu)])
                } else if marked {
                    // The rows a mark sink picks stay on the host (see `gpu::MarkTable`).
                    Err(vec![Unsupported::new(Site::Placement, Reason::MarkedOnGpu)])
                } else if let Source::Scan(scan) = &pipe.source {
                    let is_build = matches!(pipe.sink, Sink::HashBuild(_));
                    let many_groups = if device == DevicePref::Auto && having.is_none() { gpu::too_many_groups(pipe, scan.rows) } else { None };
                    if device == DevicePref::Auto && !is_build && scan.rows < ExecExperiments::get().gpu_min_rows && !probes_large_build(plan, pipe) {
                        Err(vec![Unsupported::new(Site::Placement, Reason::SmallInput(ExecExperiments::get().gpu_min_rows))])
                    } else if let Some(groups) = many_groups {
                        Err(vec![Unsupported::new(Site::Placement, Reason::ManyGroups { groups, rows: scan.rows })])
                    } else {
                        let table = self.load(scan)?;
                        match &pipe.sink {
                            Sink::MarkBuild(m) => match builder_of(plan, m.table) {
                                Some(build) => gpu::plan_marks(pipe, m, build, &table, &mut p.state, &shapes, gpu.kernel_options()),
                                None => Err(vec![Unsupported::new(Site::Placement, Reason::Inconsistent(format!("no pipeline builds table h{}", m.table)))]),
                            },
                            // (A sort over a scan is never split: `split_sort_of`.)
                            _ => gpu.plan(pipe, Some(&table), &mut p.state, &shapes),
                        }
                    }
                } else {
                    // An intermediate result: one kept on the GPU is read there; one on
                    // the host goes up whole, which pays as a table's scan does, from
                    // `gpu_min_rows` rows, for a probe or an aggregation (a build goes up
                    // whatever its size, for the GPU pipelines probing it; rows only
                    // filtered or materialized are read where they lie).
                    let (on_host, rows) = match &pipe.source {
                        Source::Result { id, .. } => (!p.state.result_layouts.contains_key(id), result_rows(plan, *id)),
                        Source::Scan(_) => (false, u64::MAX),
                    };
                    let is_build = matches!(pipe.sink, Sink::HashBuild(_));
                    let auto_on_host = device == DevicePref::Auto && on_host;
                    let many_groups = if auto_on_host && having.is_none() { gpu::too_many_groups(pipe, rows) } else { None };
                    // Work worth the transfer: a probe, an aggregation, a build or marks.
                    let heavy = is_build || !matches!(pipe.sink, Sink::Materialize { .. } | Sink::Sort(_)) || pipe.operators.iter().any(|o| matches!(o, Operator::Probe(_)));
                    if auto_on_host && !is_build && rows < ExecExperiments::get().gpu_min_rows && !probes_large_build(plan, pipe) {
                        Err(vec![Unsupported::new(Site::Placement, Reason::SmallInput(ExecExperiments::get().gpu_min_rows))])
                    } else if auto_on_host && !heavy {
                        Err(vec![Unsupported::new(Site::Placement, Reason::HostRows)])
                    } else if let Some(groups) = many_groups {
                        Err(vec![Unsupported::new(Site::Placement, Reason::ManyGroups { groups, rows })])
                    } else {
                        gpu.plan(planned_pipe, None, &mut p.state, &shapes)
                    }
                };
                let reason = match planned {
                    Ok(placed) => {
                        if let (Sink::HashBuild(b), tessera_cuda::codegen::SinkLayout::Build { table: shape }) = (&pipe.sink, &placed.kernel.sink) {
                            shapes.insert(b.table, shape.clone());
                        }
                        Arc::make_mut(&mut p.kernels).insert(pipe.id, Arc::new(placed));
                        if split.is_some() {
                            Arc::make_mut(&mut p.split_sorts).insert(pipe.id);
                        }
                        if let Some(h) = having {
                            Arc::make_mut(&mut p.fused_havings).insert(h.pipeline, pipe.id);
                            Arc::make_mut(&mut p.state.havings).insert(pipe.id, h);
                        }
                        None
                    }
                    // A split sort's reasons are its filter's: its sort is on the CPU anyway.
                    Err(mut r) => {
                        if split.is_some() {
                            r.push(Unsupported::new(Site::Sink("sort"), Reason::Sort));
                        }
                        Some(r)
                    }
                };
                if let Some(r) = reason {
                    Arc::make_mut(&mut p.reasons).insert(pipe.id, r);
                }
            }
            // A table built on the GPU must be probed only on the GPU.
            let mut changed = false;
            for pipe in plan.pipelines() {
                if let (Sink::HashBuild(b), true) = (&pipe.sink, p.kernels.contains_key(&pipe.id)) {
                    let consumers_on_gpu = plan.pipelines().all(|q| {
                        // (A table a mark sink reads is never built on the GPU: `marked` above.)
                        let probes = q.operators.iter().any(|o| matches!(o, Operator::Probe(pr) if pr.table == b.table));
                        !probes || p.kernels.contains_key(&q.id)
                    });
                    if !consumers_on_gpu && banned.insert(pipe.id) {
                        changed = true;
                    }
                }
            }
            if !changed {
                // A marked table's build whose marks are made on the CPU stays there for that.
                for pipe in plan.pipelines() {
                    if let Sink::HashBuild(b) = &pipe.sink
                        && marker(plan, b.table).is_some_and(|m| !p.kernels.contains_key(&m.id))
                    {
                        Arc::make_mut(&mut p.reasons).insert(pipe.id, vec![Unsupported::new(Site::Placement, Reason::ProbedOnCpu)]);
                    }
                }
                plan_gpu_sorts(plan, &mut p);
                keep_results_on_gpu(plan, &mut p);
                gpu::link_build_keys(plan.pipelines(), &p.kernels);
                return Ok(p);
            }
        }
    }

    /// The placement of a plan about to run: found by the plan's number when it ran
    /// before (a cached plan: the lookup hashes a short key, not the plan's text of 3–10
    /// KB, SSB's), else by its text ([`Executor::cached_placement`]), and then kept under
    /// both.
    fn placement_of(&self, gpu: &GpuRuntime, planned: &PlannedQuery, device: DevicePref) -> Result<Placement> {
        if !ExecExperiments::get().short_lookups {
            return self.cached_placement(gpu, &planned.plan, Some(planned.plan_text()), device);
        }
        let options = gpu.kernel_options();
        let found = self.by_plan.lock().ok().and_then(|m| {
            m.get(&planned.id()).filter(|(d, o, _)| *d == device && *o == options).map(|(_, _, p)| Arc::clone(p))
        });
        if let Some(cached) = found {
            return Ok(cached.for_run());
        }
        let placement = self.cached_placement(gpu, &planned.plan, Some(planned.plan_text()), device)?;
        if let Ok(mut m) = self.by_plan.lock() {
            if m.len() >= PLACEMENT_CACHE_ENTRIES {
                m.clear();
            }
            m.insert(planned.id(), (device, options, Arc::new(placement.for_run())));
        }
        Ok(placement)
    }

    /// The placement of `plan`, from the cache or made (and cached) now. `text` is the
    /// plan's Debug text where the caller has it made already.
    fn cached_placement(&self, gpu: &GpuRuntime, plan: &QueryPlan, text: Option<&str>, device: DevicePref) -> Result<Placement> {
        let key = match text {
            Some(text) => format!("{device:?} {:?} {text}", gpu.kernel_options()),
            None => format!("{device:?} {:?} {plan:?}", gpu.kernel_options()),
        };
        Ok(match self.placements.get(&key) {
            Some(cached) => cached.for_run(),
            None => {
                let placement = self.placement(gpu, plan, device)?;
                self.placements.insert(key, Arc::new(placement.for_run()));
                placement
            }
        })
    }

    /// The rows the pipelines placed on the GPU read from their tables: how much of a
    /// plan's work the GPU takes (0 without a GPU, under 'cpu', or when placement fails).
    /// The placement is cached for the run that follows.
    pub fn gpu_rows(&self, plan: &QueryPlan, device: DevicePref) -> u64 {
        let Some(gpu) = self.gpu().filter(|_| device != DevicePref::Cpu) else { return 0 };
        let Ok(placement) = self.cached_placement(gpu, plan, None, device) else { return 0 };
        plan.pipelines()
            .filter(|p| placement.kernels.contains_key(&p.id))
            .map(|p| if let Source::Scan(s) = &p.source { s.rows } else { 0 })
            .sum()
    }

    /// The plan with each pipeline's device and reason filled in (for EXPLAIN).
    pub fn place(&self, plan: &mut QueryPlan, device: DevicePref) {
        let placement = match (device, self.gpu()) {
            (DevicePref::Cpu, _) => None,
            (_, None) => None,
            (_, Some(gpu)) => self.cached_placement(gpu, plan, None, device).ok(),
        };
        for step in plan.steps.iter_mut() {
            if let Step::Pipeline(p) = step {
                match &placement {
                    Some(pl) if pl.kernels.contains_key(&p.id) => {
                        p.device = Device::Gpu;
                        p.device_reason = pl
                            .split_sorts
                            .contains(&p.id)
                            .then(|| "filtered and projected on the GPU; the rows that pass are sorted on the CPU".to_string());
                    }
                    Some(pl) if pl.fused_sorts.contains_key(&p.id) => {
                        p.device = Device::Gpu;
                        p.device_reason = Some(format!(
                            "ranked with pipeline {}'s groups before they leave the GPU, up to {} groups (more: on the CPU, unless a LIMIT that keeps at most as many leaves no more)",
                            pl.fused_sorts[&p.id],
                            gpu::GPU_SORT_MAX_ROWS
                        ));
                    }
                    Some(pl) => {
                        p.device = Device::Cpu;
                        p.device_reason = pl.reasons.get(&p.id).map(|r| describe(r));
                        if let Some(agg) = pl.fused_havings.get(&p.id) {
                            let note = format!("its filter's comparisons of aggregates with constants applied on the GPU to pipeline {agg}'s groups before they leave it");
                            p.device_reason = Some(match p.device_reason.take() {
                                Some(r) => format!("{r}; {note}"),
                                None => note,
                            });
                        }
                    }
                    None => {
                        p.device = Device::Cpu;
                        p.device_reason =
                            Some(if device == DevicePref::Cpu { "tessera.device = 'cpu'" } else { "no GPU" }.to_string());
                    }
                }
            }
        }
    }

    /// Table `scan.table` at the version the plan was made for: another session may have
    /// committed since (then the statement is planned again, see [`TesseraError::StalePlan`]:
    /// kernels bind dictionary codes and key ranges of the planned version).
    fn load(&self, scan: &tessera_ir::Scan) -> Result<Arc<tessera_storage::LoadedTable>> {
        self.load_seen(scan, &mut None)
    }

    /// As [`Executor::load`], against the manifest in `seen`, read into it by the first
    /// call of a statement: its pipelines check their tables against one manifest, the
    /// store's state when it started (each read is a `stat` of the manifest file).
    fn load_seen(&self, scan: &tessera_ir::Scan, seen: &mut Option<Arc<tessera_storage::Manifest>>) -> Result<Arc<tessera_storage::LoadedTable>> {
        let manifest = self.manifest_seen(seen)?;
        self.store.load(planned_meta(&manifest, scan)?)
    }

    /// Checks, as [`Executor::load_seen`] does, that table `scan.table` is at the version
    /// the plan was made for, without loading it.
    fn check_seen(&self, scan: &tessera_ir::Scan, seen: &mut Option<Arc<tessera_storage::Manifest>>) -> Result<()> {
        planned_meta(&*self.manifest_seen(seen)?, scan).map(|_| ())
    }

    /// The manifest in `seen`, read into it by the statement's first call.
    fn manifest_seen(&self, seen: &mut Option<Arc<tessera_storage::Manifest>>) -> Result<Arc<tessera_storage::Manifest>> {
        Ok(match seen {
            Some(m) if ExecExperiments::get().short_lookups => Arc::clone(m),
            _ => {
                let m = self.store.manifest()?;
                *seen = Some(Arc::clone(&m));
                m
            }
        })
    }

    async fn run_steps(
        &self,
        planned: &PlannedQuery,
        ctx: &SessionContext,
        schema: &SchemaRef,
        mut gpu: Option<(&GpuRuntime, Placement)>,
        seen: Option<Arc<tessera_storage::Manifest>>,
    ) -> Result<Vec<RecordBatch>> {
        let mut state = CpuState::default();
        let mut manifest = seen;
        if let Ok(mut r) = self.last_runs.lock() {
            r.clear();
        }
        let record = |run: StepRun| {
            if let Ok(mut r) = self.last_runs.lock() {
                r.push(run);
            }
        };
        for step in &planned.plan.steps {
            match step {
                Step::Pipeline(p) => {
                    tessera_common::trace::mark("pipeline");
                    if let Some((_, pl)) = gpu.as_ref()
                        && pl.state.took_build(p.id)
                    {
                        // Its table was taken from the build cache at admission: the
                        // stored table it was built from need only still be the one
                        // planned (`GpuRuntime::admit`).
                        if let Source::Scan(scan) = &p.source {
                            self.check_seen(scan, &mut manifest)?;
                        }
                        self.pipelines.fetch_add(1, Ordering::Relaxed);
                        continue;
                    }
                    // The values of the scalar subqueries it reads: GPU kernels take them as
                    // parameters, the CPU backend as literals.
                    let subqueries = subquery_values(p, &state)?;
                    let bound;
                    let p = if subqueries.is_empty() {
                        p
                    } else {
                        bound = bind_subqueries(p, &subqueries);
                        &bound
                    };
                    let on_gpu = gpu.as_mut().and_then(|(rt, pl)| pl.kernels.get(&p.id).map(|k| (*rt, Arc::clone(k), &mut pl.state)));
                    if let Some((rt, k, gstate)) = on_gpu {
                        let table = match &p.source {
                            Source::Scan(scan) => self.load_seen(scan, &mut manifest)?,
                            // Kept on the GPU: the kernel reads it there (see `gpu::result_layout`).
                            Source::Result { id, .. } if k.reads_kept => Arc::new(gpu::kept_table(*id)),
                            Source::Result { id, .. } => {
                                let table = Arc::new(gpu::result_table(*id, &result(&state, *id)?)?);
                                gstate.hold_result(*id, Arc::clone(&table));
                                table
                            }
                        };
                        if let (Sink::MarkBuild(m), Some(marks)) = (&p.sink, &k.marks) {
                            let chunks = self.marks_on_gpu(rt, &k, m, marks, &table, gstate, &state, &subqueries)?;
                            state.results.insert(m.result, Arc::new(chunks));
                        } else if let Some(chunk) = rt.run(&k, &table, gstate, &subqueries)? {
                            if let Some(r) = p.sink.result() {
                                let chunks = if chunk.rows == 0 { Vec::new() } else { vec![chunk] };
                                if matches!(p.sink, Sink::Sort(_)) {
                                    // A split sort (`gpu::split_sort`): the GPU kept and
                                    // projected the rows, the CPU backend sorts them.
                                    let sort = Pipeline {
                                        source: Source::Result { id: r, fields: k.pipeline.sink_input_fields() },
                                        operators: Vec::new(),
                                        ..p.clone()
                                    };
                                    let run = self.cpu.run(&sort, &chunks, &mut state)?;
                                    record(StepRun { step: format!("pipeline {} (its sort)", p.id), cpu: true, run });
                                } else {
                                    state.results.insert(r, Arc::new(chunks));
                                }
                            }
                        }
                    } else if let (Some((_, pl)), Source::Result { id, .. }, Sink::Sort(sort)) = (gpu.as_ref(), &p.source, &p.sink)
                        && pl.state.sorted.contains(&p.id)
                    {
                        // The GPU ranked these groups already (see `gpu::GpuSort`); a
                        // projection before the sort only picks columns (`plan_sort`).
                        let input = result(&state, *id)?;
                        let mut out = tessera_cpu::limit(input.as_ref().clone(), sort.skip, sort.fetch)?;
                        if let [Operator::Project { exprs, .. }] = p.operators.as_slice() {
                            for chunk in &mut out {
                                let picked = exprs
                                    .iter()
                                    .map(|e| match e {
                                        Expr::Column { index, .. } => chunk.columns.get(*index).cloned(),
                                        _ => None,
                                    })
                                    .collect::<Option<Vec<_>>>()
                                    .ok_or_else(|| TesseraError::Internal("a GPU-ranked sort's projection computes a column".into()))?;
                                chunk.columns = picked;
                            }
                        }
                        state.results.insert(sort.result, Arc::new(out));
                        tessera_common::trace::mark("ranked groups limited");
                    } else {
                        let input = self.source(&p.source, &p.operators, &state, &mut manifest)?;
                        let run = self.cpu.run(p, &input, &mut state)?;
                        record(StepRun { step: format!("pipeline {}", p.id), cpu: true, run });
                    }
                    self.pipelines.fetch_add(1, Ordering::Relaxed);
                }
                Step::External(e) => {
                    let ext = planned
                        .externals
                        .get(e.id)
                        .ok_or_else(|| TesseraError::Internal(format!("fallback #{} missing", e.id)))?;
                    for (rid, slot) in &ext.inputs {
                        let chunks = result(&state, *rid)?;
                        slot.fill(to_batches(&chunks, slot.schema_ref())?);
                    }
                    let started = std::time::Instant::now();
                    let df = ctx.execute_logical_plan(ext.plan.clone()).await.map_err(df_err)?;
                    let batches = df.collect().await.map_err(df_err)?;
                    let run = tessera_cpu::PipelineRun {
                        rows_out: batches.iter().map(|b| b.num_rows() as u64).sum(),
                        morsels_ms: started.elapsed().as_secs_f64() * 1e3,
                        ..Default::default()
                    };
                    record(StepRun { step: format!("fallback {}", e.id), cpu: false, run });
                    let chunks = batches.iter().filter(|b| b.num_rows() > 0).map(|b| Chunk::new(b.columns().to_vec(), b.num_rows())).collect();
                    state.results.insert(e.result, Arc::new(chunks));
                    self.fallbacks.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        let out = result(&state, planned.plan.output)?;
        tessera_common::trace::mark("steps done");
        let batches = to_batches(&out, schema);
        tessera_common::trace::mark("batches made");
        if let (Ok(_), Some((_, placement))) = (&batches, gpu.as_mut()) {
            // Its pipelines' spare sink arrays may go back for their next runs.
            placement.state.complete();
        }
        // The GPU state (the query's stream, its buffers) is dropped on return. (Dropped
        // on a thread of its own instead, after the result was returned, SSB SF 20 was
        // slower: 5.90 against 5.55 ms, every host step of the next query slower while
        // that thread ran, 2026-11-28f run 2.)
        drop(gpu);
        tessera_common::trace::mark("GPU state dropped");
        batches
    }

    /// Runs mark pipeline `k` (sink `m`) on the GPU: the columns of the host table's rows
    /// that its keys' table needs go up and are built into it (see `gpu::MarkTable`),
    /// the kernel marks the rows its input matches, and the rows marked (semi) or not
    /// (anti) are taken from the host table as the CPU backend takes them.
    #[allow(clippy::too_many_arguments)]
    fn marks_on_gpu(
        &self,
        rt: &GpuRuntime,
        k: &GpuPipeline,
        m: &tessera_ir::MarkBuild,
        marks: &gpu::MarkTable,
        table: &tessera_storage::LoadedTable,
        gstate: &mut GpuQueryState,
        state: &CpuState,
        subqueries: &HashMap<usize, Scalar>,
    ) -> Result<Vec<Chunk>> {
        let host = state.tables.get(&m.table).ok_or_else(|| TesseraError::Internal(format!("hash table h{} marked before it was built", m.table)))?;
        if host.rows == 0 {
            return Ok(Vec::new());
        }
        // The keys' values, with a NULL's slot made 0 (its row stays out of the table),
        // and where none of them is NULL.
        let eval = tessera_cpu::Evaluator::new();
        let mut valid: Option<arrow::buffer::NullBuffer> = None;
        let mut columns = Vec::new();
        for key in &marks.keys {
            let v = eval.eval(key, &host.payload, host.rows)?;
            valid = arrow::buffer::NullBuffer::union(valid.as_ref(), v.nulls());
            if let Some(nulls) = v.nulls().filter(|n| n.null_count() > 0) {
                let zero = ScalarValue::new_zero(v.data_type()).and_then(|z| z.to_array_of_size(1)).map_err(df_err)?;
                let mask = arrow::array::BooleanArray::new(nulls.inner().clone(), None);
                columns.push(arrow::compute::kernels::zip::zip(&mask, &v, &arrow::array::Scalar::new(zero)).map_err(arrow_err)?);
            } else {
                columns.push(v);
            }
        }
        for &c in &marks.read {
            columns.push(host.payload.get(c).cloned().ok_or_else(|| TesseraError::Internal(format!("hash table h{} lacks column {c}", m.table)))?);
        }
        if marks.keys_valid {
            let bits = valid.map_or_else(|| arrow::buffer::BooleanBuffer::new_set(host.rows), arrow::buffer::NullBuffer::into_inner);
            let valid = arrow::array::BooleanArray::new(bits, None);
            columns.push(arrow::compute::cast(&valid, &arrow::datatypes::DataType::Int32).map_err(arrow_err)?);
        }
        let keys = gpu::result_table(gpu::MarkTable::RESULT, &[Chunk::new(columns, host.rows)])?;
        rt.run(&marks.build, &keys, gstate, subqueries)?;
        let chunk = rt.run(k, table, gstate, subqueries)?.ok_or_else(|| TesseraError::Internal("a mark kernel returned no marks".into()))?;
        let marked = chunk
            .columns
            .first()
            .and_then(|c| c.as_any().downcast_ref::<arrow::array::UInt32Array>())
            .filter(|c| c.len() >= host.rows)
            .ok_or_else(|| TesseraError::Internal("a mark kernel's marks".into()))?;
        tessera_cpu::marked_rows(host, |r| marked.value(r) != 0, m.anti)
    }

    /// The chunks a CPU pipeline reads: a result, or a scan's batches less those the
    /// zone maps prove its leading filters reject (see [`zones`]).
    fn source(&self, source: &Source, operators: &[Operator], state: &CpuState, manifest: &mut Option<Arc<tessera_storage::Manifest>>) -> Result<Arc<Vec<Chunk>>> {
        match source {
            Source::Result { id, .. } => result(state, *id),
            Source::Scan(scan) => {
                let loaded = self.load_seen(scan, manifest)?;
                let columns = scan.columns.iter().map(|&c| loaded.column(c)).collect::<Result<Vec<_>>>()?;
                let skipped = zones::skipped_batches(&loaded, &scan.columns, operators);
                let chunks = loaded
                    .batch_rows()
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| !skipped[*i])
                    .map(|(i, &rows)| Chunk::new(columns.iter().map(|col| Arc::clone(&col[i])).collect(), rows))
                    .collect();
                Ok(Arc::new(chunks))
            }
        }
    }
}

/// Where queries may run (`SET tessera.device`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DevicePref {
    /// GPU where supported and the input is large enough.
    Auto,
    /// GPU wherever supported.
    Gpu,
    /// CPU only.
    Cpu,
}

impl DevicePref {
    /// Parses a setting value.
    pub fn parse(s: &str) -> Option<DevicePref> {
        match s.to_ascii_lowercase().as_str() {
            "auto" => Some(DevicePref::Auto),
            "gpu" => Some(DevicePref::Gpu),
            "cpu" => Some(DevicePref::Cpu),
            _ => None,
        }
    }
}

/// Which pipelines run on the GPU, with their bound form and kernel.
///
/// The maps placement fills are shared (`Arc`) between a cached placement and each run's
/// copy ([`Placement::for_run`]); only `state` is the run's own.
#[derive(Default, Debug)]
struct Placement {
    kernels: Arc<HashMap<usize, Arc<GpuPipeline>>>,
    /// Sort pipelines run on the GPU with the aggregation whose result they sort: sort
    /// pipeline → aggregation pipeline.
    fused_sorts: Arc<HashMap<usize, usize>>,
    /// Pipelines whose leading filter (a HAVING) the GPU applies, in part or whole, to the
    /// groups of the aggregation they read: reading pipeline → aggregation pipeline.
    fused_havings: Arc<HashMap<usize, usize>>,
    /// Why the other pipelines run on the CPU (all the reasons of each).
    reasons: Arc<HashMap<usize, Vec<Unsupported>>>,
    /// Sort pipelines whose filter and projections run on the GPU, their rows sorted on
    /// the CPU after ([`gpu::split_sort`]).
    split_sorts: Arc<HashSet<usize>>,
    state: GpuQueryState,
}

impl Placement {
    /// A copy to run the query with: the same kernels, with the query state as placement
    /// left it (dictionaries, GPU sorts), before any run added tables or results.
    fn for_run(&self) -> Placement {
        Placement {
            kernels: Arc::clone(&self.kernels),
            fused_sorts: Arc::clone(&self.fused_sorts),
            fused_havings: Arc::clone(&self.fused_havings),
            reasons: Arc::clone(&self.reasons),
            split_sorts: Arc::clone(&self.split_sorts),
            state: self.state.planned_copy(),
        }
    }
}

/// Table `scan.table` in `manifest`, at the version the plan was made for (else a stale
/// plan: dropped, or written since).
fn planned_meta<'m>(manifest: &'m tessera_storage::Manifest, scan: &tessera_ir::Scan) -> Result<&'m tessera_storage::TableMeta> {
    let table = &scan.table;
    let meta = manifest.table(table).ok_or_else(|| TesseraError::StalePlan(format!("table '{table}' was dropped")))?;
    if meta.version != scan.version {
        return Err(TesseraError::StalePlan(format!("table '{table}' is at version {}, planned at {}", meta.version, scan.version)));
    }
    Ok(meta)
}

/// The pipeline whose sink marks the rows of table `table` ([`tessera_ir::MarkBuild`]).
fn marker(plan: &QueryPlan, table: HashTableId) -> Option<&Pipeline> {
    plan.pipelines().find(|q| matches!(&q.sink, Sink::MarkBuild(m) if m.table == table))
}

/// The estimated rows of intermediate result `r`, for placing the pipelines reading it
/// (see [`Engine::placement`]): an aggregation's expected groups (one without GROUP BY:
/// one), a LIMIT's rows, the rows a mark sink keeps at most (its build's estimate), and
/// otherwise as many as the producing pipeline reads (inner joins may add more). A
/// DataFusion step's result is taken to have as many rows as its largest input; one
/// made of nothing the plan knows is not estimated (`u64::MAX`).
fn result_rows(plan: &QueryPlan, r: usize) -> u64 {
    result_rows_within(plan, r, plan.steps.len())
}

/// [`result_rows`], following at most `depth` producers back (a plan's results form no
/// cycle; the bound only keeps a malformed plan from recursing without end).
fn result_rows_within(plan: &QueryPlan, r: usize, depth: usize) -> u64 {
    let Some(producer) = plan.pipelines().find(|q| q.sink.result() == Some(r)) else {
        let external = plan.steps.iter().find_map(|s| match s {
            Step::External(e) if e.result == r => Some(e),
            _ => None,
        });
        return match external {
            Some(e) if depth > 0 => e.inputs.iter().map(|&i| result_rows_within(plan, i, depth - 1)).max().unwrap_or(u64::MAX),
            _ => u64::MAX,
        };
    };
    let input = || match &producer.source {
        Source::Scan(scan) => scan.rows,
        Source::Result { id, .. } if depth > 0 => result_rows_within(plan, *id, depth - 1),
        Source::Result { .. } => u64::MAX,
    };
    let limited = |skip: usize, fetch: Option<usize>| fetch.map_or_else(input, |f| (f.saturating_add(skip) as u64).min(input()));
    match &producer.sink {
        Sink::Aggregate(a) => match a.reduced.as_ref().map_or(&a.strategy, |x| &x.strategy) {
            tessera_ir::GroupStrategy::Scalar => 1,
            tessera_ir::GroupStrategy::Hash { estimated_groups, .. } => (*estimated_groups).min(input()),
            tessera_ir::GroupStrategy::Perfect { .. } => input(),
        },
        Sink::Sort(sort) => limited(sort.skip, sort.fetch),
        Sink::Materialize { skip, fetch, .. } => limited(*skip, *fetch),
        Sink::MarkBuild(m) => match builder_of(plan, m.table).map(|b| &b.sink) {
            Some(Sink::HashBuild(h)) => h.estimated_rows,
            _ => input(),
        },
        Sink::HashBuild(_) => u64::MAX,
    }
}

/// The pipeline that builds table `table`.
fn builder_of(plan: &QueryPlan, table: HashTableId) -> Option<&Pipeline> {
    plan.pipelines().find(|q| matches!(&q.sink, Sink::HashBuild(b) if b.table == table))
}

/// The HAVING the GPU can apply to the groups of `agg` (see [`gpu::GpuHaving`]): the
/// terms of the leading filter of the one pipeline that reads its result, when nothing
/// else reads it (a group dropped there must be dropped for every reader).
fn gpu_having(plan: &QueryPlan, agg: &Pipeline) -> Option<gpu::GpuHaving> {
    let Sink::Aggregate(a) = &agg.sink else { return None };
    let r = a.result;
    if plan.output == r {
        return None;
    }
    let mut readers = plan.pipelines().filter(|q| matches!(&q.source, Source::Result { id, .. } if *id == r));
    let reader = readers.next()?;
    let elsewhere = readers.next().is_some() || read_outside_pipelines(plan, r);
    if elsewhere {
        return None;
    }
    gpu::plan_having(reader, agg).ok()
}

/// Whether result `r` is read other than as a pipeline's source: as a scalar subquery's
/// value or as a DataFusion step's input (both on the host).
fn read_outside_pipelines(plan: &QueryPlan, r: usize) -> bool {
    plan.pipelines().any(|q| q.subqueries().contains(&r)) || plan.steps.iter().any(|s| matches!(s, Step::External(e) if e.inputs.contains(&r)))
}

/// Marks the results of GPU aggregations that pipelines read on the GPU (planned over
/// them, see `gpu::result_layout`) to be kept there, and whether the host needs them
/// too: the query's output, a CPU pipeline's input, a scalar subquery's value, a
/// DataFusion step's input.
fn keep_results_on_gpu(plan: &QueryPlan, p: &mut Placement) {
    let reads_kept = |q: &Pipeline| p.kernels.get(&q.id).is_some_and(|k| k.reads_kept);
    let mut kept = HashMap::new();
    for q in plan.pipelines().filter(|q| reads_kept(q)) {
        let Source::Result { id: r, .. } = &q.source else { continue };
        let r = *r;
        let host_too = plan.output == r
            || plan.pipelines().any(|o| matches!(&o.source, Source::Result { id, .. } if *id == r) && !reads_kept(o))
            || read_outside_pipelines(plan, r);
        kept.insert(r, host_too);
    }
    p.state.kept = Arc::new(kept);
}

/// The GPU's part of sort pipeline `pipe` ([`gpu::split_sort`]) when it reads an
/// intermediate result, unless the GPU ranks the groups of the aggregation it reads
/// whole ([`plan_gpu_sorts`]). A sort over a table scan stays on the CPU: with a LIMIT
/// the CPU keeps only its top rows while it scans, where the GPU would send every row
/// that passes the filter across PCIe, and which is cheaper depends on how many pass,
/// which nothing here estimates (the split is measured on results only: TPC-H q11).
fn split_sort_of(plan: &QueryPlan, pipe: &Pipeline, p: &Placement) -> Option<Pipeline> {
    if matches!(pipe.source, Source::Scan(_)) || fused_sort(plan, pipe, p).is_some_and(|(_, sort)| sort.is_ok()) {
        return None;
    }
    gpu::split_sort(pipe)
}

/// For sort pipeline `q` reading the result of an aggregation placed on the GPU: that
/// aggregation's pipeline, and the sort run with it there ([`gpu::plan_sort`]) or why
/// it cannot be.
fn fused_sort(plan: &QueryPlan, q: &Pipeline, p: &Placement) -> Option<(usize, std::result::Result<gpu::GpuSort, Reason>)> {
    let (Source::Result { id, .. }, Sink::Sort(_)) = (&q.source, &q.sink) else { return None };
    let agg = plan.pipelines().find(|a| matches!(&a.sink, Sink::Aggregate(ag) if ag.result == *id))?;
    let (Some(placed), Sink::Aggregate(a)) = (p.kernels.get(&agg.id), &agg.sink) else { return None };
    Some((agg.id, gpu::plan_sort(q, a, &placed.kernel)))
}

/// Sorts of a GPU aggregation's groups run on the GPU with it, before the groups are
/// downloaded ([`gpu::GpuSort`]); the reason goes to EXPLAIN where one cannot.
fn plan_gpu_sorts(plan: &QueryPlan, p: &mut Placement) {
    for q in plan.pipelines().filter(|q| !p.split_sorts.contains(&q.id)) {
        match fused_sort(plan, q, p) {
            Some((agg, Ok(sort))) => {
                Arc::make_mut(&mut p.state.sorts).insert(agg, sort);
                Arc::make_mut(&mut p.fused_sorts).insert(q.id, agg);
            }
            Some((_, Err(reason))) => {
                Arc::make_mut(&mut p.reasons).insert(q.id, vec![Unsupported::new(Site::Placement, reason)]);
            }
            None => {}
        }
    }
}

/// The value of each scalar subquery `p` reads, by the result holding it: the one value
/// of the result, NULL when it has no row; more than one row is an error (as in
/// DataFusion and PostgreSQL).
fn subquery_values(p: &Pipeline, state: &CpuState) -> Result<HashMap<usize, Scalar>> {
    let mut values = HashMap::new();
    for rid in p.subqueries() {
        let chunks = result(state, rid)?;
        let rows: usize = chunks.iter().map(|c| c.rows).sum();
        let value = match rows {
            0 => Scalar::Null,
            1 => {
                let chunk = chunks.iter().find(|c| c.rows == 1).ok_or_else(|| TesseraError::Internal("subquery row".into()))?;
                let column = chunk.columns.first().ok_or_else(|| TesseraError::Internal("subquery without a column".into()))?;
                let v = ScalarValue::try_from_array(column, 0).map_err(df_err)?;
                tessera_plan::ir_scalar(&v).map_err(TesseraError::Internal)?.0
            }
            _ => return Err(TesseraError::Execution("Scalar subquery returned more than one row".into())),
        };
        values.insert(rid, value);
    }
    Ok(values)
}

/// `p` with each scalar subquery's value (`values`) in place of the subquery.
fn bind_subqueries(p: &Pipeline, values: &HashMap<usize, Scalar>) -> Pipeline {
    let mut bound = p.clone();
    bound.bind_subqueries(&|rid, ty| Expr::Literal { value: values.get(&rid).cloned().unwrap_or(Scalar::Null), ty });
    bound
}

fn result(state: &CpuState, id: usize) -> Result<Arc<Vec<Chunk>>> {
    state.results.get(&id).cloned().ok_or_else(|| TesseraError::Internal(format!("result r{id} used before it was computed")))
}

/// Chunks as record batches of `schema`, casting (dictionaries to strings, widths) to
/// its types.
pub fn to_batches(chunks: &[Chunk], schema: &SchemaRef) -> Result<Vec<RecordBatch>> {
    chunks
        .iter()
        .map(|c| {
            if c.columns.len() != schema.fields().len() {
                return Err(TesseraError::Internal(format!(
                    "result has {} columns, expected {}",
                    c.columns.len(),
                    schema.fields().len()
                )));
            }
            let columns: Vec<ArrayRef> = c
                .columns
                .iter()
                .zip(schema.fields())
                .map(|(a, f)| {
                    if a.data_type() == f.data_type() {
                        tessera_common::trace::mark("batch column kept");
                        return Ok(Arc::clone(a));
                    }
                    let cast = arrow::compute::cast_with_options(a, f.data_type(), &STRICT).map_err(arrow_err);
                    tessera_common::trace::mark("batch column cast");
                    cast
                })
                .collect::<Result<_>>()?;
            let options = RecordBatchOptions::new().with_row_count(Some(c.rows));
            RecordBatch::try_new_with_options(Arc::clone(schema), columns.clone(), &options).or_else(|_| {
                // DataFusion's nullability is an estimate; keep the rows under a schema
                // that allows NULLs rather than fail.
                let relaxed = Arc::new(arrow::datatypes::Schema::new(
                    schema.fields().iter().map(|f| f.as_ref().clone().with_nullable(true)).collect::<Vec<_>>(),
                ));
                RecordBatch::try_new_with_options(relaxed, columns, &options).map_err(arrow_err)
            })
        })
        .collect()
}

fn df_err(e: datafusion::error::DataFusionError) -> TesseraError {
    TesseraError::External(Box::new(e))
}

/// Whether `pipe` probes a table built from a scan of at least [`gpu::GPU_MIN_ROWS`] rows
/// (or `TESSERA_EXP_GPU_MIN_ROWS`). Such a pipeline runs on the GPU however small its
/// own input (the placement's minimum is for pipelines alone): on the CPU it would pull
/// the large build there too, since a table built on the GPU is probed only there
/// (TPC-H q20's 100 K suppliers probing the membership table of 8 M partsupp rows).
fn probes_large_build(plan: &QueryPlan, pipe: &Pipeline) -> bool {
    let probed: Vec<HashTableId> = pipe
        .operators
        .iter()
        .filter_map(|o| match o {
            Operator::Probe(p) => Some(p.table),
            _ => None,
        })
        .collect();
    plan.pipelines().any(|b| match (&b.sink, &b.source) {
        (Sink::HashBuild(h), Source::Scan(scan)) => probed.contains(&h.table) && scan.rows >= ExecExperiments::get().gpu_min_rows,
        _ => false,
    })
}
