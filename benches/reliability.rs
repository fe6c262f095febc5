//! `cargo bench --bench reliability`: builds histories of 5,000 and 50,000 tests × 200 runs
//! in a real SQLite store (and, with `--pg URL`, the same histories in a PostgreSQL
//! database), then measures `candor reliability --write`, `candor tests --failing` and
//! `candor show TEST` (the release binary, as a child process) with their peak memory, and
//! prints a Markdown table. See docs/benchmarks.md.

#[path = "support/measure.rs"]
mod measure;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use candor::history::pg::Target;
use candor::history::{Conditions, HistoryStore, NewRun, PgStore, RunContent, Source, SqliteStore};
use candor::results::{Execution, Outcome};
use clap::Parser;
use jiff::Timestamp;

#[derive(Debug, Parser)]
#[command(about = "Measures `candor reliability --write` on large generated histories")]
struct Options {
    /// Test counts to measure, each with `--runs` runs.
    #[arg(long, value_delimiter = ',', default_values_t = [5_000u64, 50_000])]
    tests: Vec<u64>,
    /// Runs per history.
    #[arg(long, default_value_t = 200)]
    runs: u32,
    /// Generator seed (printed); the same seed gives the same history.
    #[arg(long, default_value_t = 0x7133_5EED)]
    seed: u64,
    /// Timed runs of the command per history; the table shows the median.
    #[arg(long, default_value_t = 3)]
    iterations: usize,
    /// Keep the histories in this directory instead of a temp dir.
    #[arg(long)]
    keep_in: Option<PathBuf>,
    /// Also build each history in this PostgreSQL database (a URL, as `.ci/pg-cluster
    /// start` prints), in a schema `bench_<tests>` of its own, and measure there. A
    /// history already complete there is reused (ingest is idempotent: an interrupted
    /// build resumes).
    #[arg(long, value_name = "URL")]
    pg: Option<String>,
    /// Passed by `cargo bench`; ignored.
    #[arg(long, hide = true)]
    bench: bool,
}

fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().collect();
    if args.get(1).and_then(|arg| arg.to_str()) == Some(measure::WRAPPER_ARG) {
        return measure::run_wrapper(&args[2..]);
    }
    let options = Options::parse();
    match run(&options) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

/// SplitMix64 (Steele, Lea & Flood, "Fast splittable pseudorandom number generators",
/// OOPSLA 2014): seeded, fast, and the same on every platform.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// True with probability `per_million` / 1,000,000.
    fn chance(&mut self, per_million: u64) -> bool {
        self.next() % 1_000_000 < per_million
    }
}

/// A mix of tests like a real suite's: most never fail, some fail now and then, a few are
/// badly flaky, so every tier and every transition is exercised.
fn failure_rate_per_million(test: u64) -> u64 {
    match test % 100 {
        0..=89 => 0,
        90..=96 => 10_000,
        _ => 150_000,
    }
}

/// The id of generated test `test`.
fn test_id(test: u64) -> String {
    format!(
        "tests/pkg_{:03}/test_module_{:02}.py::TestCase::test_{test:06}",
        test % 997,
        test % 31
    )
}

fn build_history(
    store: &mut dyn HistoryStore,
    tests: u64,
    runs: u32,
    seed: u64,
) -> Result<Duration, String> {
    let started = Instant::now();
    let mut rng = SplitMix64(seed);
    let ids: Vec<String> = (0..tests).map(test_id).collect();
    for run in 0..runs {
        let new_run = NewRun {
            commit: Some(format!("{:040x}", u64::from(run) * 0x9E37_79B9 + 1)),
            branch: Some("main".into()),
            merge_base: None,
            started_at: Timestamp::from_second(1_780_000_000 + i64::from(run) * 3_600)
                .map_err(|e| e.to_string())?,
            source: Source::Ci,
            ci_provider: Some("github-actions".into()),
            job: Some("test".into()),
            ci_run: candor::history::CiRun::default(),
            workers: Some(4),
            seed: None,
            conditions: Conditions {
                ci: true,
                runner: Some("pytest".into()),
                os: Some("linux".into()),
            },
            format: Some("junit".into()),
            producer: Some("pytest".into()),
            source_path: None,
        };
        let mut session = store.begin_ingest(&new_run).map_err(|e| e.to_string())?;
        for (test, id) in (0..tests).zip(&ids) {
            let outcome = if rng.chance(failure_rate_per_million(test)) {
                Outcome::Fail
            } else {
                Outcome::Pass
            };
            session
                .add(Execution::new(id.clone(), outcome))
                .map_err(|e| e.to_string())?;
        }
        session
            .commit(&RunContent {
                content_key: format!("bench-run-{run}"),
                format: None,
                producer: None,
            })
            .map_err(|e| e.to_string())?;
    }
    Ok(started.elapsed())
}

/// `url` with the session's `search_path` set to `schema`, which is created if missing.
fn pg_schema(url: &str, schema: &str) -> Result<String, String> {
    let var = |name: &str| std::env::var(name).ok();
    let target = Target::parse(url, &var).map_err(|e| e.to_string())?;
    let mut client = target
        .client_config()
        .map_err(|e| e.to_string())?
        .connect(postgres::NoTls)
        .map_err(|e| format!("{url}: {e}"))?;
    client
        .batch_execute(&format!("CREATE SCHEMA IF NOT EXISTS {schema}"))
        .map_err(|e| e.to_string())?;
    let sep = if url.contains('?') { '&' } else { '?' };
    Ok(format!("{url}{sep}options=-csearch_path%3D{schema}"))
}

/// Builds the history at `db` (a SQLite path or a PostgreSQL URL) unless it holds every
/// run already.
fn ensure_history(db: &str, tests: u64, options: &Options) -> Result<(), String> {
    let mut store: Box<dyn HistoryStore> = if db.starts_with("postgres") {
        let var = |name: &str| std::env::var(name).ok();
        let target = Target::parse(db, &var).map_err(|e| e.to_string())?;
        Box::new(PgStore::open(&target).map_err(|e| e.to_string())?)
    } else {
        Box::new(SqliteStore::open(db, Duration::from_secs(30)).map_err(|e| e.to_string())?)
    };
    let held = store.runs(usize::MAX).map_err(|e| e.to_string())?.len();
    if held == options.runs as usize {
        return Ok(());
    }
    let took = build_history(&mut *store, tests, options.runs, options.seed)?;
    eprintln!(
        "built {tests} tests × {} runs in {db} in {:.1} s",
        options.runs,
        took.as_secs_f64()
    );
    Ok(())
}

/// Median, fastest and slowest wall time, and median peak RSS in MiB.
fn summarize(samples: &[measure::Sample]) -> (f64, f64, f64, f64) {
    let mut walls: Vec<Duration> = samples.iter().map(|s| s.wall).collect();
    walls.sort();
    let rss = measure::median(&samples.iter().map(|s| s.peak_rss_kib).collect::<Vec<_>>())
        .unwrap_or_default();
    (
        walls[walls.len() / 2].as_secs_f64(),
        walls[0].as_secs_f64(),
        walls[walls.len() - 1].as_secs_f64(),
        rss as f64 / 1024.0,
    )
}

fn run(options: &Options) -> Result<(), String> {
    let temp = tempfile::tempdir().map_err(|e| e.to_string())?;
    let dir = options
        .keep_in
        .clone()
        .unwrap_or_else(|| temp.path().to_owned());
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let candor = Path::new(env!("CARGO_BIN_EXE_candor"));
    println!("seed {}", options.seed);
    let mut rows = Vec::new();
    for &tests in &options.tests {
        let work = dir.join(format!("reliability-{tests}"));
        std::fs::create_dir_all(&work).map_err(|e| e.to_string())?;
        let file = work.join("test-reliability.yaml");
        let mut stores = vec![("SQLite", work.join("history.db").display().to_string())];
        if let Some(url) = &options.pg {
            stores.push(("PostgreSQL", pg_schema(url, &format!("bench_{tests}"))?));
        }
        for (store_name, db) in &stores {
            ensure_history(db, tests, options)?;
            for previous in [false, true] {
                let mut samples = Vec::new();
                for _ in 0..options.iterations {
                    if !previous {
                        let _ = std::fs::remove_file(&file);
                    }
                    let args: Vec<OsString> = vec![
                        "--db".into(),
                        db.clone().into(),
                        "--quiet".into(),
                        "--format".into(),
                        "json".into(),
                        "reliability".into(),
                        "--write".into(),
                        file.clone().into(),
                    ];
                    let sample = measure::measure(candor, &args, &work)?;
                    if !sample.stdout.contains(r#""type":"reliability-summary""#) {
                        return Err(format!("no summary line from candor:\n{}", sample.stdout));
                    }
                    samples.push(sample);
                }
                let (median, fastest, slowest, rss) = summarize(&samples);
                let lines = std::fs::read_to_string(&file)
                    .map_err(|e| e.to_string())?
                    .matches("\n  - id: ")
                    .count();
                if lines as u64 != tests {
                    return Err(format!("the file lists {lines} tests, expected {tests}"));
                }
                rows.push(format!(
                "| {store_name} | {tests} × {} ({} executions) | `reliability --write`, {} | {median:.2} s | {fastest:.2}–{slowest:.2} s | {rss:.0} MiB |",
                options.runs,
                tests * u64::from(options.runs),
                if previous {
                    "previous file"
                } else {
                    "no previous file"
                },
            ));
            }
            // The questions a person asks of that history: which tests fail now, and one
            // flaky test's past (test 99 fails 15% of the time).
            let shown = test_id(99);
            for (what, args) in [
                ("`tests --failing`", vec!["tests", "--failing"]),
                ("`show TEST`", vec!["show", shown.as_str()]),
            ] {
                let mut full: Vec<OsString> = vec!["--db".into(), db.into(), "--quiet".into()];
                full.extend(args.iter().map(OsString::from));
                let mut samples = Vec::new();
                for _ in 0..options.iterations {
                    samples.push(measure::measure(candor, &full, &work)?);
                }
                let (median, fastest, slowest, rss) = summarize(&samples);
                rows.push(format!(
                "| {store_name} | {tests} × {} ({} executions) | {what} | {median:.3} s | {fastest:.3}–{slowest:.3} s | {rss:.0} MiB |",
                options.runs,
                tests * u64::from(options.runs),
            ));
            }
        }
    }
    for (key, value) in measure::machine_facts() {
        println!("{key}: {value}");
    }
    println!("load average: {}", measure::load_average());
    println!();
    println!("| store | history | command | wall (median) | min–max | peak RSS |");
    println!("| --- | --- | --- | --- | --- | --- |");
    for row in rows {
        println!("{row}");
    }
    Ok(())
}
