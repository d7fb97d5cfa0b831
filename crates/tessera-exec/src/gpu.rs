//! Running pipelines on the GPU: placement, binding, the GPU column cache, launches and
//! turning a kernel's outputs back into Arrow.
//!
//! Placement (for now, before the cost model): a pipeline runs on the GPU when a GPU is
//! present, the code generator supports it, every hash table it probes was built on the
//! GPU, and — under `tessera.device = 'auto'` — its source has at least
//! [`GPU_MIN_ROWS`] rows. A build pipeline stays on the GPU only if every pipeline that
//! probes its table does too. Everything else runs on the CPU backend, with the reason.
//!
//! Binding: string predicates over a dictionary-encoded column are evaluated once over
//! the dictionary (by the CPU evaluator) and become a test on codes, which is all the
//! GPU sees of strings.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use arrow::array::{Array, ArrayRef, AsArray, Decimal128Array, DictionaryArray, Float64Array, Int32Array, Int64Array};
use arrow::datatypes::{DataType, Int32Type};
use tessera_common::{Result, TesseraError};
use tessera_cpu::{Chunk, Evaluator, arrow_err, cast_to};
use tessera_cuda::codegen::{self, Accumulator, DictRef, GpuColumn, GpuTable, Kernel, SinkLayout, Width};
use tessera_cuda::cudarc::driver::{DevicePtr, LaunchConfig, PushKernelArg};
use tessera_cuda::{DeviceBuffer, GpuDevice, KernelCache};
use tessera_ir::{AggFunc, Expr, HashTableId, Operator, Pipeline, Scalar, Sink, Source, Type};
use tessera_storage::LoadedTable;

/// Under `tessera.device = 'auto'`, smaller inputs stay on the CPU: below about a
/// million rows a GPU launch, its upload and (first time) its compile cost more than a
/// CPU core needs for the whole pipeline.
pub const GPU_MIN_ROWS: u64 = 1 << 20;

/// A column uploaded to the GPU.
pub enum GpuBuf {
    /// 32-bit values.
    I32(DeviceBuffer<i32>),
    /// 64-bit values.
    I64(DeviceBuffer<i64>),
}

impl GpuBuf {
    fn ptr(&self, device: &GpuDevice) -> u64 {
        let stream = device.stream();
        match self {
            GpuBuf::I32(b) => b.as_slice().device_ptr(stream).0,
            GpuBuf::I64(b) => b.as_slice().device_ptr(stream).0,
        }
    }

    fn bytes(&self) -> usize {
        match self {
            GpuBuf::I32(b) => b.num_bytes(),
            GpuBuf::I64(b) => b.num_bytes(),
        }
    }
}

/// One pipeline's GPU run, for reports.
#[derive(Debug, Clone)]
pub struct GpuRun {
    /// Pipeline id.
    pub pipeline: usize,
    /// Kernel time (launch to completion, synchronized), ms.
    pub kernel_ms: f64,
    /// Bytes of source columns the kernel reads at most (the bandwidth model's input).
    pub bytes: u64,
    /// Rows in.
    pub rows: u64,
}

/// The GPU side of the executor: device, kernel cache and column cache.
pub struct GpuRuntime {
    device: Arc<GpuDevice>,
    kernels: KernelCache,
    columns: Mutex<HashMap<(String, u64, usize), Arc<GpuBuf>>>,
    /// Runs of the last query.
    pub last_runs: Mutex<Vec<GpuRun>>,
    bandwidth: std::sync::OnceLock<Option<f64>>,
}

impl std::fmt::Debug for GpuRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuRuntime").field("device", &self.device.name()).finish()
    }
}

/// A hash table built on the GPU.
pub struct GpuHashTable {
    shape: GpuTable,
    rows: DeviceBuffer<i32>,
    payload: Vec<GpuBuf>,
}

/// Per query: tables built on the GPU and dictionaries by id.
#[derive(Default)]
pub struct GpuQueryState {
    tables: HashMap<HashTableId, GpuHashTable>,
    dictionaries: Vec<ArrayRef>,
}

/// Why a GPU run must be redone on the CPU (a flagged overflow, duplicate build keys):
/// the CPU backend then reports the precise error or handles the case.
pub const RETRY_ON_CPU: &str = "retry on the CPU";

impl GpuRuntime {
    /// The GPU runtime, or None on a machine without a GPU (or NVRTC).
    pub fn open(kernel_dir: Option<std::path::PathBuf>) -> Option<GpuRuntime> {
        if !tessera_cuda::nvrtc_available() {
            return None;
        }
        let device = GpuDevice::get().ok().flatten()?;
        Some(GpuRuntime {
            device,
            kernels: KernelCache::new(kernel_dir),
            columns: Mutex::new(HashMap::new()),
            last_runs: Mutex::new(Vec::new()),
            bandwidth: std::sync::OnceLock::new(),
        })
    }

    /// The device.
    pub fn device(&self) -> &Arc<GpuDevice> {
        &self.device
    }

    /// Device-memory read bandwidth in GB/s, measured once per process by a kernel that
    /// sums 1 GiB of int64 (median of 5 runs): the peak the bandwidth model divides by.
    pub fn bandwidth_gbs(&self) -> Option<f64> {
        *self.bandwidth.get_or_init(|| self.measure_bandwidth().ok())
    }

    fn measure_bandwidth(&self) -> Result<f64> {
        const SRC: &str = r#"#include "tessera.cuh"
extern "C" __global__ void tessera_read(const long long* __restrict__ a, long long n, unsigned long long* out) {
    long long s = 0;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) s += a[i];
    if (s == 42) atomicAdd(out, 1ull);
}
"#;
        let n: usize = 1 << 27;
        let dev = &self.device;
        let buf = dev.memory().alloc::<i64>(n)?;
        let out = dev.memory().alloc::<u64>(1)?;
        let module = self.kernels.load(dev, SRC)?;
        let f = module.load_function("tessera_read").map_err(|e| TesseraError::Internal(format!("{e:?}")))?;
        let blocks = dev.sm_count() * 8;
        let cfg = LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
        let mut times = Vec::new();
        let len = n as i64;
        for _ in 0..6 {
            dev.synchronize()?;
            let t = Instant::now();
            let stream = dev.stream();
            let mut l = stream.launch_builder(&f);
            l.arg(buf.as_slice()).arg(&len).arg(out.as_slice());
            unsafe { l.launch(cfg) }.map_err(|e| TesseraError::Internal(format!("{e:?}")))?;
            dev.synchronize()?;
            times.push(t.elapsed().as_secs_f64());
        }
        times.remove(0);
        times.sort_by(|a, b| a.total_cmp(b));
        Ok((n * 8) as f64 / times[times.len() / 2] / 1e9)
    }

    /// Generates the kernel for `p` if it can run on the GPU (see [`plan_kernel`]).
    pub fn plan(&self, p: &Pipeline, table: Option<&LoadedTable>, state: &mut GpuQueryState, gpu_tables: &HashMap<HashTableId, GpuTable>) -> std::result::Result<(Pipeline, Vec<GpuColumn>, Kernel), String> {
        plan_kernel(p, table, state, gpu_tables)
    }

    fn column(&self, table: &LoadedTable, c: usize, width: Width) -> Result<Arc<GpuBuf>> {
        let key = (table.name.clone(), table.version, c);
        if let Some(b) = self.columns.lock().ok().and_then(|m| m.get(&key).cloned()) {
            return Ok(b);
        }
        let buf = match width {
            Width::I32 => {
                let mut v: Vec<i32> = Vec::with_capacity(table.rows);
                for b in &table.batches {
                    let a = b.column(c);
                    match a.data_type() {
                        DataType::Dictionary(..) => v.extend(a.as_dictionary::<Int32Type>().keys().values().iter()),
                        DataType::Date32 => v.extend(a.as_primitive::<arrow::datatypes::Date32Type>().values().iter()),
                        _ => {
                            let x = arrow::compute::cast(a, &DataType::Int32).map_err(arrow_err)?;
                            v.extend(x.as_primitive::<Int32Type>().values().iter());
                        }
                    }
                }
                GpuBuf::I32(self.device.upload(&v)?)
            }
            Width::I64 => {
                let mut v: Vec<i64> = Vec::with_capacity(table.rows);
                for b in &table.batches {
                    let a = b.column(c);
                    match a.data_type() {
                        DataType::Decimal128(..) => {
                            v.extend(a.as_primitive::<arrow::datatypes::Decimal128Type>().values().iter().map(|&x| x as i64))
                        }
                        _ => {
                            let x = arrow::compute::cast(a, &DataType::Int64).map_err(arrow_err)?;
                            v.extend(x.as_primitive::<arrow::datatypes::Int64Type>().values().iter());
                        }
                    }
                }
                GpuBuf::I64(self.device.upload(&v)?)
            }
        };
        let buf = Arc::new(buf);
        if let Ok(mut m) = self.columns.lock() {
            m.insert(key, Arc::clone(&buf));
        }
        Ok(buf)
    }

    /// Runs a planned GPU pipeline. Aggregations return their result chunk; builds
    /// leave their table in `state`.
    pub fn run(&self, p: &Pipeline, cols: &[GpuColumn], kernel: &Kernel, table: &LoadedTable, state: &mut GpuQueryState) -> Result<Option<Chunk>> {
        let Source::Scan(scan) = &p.source else { return Err(TesseraError::Internal("GPU pipeline without a scan".into())) };
        let dev = &self.device;
        let mut col_bufs = Vec::new();
        for (&c, gc) in scan.columns.iter().zip(cols) {
            col_bufs.push(self.column(table, c, gc.width)?);
        }
        let col_ptrs: Vec<u64> = col_bufs.iter().map(|b| b.ptr(dev)).collect();
        let mut tab_ptrs: Vec<u64> = Vec::new();
        for op in &p.operators {
            if let Operator::Probe(pr) = op {
                let t = state.tables.get(&pr.table).ok_or_else(|| TesseraError::Internal("GPU table missing".into()))?;
                tab_ptrs.push(t.rows.as_slice().device_ptr(dev.stream()).0);
                tab_ptrs.extend(t.payload.iter().map(|b| b.ptr(dev)));
            }
        }
        // Sink outputs.
        let mut out_bufs: Vec<GpuBuf> = Vec::new();
        let mut build_rows: Option<DeviceBuffer<i32>> = None;
        let mut u64_outs: Vec<DeviceBuffer<u64>> = Vec::new();
        let mut i64_outs: Vec<DeviceBuffer<i64>> = Vec::new();
        let mut seen: Option<DeviceBuffer<u32>> = None;
        let mut out_ptrs: Vec<u64> = Vec::new();
        match &kernel.sink {
            SinkLayout::Build { table: shape } => {
                let rows = dev.memory().alloc::<i32>(shape.slots)?;
                out_ptrs.push(rows.as_slice().device_ptr(dev.stream()).0);
                build_rows = Some(rows);
                for pc in &shape.payload {
                    let b = match pc.width {
                        Width::I32 => GpuBuf::I32(dev.memory().alloc::<i32>(shape.slots)?),
                        Width::I64 => GpuBuf::I64(dev.memory().alloc::<i64>(shape.slots)?),
                    };
                    out_ptrs.push(b.ptr(dev));
                    out_bufs.push(b);
                }
            }
            SinkLayout::Aggregate { groups, accumulators, .. } => {
                for acc in accumulators {
                    match acc {
                        Accumulator::Sum => u64_outs.push(dev.memory().alloc::<u64>(2 * groups)?),
                        Accumulator::Count => u64_outs.push(dev.memory().alloc::<u64>(*groups)?),
                        Accumulator::SumCount => {
                            u64_outs.push(dev.memory().alloc::<u64>(2 * groups)?);
                            u64_outs.push(dev.memory().alloc::<u64>(*groups)?);
                        }
                        Accumulator::Min => i64_outs.push(dev.upload(&vec![i64::MAX; *groups])?),
                        Accumulator::Max => i64_outs.push(dev.upload(&vec![i64::MIN; *groups])?),
                    }
                }
                // Pointers in accumulator order.
                let (mut ui, mut ii) = (0, 0);
                for acc in accumulators {
                    match acc {
                        Accumulator::Sum | Accumulator::Count => {
                            out_ptrs.push(u64_outs[ui].as_slice().device_ptr(dev.stream()).0);
                            ui += 1;
                        }
                        Accumulator::SumCount => {
                            out_ptrs.push(u64_outs[ui].as_slice().device_ptr(dev.stream()).0);
                            out_ptrs.push(u64_outs[ui + 1].as_slice().device_ptr(dev.stream()).0);
                            ui += 2;
                        }
                        Accumulator::Min | Accumulator::Max => {
                            out_ptrs.push(i64_outs[ii].as_slice().device_ptr(dev.stream()).0);
                            ii += 1;
                        }
                    }
                }
                let s = dev.memory().alloc::<u32>(*groups)?;
                out_ptrs.push(s.as_slice().device_ptr(dev.stream()).0);
                seen = Some(s);
            }
        }
        let flags = dev.memory().alloc::<u64>(4)?;
        let pad = |v: &mut Vec<u64>| {
            if v.is_empty() {
                v.push(0);
            }
        };
        let (mut col_ptrs, mut tab_ptrs, mut out_ptrs) = (col_ptrs, tab_ptrs, out_ptrs);
        pad(&mut col_ptrs);
        pad(&mut tab_ptrs);
        pad(&mut out_ptrs);
        let d_cols = dev.upload(&col_ptrs)?;
        let d_tabs = dev.upload(&tab_ptrs)?;
        let d_outs = dev.upload(&out_ptrs)?;
        let module = self.kernels.load(dev, &kernel.source)?;
        let function = module
            .load_function(codegen::KERNEL_NAME)
            .map_err(|e| TesseraError::Internal(format!("loading kernel: {e:?}")))?;
        let rows = table.rows as i64;
        let tiles = (table.rows as u64).div_ceil(codegen::TILE_ITEMS as u64).max(1);
        let cfg = LaunchConfig { grid_dim: (tiles as u32, 1, 1), block_dim: (codegen::BLOCK_THREADS, 1, 1), shared_mem_bytes: 0 };
        dev.synchronize()?;
        let start = Instant::now();
        if table.rows > 0 {
            let stream = dev.stream();
            let mut launch = stream.launch_builder(&function);
            launch.arg(d_cols.as_slice()).arg(&rows).arg(d_tabs.as_slice()).arg(d_outs.as_slice()).arg(flags.as_slice());
            unsafe { launch.launch(cfg) }.map_err(|e| TesseraError::Internal(format!("kernel launch: {e:?}")))?;
        }
        dev.synchronize()?;
        let kernel_ms = start.elapsed().as_secs_f64() * 1e3;
        let bytes: u64 = col_bufs.iter().map(|b| b.bytes() as u64).sum();
        if let Ok(mut r) = self.last_runs.lock() {
            r.push(GpuRun { pipeline: p.id, kernel_ms, bytes, rows: table.rows as u64 });
        }
        let f = dev.download(flags.as_slice())?;
        if f.iter().any(|&x| x != 0) {
            return Err(TesseraError::Execution(RETRY_ON_CPU.into()));
        }
        match (&kernel.sink, &p.sink) {
            (SinkLayout::Build { table: shape }, Sink::HashBuild(b)) => {
                let rows = build_rows.ok_or_else(|| TesseraError::Internal("build rows".into()))?;
                state.tables.insert(b.table, GpuHashTable { shape: shape.clone(), rows, payload: out_bufs });
                Ok(None)
            }
            (SinkLayout::Aggregate { groups, accumulators, keys }, Sink::Aggregate(a)) => {
                let seen = dev.download(seen.as_ref().ok_or_else(|| TesseraError::Internal("seen".into()))?.as_slice())?;
                let scalar = keys.is_empty();
                let order: Vec<usize> = if scalar { vec![0] } else { (0..*groups).filter(|&g| seen[g] != 0).collect() };
                let mut columns: Vec<ArrayRef> = Vec::new();
                let mut stride = 1usize;
                for (i, k) in keys.iter().enumerate() {
                    let slot = |g: usize| (g / stride) % k.slots;
                    let col: ArrayRef = match k.dictionary {
                        Some(d) => {
                            let codes: Int32Array = order.iter().map(|&g| (slot(g) > 0).then(|| slot(g) as i32 - 1)).collect();
                            let values = state.dictionaries.get(d.id).cloned().ok_or_else(|| TesseraError::Internal("dictionary id".into()))?;
                            Arc::new(DictionaryArray::<Int32Type>::try_new(codes, values).map_err(arrow_err)?)
                        }
                        None => {
                            let v: Int64Array = order.iter().map(|&g| (slot(g) > 0).then(|| k.min + slot(g) as i64 - 1)).collect();
                            cast_to(&(Arc::new(v) as ArrayRef), a.fields[i].ty)?
                        }
                    };
                    columns.push(col);
                    stride *= k.slots;
                }
                let any = seen.first().copied().unwrap_or(0) != 0;
                let (mut ui, mut ii) = (0, 0);
                for (j, acc) in accumulators.iter().enumerate() {
                    let ty = a.fields[keys.len() + j].ty;
                    let spec = &a.aggregates[j];
                    let col: ArrayRef = match acc {
                        Accumulator::Count => {
                            let c = dev.download(u64_outs[ui].as_slice())?;
                            ui += 1;
                            cast_to(&(Arc::new(Int64Array::from_iter_values(order.iter().map(|&g| c[g] as i64))) as ArrayRef), ty)?
                        }
                        Accumulator::Sum | Accumulator::SumCount => {
                            let s = dev.download(u64_outs[ui].as_slice())?;
                            let sums: Vec<i128> = order.iter().map(|&g| ((s[2 * g + 1] as i128) << 64) | s[2 * g] as i128).collect();
                            let counts = if *acc == Accumulator::SumCount {
                                let c = dev.download(u64_outs[ui + 1].as_slice())?;
                                ui += 2;
                                Some(order.iter().map(|&g| c[g] as i64).collect::<Vec<_>>())
                            } else {
                                ui += 1;
                                None
                            };
                            let present: Vec<bool> = order.iter().map(|&g| if scalar { any } else { seen[g] != 0 }).collect();
                            finish_sum(&sums, counts.as_deref(), &present, spec.func, spec.arg.as_ref().map(|e| e.ty(&p.sink_input_fields())), ty)?
                        }
                        Accumulator::Min | Accumulator::Max => {
                            let m = dev.download(i64_outs[ii].as_slice())?;
                            ii += 1;
                            let v: Int64Array = order.iter().map(|&g| (if scalar { any } else { true }).then_some(m[g])).collect();
                            let arg_ty = spec.arg.as_ref().map(|e| e.ty(&p.sink_input_fields())).unwrap_or(ty);
                            int_as(&v, arg_ty, ty)?
                        }
                    };
                    columns.push(col);
                }
                let rows = order.len();
                Ok(Some(Chunk::new(columns, rows)))
            }
            _ => Err(TesseraError::Internal("kernel and sink disagree".into())),
        }
    }

    /// The shape of a table built on the GPU.
    pub fn table_shape(state: &GpuQueryState, id: HashTableId) -> Option<GpuTable> {
        state.tables.get(&id).map(|t| t.shape.clone())
    }
}

/// An i64 column holding values of `arg_ty` (decimal: unscaled) as the type `ty`.
fn int_as(v: &Int64Array, arg_ty: Type, ty: Type) -> Result<ArrayRef> {
    match arg_ty {
        Type::Decimal { precision, scale } => {
            let d = Decimal128Array::from_iter(v.iter().map(|x| x.map(|x| x as i128)))
                .with_precision_and_scale(precision, scale)
                .map_err(arrow_err)?;
            cast_to(&(Arc::new(d) as ArrayRef), ty)
        }
        Type::Date32 => {
            let d = arrow::array::Date32Array::from_iter(v.iter().map(|x| x.map(|x| x as i32)));
            cast_to(&(Arc::new(d) as ArrayRef), ty)
        }
        _ => cast_to(&(Arc::new(v.clone()) as ArrayRef), ty),
    }
}

/// SUM/AVG results from exact 128-bit sums, as the CPU backend computes them.
fn finish_sum(sums: &[i128], counts: Option<&[i64]>, present: &[bool], func: AggFunc, arg_ty: Option<Type>, ty: Type) -> Result<ArrayRef> {
    let in_scale = match arg_ty {
        Some(Type::Decimal { scale, .. }) => scale,
        _ => 0,
    };
    let overflow = || TesseraError::Execution("arithmetic overflow in SUM".into());
    match (func, ty) {
        (AggFunc::Avg, Type::Decimal { precision, scale }) => {
            let counts = counts.ok_or_else(|| TesseraError::Internal("AVG without counts".into()))?;
            let mul = 10i128.checked_pow((scale - in_scale).max(0) as u32).ok_or_else(overflow)?;
            let mut vals = Vec::new();
            for i in 0..sums.len() {
                vals.push(if present[i] && counts[i] > 0 { Some(sums[i].checked_mul(mul).ok_or_else(overflow)? / counts[i] as i128) } else { None });
            }
            let a = Decimal128Array::from(vals).with_precision_and_scale(precision, scale).map_err(arrow_err)?;
            a.validate_decimal_precision(precision).map_err(|e| TesseraError::Execution(format!("arithmetic overflow in AVG: {e}")))?;
            Ok(Arc::new(a))
        }
        (AggFunc::Avg, _) => {
            let counts = counts.ok_or_else(|| TesseraError::Internal("AVG without counts".into()))?;
            let v: Float64Array = (0..sums.len())
                .map(|i| (present[i] && counts[i] > 0).then(|| sums[i] as f64 / counts[i] as f64 / 10f64.powi(in_scale as i32)))
                .collect();
            cast_to(&(Arc::new(v) as ArrayRef), ty)
        }
        (_, Type::Decimal { precision, scale }) => {
            let a = Decimal128Array::from_iter((0..sums.len()).map(|i| present[i].then_some(sums[i])))
                .with_precision_and_scale(precision, scale)
                .map_err(arrow_err)?;
            a.validate_decimal_precision(precision).map_err(|e| TesseraError::Execution(format!("arithmetic overflow: {e}")))?;
            Ok(Arc::new(a))
        }
        _ => {
            let mut v = Vec::new();
            for i in 0..sums.len() {
                v.push(if present[i] { Some(i64::try_from(sums[i]).map_err(|_| overflow())?) } else { None });
            }
            cast_to(&(Arc::new(Int64Array::from(v)) as ArrayRef), ty)
        }
    }
}

/// Rewrites predicates over one dictionary-encoded source column into tests on codes:
/// the predicate is evaluated once per dictionary entry.
fn bind(p: &Pipeline, table: &LoadedTable, columns: &[usize]) -> std::result::Result<Pipeline, String> {
    let mut out = p.clone();
    let eval = Evaluator::new();
    for op in out.operators.iter_mut() {
        match op {
            Operator::Filter(e) => *e = bind_expr(e, table, columns, &eval)?,
            // Only filters directly over the scan see the source layout.
            _ => break,
        }
    }
    Ok(out)
}

fn bind_expr(e: &Expr, table: &LoadedTable, columns: &[usize], eval: &Evaluator) -> std::result::Result<Expr, String> {
    let used = e.columns();
    if let [c] = used.as_slice() {
        let dict = columns.get(*c).and_then(|&tc| table.dictionaries.get(tc)).and_then(|d| d.clone());
        if let (Some(d), false) = (dict, matches!(e, Expr::Column { .. })) {
            let values: ArrayRef = d.values.clone();
            let n = values.len();
            let mut cols: Vec<ArrayRef> = (0..=*c).map(|_| arrow::array::new_null_array(&DataType::Null, n)).collect();
            cols[*c] = values;
            let r = eval.eval(e, &cols, n).map_err(|err| err.to_string())?;
            let Some(b) = r.as_boolean_opt() else { return Err("non-boolean expression over a dictionary".into()) };
            let codes: Vec<Scalar> = (0..n).filter(|&i| b.is_valid(i) && b.value(i)).map(|i| Scalar::Int(i as i64)).collect();
            return Ok(Expr::InList { expr: Box::new(Expr::col(*c, "codes")), list: codes, negated: false });
        }
    }
    Ok(match e {
        Expr::And(a, b) => Expr::And(Box::new(bind_expr(a, table, columns, eval)?), Box::new(bind_expr(b, table, columns, eval)?)),
        Expr::Or(a, b) => Expr::Or(Box::new(bind_expr(a, table, columns, eval)?), Box::new(bind_expr(b, table, columns, eval)?)),
        Expr::Not(a) => Expr::Not(Box::new(bind_expr(a, table, columns, eval)?)),
        other => other.clone(),
    })
}

/// Generates the kernel for `p` if it can run on the GPU: its bound form (dictionary
/// predicates as code tests), its source columns as the GPU holds them, and the kernel.
/// Needs no GPU (CI compiles these kernels with NVRTC alone). `gpu_tables` are the
/// shapes of tables built on the GPU so far.
pub fn plan_kernel(p: &Pipeline, table: Option<&LoadedTable>, state: &mut GpuQueryState, gpu_tables: &HashMap<HashTableId, GpuTable>) -> std::result::Result<(Pipeline, Vec<GpuColumn>, Kernel), String> {
        let Source::Scan(scan) = &p.source else { return Err("source is an intermediate result".into()) };
        let table = table.ok_or("table not loaded")?;
        let mut cols = Vec::new();
        let mut dict_values = Vec::new();
        for (&c, f) in scan.columns.iter().zip(&scan.fields) {
            let dict = table.dictionaries.get(c).and_then(|d| d.clone());
            let width = match (&dict, f.ty) {
                (Some(_), _) => Width::I32,
                (None, Type::Utf8) => return Err(format!("string column {} is not dictionary-encoded", f.name)),
                (None, t) => codegen::width_of(t).ok_or_else(|| format!("column {} of type {t}", f.name))?,
            };
            let dictionary = dict.map(|d| {
                let values: ArrayRef = d.values.clone();
                let id = state.dictionaries.len() + dict_values.len();
                dict_values.push(Arc::clone(&values));
                DictRef { size: values.len(), id }
            });
            cols.push(GpuColumn { width, dictionary });
        }
        let bound = bind(p, table, &scan.columns)?;
        let tables: Vec<GpuTable> = p
            .operators
            .iter()
            .filter_map(|o| match o {
                Operator::Probe(pr) => Some(gpu_tables.get(&pr.table).cloned().ok_or("probes a table built on the CPU")),
                _ => None,
            })
            .collect::<std::result::Result<_, _>>()?;
        let kernel = codegen::generate(&bound, &cols, &tables)?;
        state.dictionaries.extend(dict_values);
        Ok((bound, cols, kernel))
    }
