//! candor's integration tests, one binary: a module per area (`it::cli`, `it::gate`, …),
//! so that linking happens once rather than once per file. A test's full name is its
//! module path (`cargo test --test it gate_replay::`). The helpers they share are here
//! once, under `support/`; the fixtures stay in `tests/fixtures` and `tests/data`, read
//! through `CARGO_MANIFEST_DIR`.

#[path = "support/corpus.rs"]
mod corpus_support;
#[path = "../../benches/support/history_gen.rs"]
mod history_gen;
#[path = "support/js.rs"]
mod js_support;
#[path = "support/pg.rs"]
mod pg_support;
#[path = "support/proptest.rs"]
mod proptest_support;
#[path = "support/runner.rs"]
mod runner_support;
#[path = "../../benches/support/simulate.rs"]
mod simulate;
#[path = "support/triage.rs"]
mod triage_support;

mod advice;
mod agents;
mod cli;
mod cli_ledger;
mod cli_triage;
mod compare;
mod compare_simulation;
mod corpus;
mod corpus_json;
mod corpus_junit;
mod demo;
mod dialects;
mod doctests;
mod doctests_nextest;
mod events_schema;
mod fidelity;
mod frames;
mod gate;
mod gate_batch;
mod gate_batch_rust_go;
mod gate_go_vanished;
mod gate_parts;
mod gate_replay;
mod gate_tamper;
mod gate_tamper_runners;
mod history;
mod history_migration;
mod ids;
mod ingest;
mod ingest_assumed;
mod isolation;
mod js_clock;
mod js_jest;
mod js_mocha;
mod js_node;
mod js_playwright;
mod js_vitest;
mod layering;
mod ledger;
mod mcp;
mod newcomer;
mod order;
mod paths;
mod pg;
mod pg_ci;
mod pg_migration;
mod policy_source;
mod pytest_probe_cache;
mod reliability;
mod report;
mod rerun;
mod runner_cargo;
mod runner_command;
mod runner_go;
mod runner_process;
mod runner_pytest;
mod test_command;
mod triage;
mod triage_runners;
mod verdict_history;
