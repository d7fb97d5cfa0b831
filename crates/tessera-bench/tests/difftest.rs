//! GPU, CPU backend and plain DataFusion agree on random queries (see
//! `tessera_bench::difftest`). Without a GPU the first path is the CPU backend again; on
//! the device, `TESSERA_REQUIRE_GPU=1` makes a run with too little on the GPU fail.
//!
//! ```text
//! cargo test -p tessera-bench --test difftest -- --nocapture
//! DIFFTEST_SEED=123 cargo test -p tessera-bench --test difftest -- --nocapture   # another seed
//! ```

use tessera_bench::difftest;

#[test]
fn gpu_cpu_and_datafusion_agree_on_random_queries() {
    let seed = match std::env::var("DIFFTEST_SEED") {
        Ok(s) => s.trim().parse().unwrap_or_else(|e| panic!("DIFFTEST_SEED={s}: {e}")),
        Err(_) => difftest::DEFAULT_SEED,
    };
    let require_gpu = std::env::var("TESSERA_REQUIRE_GPU").is_ok_and(|v| v == "1");
    let dir = tempfile::tempdir().unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let report = runtime
        .block_on(difftest::run_all(dir.path(), seed, &mut |line| println!("{line}")))
        .unwrap_or_else(|e| panic!("difftest could not run: {e}"));
    // The suite exercises what it claims to: every template ran in every case.
    assert_eq!(report.queries, difftest::TEMPLATES * difftest::queries_per_template(), "{report:?}");
    let problems = report.problems(require_gpu);
    assert!(problems.is_empty(), "seed {seed}:\n\n{}", problems.join("\n\n"));
}
