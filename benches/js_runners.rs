//! `cargo bench --bench js-runners`: two figures for the JavaScript adapters
//! (docs/benchmarks.md, issue #20).
//!
//! 1. **Overhead per rerun**, for jest, vitest, mocha and node's test runner: the release
//!    binary compares a trivial test of a copy of the runner's fixture project
//!    (tests/fixtures/js/<runner>, `npm ci` first) with `--no-early-stop` at two run
//!    counts; candor's own time per run is the slope of (candor's wall time − the runner
//!    processes' wall time, from the run records) between the two, median of 3 pairs, as
//!    the compare bench measures the `command` runner.
//! 2. **`candor test` on a 2,000-test jest suite** against bare jest with the same
//!    arguments candor passes (`--ci --json --testLocationInResults --outputFile --randomize
//!    --seed`), alternated, median of 5 each.

#[path = "support/quiet.rs"]
mod quiet;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::Instant;

use candor::records;
use clap::Parser;
use quiet::run;

#[derive(Debug, Parser)]
#[command(
    about = "Measures the JavaScript adapters: overhead per rerun, and candor test on 2,000 jest tests"
)]
struct Options {
    /// Runs per side of the short overhead measurement.
    #[arg(long, default_value_t = 2)]
    short_runs: u32,
    /// Runs per side of the long one.
    #[arg(long, default_value_t = 10)]
    long_runs: u32,
    /// Tests in the generated jest suite.
    #[arg(long, default_value_t = 2_000)]
    tests: u32,
    /// Alternated pairs of (bare jest, candor test).
    #[arg(long, default_value_t = 5)]
    pairs: u32,
    /// Only these runners' overhead (jest, vitest, mocha, node); all when empty.
    #[arg(long)]
    runner: Vec<String>,
    /// Passed by `cargo bench`; ignored.
    #[arg(long, hide = true)]
    bench: bool,
}

/// (runner, the trivial test's file, its source)
const RUNNERS: [(&str, &str, &str); 4] = [
    (
        "jest",
        "__tests__/trivial.test.js",
        "test('trivial', () => {});\n",
    ),
    (
        "vitest",
        "test/trivial.test.js",
        "import { test } from 'vitest';\ntest('trivial', () => {});\n",
    ),
    (
        "mocha",
        "test/trivial.test.js",
        "it('trivial', () => {});\n",
    ),
    (
        "node",
        "test/trivial.test.js",
        "const { test } = require('node:test');\ntest('trivial', () => {});\n",
    ),
];

fn fixture(runner: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/js")
        .join(runner)
}

/// A git repository holding the fixture's package.json and one trivial test, its
/// `node_modules` linked to the fixture's.
fn trivial_repo(runner: &str, file: &str, source: &str) -> tempfile::TempDir {
    let temp = tempfile::tempdir().expect("temp dir");
    let repo = temp.path();
    let from = fixture(runner);
    std::fs::copy(from.join("package.json"), repo.join("package.json")).expect("package.json");
    let modules = from.join("node_modules");
    if modules.is_dir() {
        std::os::unix::fs::symlink(&modules, repo.join("node_modules")).expect("link");
    } else {
        assert!(
            runner == "node",
            "{} is not installed: run `npm ci` in {}",
            modules.display(),
            from.display()
        );
    }
    let path = repo.join(file);
    std::fs::create_dir_all(path.parent().expect("a folder")).expect("mkdir");
    std::fs::write(&path, source).expect("the test");
    std::fs::write(
        repo.join("candor.toml"),
        format!("[runner]\nkind = \"{runner}\"\n"),
    )
    .expect("candor.toml");
    std::fs::write(repo.join(".gitignore"), ".candor/\nnode_modules\n").expect("ignore");
    run(repo, "git", &["init", "--quiet", "-b", "main"]);
    run(repo, "git", &["add", "-A"]);
    run(repo, "git", &["commit", "--quiet", "-m", "trivial"]);
    temp
}

/// (candor's wall seconds, the runner processes' wall seconds, runs)
fn compare_once(repo: &Path, test: &str, runs_per_side: u32) -> (f64, f64, u32) {
    let started = Instant::now();
    let output = Command::new(env!("CARGO_BIN_EXE_candor"))
        .args([
            "compare",
            test,
            "--no-early-stop",
            "--seed",
            "1",
            "--format",
            "json",
            "--runs",
            &runs_per_side.to_string(),
        ])
        .current_dir(repo)
        .env("CANDOR_DB", repo.join(".candor/history.db"))
        .output()
        .expect("candor runs");
    let wall = started.elapsed().as_secs_f64();
    let line: serde_json::Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&output.stderr)));
    let dir = PathBuf::from(line["records"].as_str().expect("records"));
    let records = records::read_all(&[dir]).expect("records");
    let children: f64 = records.iter().map(|r| r.wall_seconds).sum();
    (
        wall,
        children,
        u32::try_from(records.len()).expect("few runs"),
    )
}

fn overhead(options: &Options) {
    println!("| runner | candor's overhead per rerun (median of 3) | the runner process per run |");
    println!("| --- | --: | --: |");
    for (runner, file, source) in RUNNERS {
        if !options.runner.is_empty() && !options.runner.iter().any(|r| r == runner) {
            continue;
        }
        let temp = trivial_repo(runner, file, source);
        let repo = temp.path();
        let test = format!("{file}::trivial");
        // Warm the worktree, the history and the runner's caches.
        compare_once(repo, &test, 1);
        let mut slopes = Vec::new();
        for _ in 0..3 {
            let (short_wall, short_children, short_runs) =
                compare_once(repo, &test, options.short_runs);
            let (long_wall, long_children, long_runs) =
                compare_once(repo, &test, options.long_runs);
            let extra_runs = f64::from(long_runs - short_runs);
            let candor_only = (long_wall - long_children) - (short_wall - short_children);
            slopes.push((
                candor_only / extra_runs,
                (long_children - short_children) / extra_runs,
            ));
        }
        slopes.sort_by(|a, b| a.0.total_cmp(&b.0));
        let (per_run, child) = slopes[1];
        println!(
            "| {runner} | {:.1} ms | {:.0} ms |",
            per_run * 1e3,
            child * 1e3
        );
    }
    println!();
}

/// A jest project of `tests` passing tests, 100 to a file.
fn jest_suite(tests: u32) -> tempfile::TempDir {
    let temp = tempfile::tempdir().expect("temp dir");
    let repo = temp.path();
    let from = fixture("jest");
    std::fs::copy(from.join("package.json"), repo.join("package.json")).expect("package.json");
    std::os::unix::fs::symlink(from.join("node_modules"), repo.join("node_modules")).expect("link");
    std::fs::create_dir_all(repo.join("__tests__")).expect("mkdir");
    let per_file = 100;
    for file in 0..tests.div_ceil(per_file) {
        let mut source = format!("describe('file {file}', () => {{\n");
        for test in 0..per_file.min(tests - file * per_file) {
            let _ = writeln!(
                source,
                "  test('test {test}', () => {{ expect({test} + 1).toBe({}); }});",
                test + 1
            );
        }
        source.push_str("});\n");
        std::fs::write(repo.join(format!("__tests__/f{file:03}.test.js")), source)
            .expect("a test file");
    }
    std::fs::write(repo.join("candor.toml"), "[runner]\nkind = \"jest\"\n").expect("toml");
    std::fs::write(
        repo.join(".gitignore"),
        ".candor/\nnode_modules\nbare.json\n",
    )
    .expect("ignore");
    run(repo, "git", &["init", "--quiet", "-b", "main"]);
    run(repo, "git", &["add", "-A"]);
    run(repo, "git", &["commit", "--quiet", "-m", "suite"]);
    temp
}

fn timed(command: &mut Command) -> f64 {
    let started = Instant::now();
    let status = command
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("it runs");
    let seconds = started.elapsed().as_secs_f64();
    assert!(status.success(), "{command:?}: {status}");
    seconds
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// One `candor test --format json`: its wall time and its suite child's, which candor
/// writes at the end of that child's log (`# ended: exit code 0 after 3.210s`).
fn candor_test(repo: &Path, seed: u32) -> (f64, f64) {
    let started = Instant::now();
    let output = Command::new(env!("CARGO_BIN_EXE_candor"))
        .args(["test", "--seed", &seed.to_string(), "--format", "json"])
        .current_dir(repo)
        .env("CANDOR_DB", repo.join(".candor/history.db"))
        .stderr(Stdio::null())
        .output()
        .expect("candor runs");
    let wall = started.elapsed().as_secs_f64();
    assert!(output.status.success(), "candor test: {}", output.status);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let log = stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .find_map(|event| event["logs"][0].as_str().map(PathBuf::from))
        .unwrap_or_else(|| panic!("candor test printed no test_run event:\n{stdout}"));
    let text = std::fs::read_to_string(&log).expect("the suite's log");
    let suite = text
        .lines()
        .rev()
        .find_map(|line| line.strip_prefix("# ended: "))
        .and_then(|rest| rest.split(" after ").nth(1))
        .and_then(|rest| rest.strip_suffix('s'))
        .and_then(|number| number.parse::<f64>().ok())
        .unwrap_or_else(|| panic!("{}: no `# ended: … after Ns` line", log.display()));
    (wall, suite)
}

fn jest_suite_overhead(options: &Options) {
    let temp = jest_suite(options.tests);
    let repo = temp.path();
    let bare = |seed: u32| {
        let mut command = Command::new(repo.join("node_modules/.bin/jest"));
        command
            .args([
                "--ci",
                "--watchAll=false",
                "--json",
                "--testLocationInResults",
                "--outputFile=bare.json",
                "--randomize",
                &format!("--seed={seed}"),
            ])
            .current_dir(repo);
        command
    };
    // Warm jest's transform cache and the history.
    timed(&mut bare(1));
    candor_test(repo, 1);
    let (mut bare_times, mut candor_times, mut suite_times, mut own_times) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for pair in 0..options.pairs {
        bare_times.push(timed(&mut bare(pair + 2)));
        let (wall, suite) = candor_test(repo, pair + 2);
        candor_times.push(wall);
        suite_times.push(suite);
        own_times.push(wall - suite);
    }
    let (bare, candor) = (median(bare_times), median(candor_times));
    let (suite, own) = (median(suite_times), median(own_times));
    println!(
        "| {} jest tests (median of {}) | wall |",
        options.tests, options.pairs
    );
    println!("| --- | --: |");
    println!("| bare jest, candor's arguments | {bare:.2} s |");
    println!("| `candor test` | {candor:.2} s |");
    println!(
        "| candor's addition, against bare jest | {:+.2} s ({:+.1} %) |",
        candor - bare,
        (candor / bare - 1.0) * 100.0
    );
    println!("| jest as candor's child | {suite:.2} s |");
    println!(
        "| **candor's own time** (its wall − its jest child's) | {own:.3} s ({:.1} % of the child) |",
        own / suite * 100.0
    );
}

fn main() -> ExitCode {
    let options = Options::parse();
    if let Ok(load) = std::fs::read_to_string("/proc/loadavg") {
        println!("load average at the start: {}", load.trim());
    }
    overhead(&options);
    jest_suite_overhead(&options);
    if let Ok(load) = std::fs::read_to_string("/proc/loadavg") {
        println!("load average at the end: {}", load.trim());
    }
    ExitCode::SUCCESS
}
