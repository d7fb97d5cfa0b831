//! Both query suites at SF 1 through Tessera, every answer checked against the stored
//! answers (the same check `tessera bench` makes).

use tessera_bench::bench::{self, BenchOptions, Check, EngineKind};
use tessera_bench::Suite;

fn run_suite(suite: Suite, engines: Vec<EngineKind>) {
    let dir = tempfile::tempdir().unwrap();
    let opts = BenchOptions {
        suite,
        sf: 1.0,
        queries: Vec::new(),
        runs: 0,
        engines: engines.clone(),
        threads: 2,
        data_dir: dir.path().to_path_buf(),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let report = runtime.block_on(bench::run(&opts, &|_| {})).unwrap();
    assert_eq!(report.results.len(), suite.queries().len() * engines.len());
    let failures: Vec<String> = report
        .results
        .iter()
        .filter(|r| r.check != Check::Pass)
        .map(|r| format!("{}: {:?} {:?}", r.query, r.check, r.error))
        .collect();
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn ssb_sf1_answers_check() {
    // Also with the GPU left out in the same process (`tessera-cpu`).
    run_suite(Suite::Ssb, vec![EngineKind::Tessera, EngineKind::TesseraCpu]);
}

#[test]
fn tpch_sf1_answers_check() {
    run_suite(Suite::Tpch, vec![EngineKind::Tessera]);
}
