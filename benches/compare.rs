//! `cargo bench --bench compare`: two figures for `candor compare` (docs/benchmarks.md).
//!
//! 1. **Runs to a verdict**: the sequential design of the default `[compare]` against the
//!    fixed 20 + 20 protocol (one exact Fisher test after 20 runs per side, plain and
//!    exactly calibrated), for the cases the design is judged on: the same rate on both
//!    sides (0, 1/7, 0.3), a rise from 0 to 0.25, a deterministic regression, a real bug
//!    at 3/4 on a 1/7 flake, and moderate rises on flaky tests. Mean runs and verdict
//!    rates are computed exactly (`Design::operating`) and checked against simulated runs
//!    through `compare::measure` (seeded); Wald's information bound gives the fewest runs
//!    any valid test could average.
//! 2. **Overhead per rerun**: the release binary compares a trivial test whose "runner" is
//!    `cp` copying a canned JUnit report, at two run counts; candor's marginal time per run
//!    beyond its child processes' own wall time is the slope. With `--playwright` the
//!    runner is Playwright Test instead (issue #20): a copy of tests/fixtures/js/playwright
//!    (its `node_modules` linked; `npm ci` there first), one passing non-browser test,
//!    and only this measurement.

#[path = "support/quiet.rs"]
mod quiet;
#[path = "support/simulate.rs"]
mod simulate;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

use candor::policy::config::CompareConfig;
use candor::records;
use candor::stats::sequential::{Design, expected_runs_lower_bound, fixed_power};
use clap::Parser;
use quiet::run;
use simulate::{Draws, simulate};

#[derive(Debug, Parser)]
#[command(about = "Measures candor compare: runs to a verdict, and overhead per rerun")]
struct Options {
    /// Simulated comparisons per case.
    #[arg(long, default_value_t = 20_000)]
    simulations: u32,
    /// Generator seed (printed).
    #[arg(long, default_value_t = 0x00CA_4D0A)]
    seed: u64,
    /// Runs per side of the short and the long overhead measurement.
    #[arg(long, default_value_t = 5)]
    short_runs: u32,
    /// See `--short-runs`.
    #[arg(long, default_value_t = 45)]
    long_runs: u32,
    /// Measure the overhead over Playwright Test's own process instead of `cp`, and skip
    /// the runs-to-verdict table.
    #[arg(long)]
    playwright: bool,
    /// Passed by `cargo bench`; ignored.
    #[arg(long, hide = true)]
    bench: bool,
}

fn runs_to_verdict(options: &Options) {
    let defaults = CompareConfig::default();
    let started = Instant::now();
    let sequential = Design::new(
        defaults.alpha,
        defaults.runs,
        defaults.look_every,
        defaults.min_increase,
    );
    let calibration = started.elapsed();
    let fixed = Design::new(defaults.alpha, 20, 20, defaults.min_increase);
    println!(
        "Sequential design (candor.toml's defaults): looks at {:?} runs per side, calibration factor {:.2}, built in {:.0} ms; seed {}, {} simulations per case\n",
        sequential.looks(),
        sequential.calibration(),
        calibration.as_secs_f64() * 1e3,
        options.seed,
        options.simulations
    );
    println!(
        "| case | base | branch | sequential: mean runs, exact (simulated) | sequential: called worse, exact (simulated) | fixed 20+20: called worse, plain Fisher / exact-calibrated | runs vs 20+20 | fewest runs any valid test could average |"
    );
    println!("| --- | --: | --: | --: | --: | --: | --: | --: |");
    let cases = [
        ("same rate", 0.0, 0.0),
        ("same rate", 1.0 / 7.0, 1.0 / 7.0),
        ("same rate", 0.3, 0.3),
        ("rise to 1/4", 0.0, 0.25),
        ("deterministic regression", 0.0, 1.0),
        ("real bug on a flake", 1.0 / 7.0, 0.75),
        ("moderate rise on a flake", 1.0 / 7.0, 0.4),
        ("moderate rise on a flakier test", 0.3, 0.55),
    ];
    let mut draws = Draws(options.seed);
    for (name, base, branch) in cases {
        let exact = sequential.operating(base, branch);
        let simulated = simulate(&sequential, base, branch, options.simulations, &mut draws);
        let plain = fixed_power(20, defaults.alpha, base, branch);
        let calibrated = fixed.operating(base, branch).branch_worse;
        let bound = expected_runs_lower_bound(base, branch, defaults.alpha, exact.branch_worse);
        let bound = if bound.is_finite() {
            format!("{bound:.1}")
        } else {
            "(no rise)".to_owned()
        };
        println!(
            "| {name} | {base:.3} | {branch:.3} | {:.1} ({:.1}) | {:.3} ({:.3}) | {plain:.3} / {calibrated:.3} | {:.2} | {bound} |",
            exact.expected_runs,
            simulated.mean_runs,
            exact.branch_worse,
            simulated.branch_worse,
            exact.expected_runs / 40.0
        );
    }
    println!();
}

/// (candor's wall seconds, the children's wall seconds, runs)
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
    let line: serde_json::Value =
        serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("{e}: {output:?}"));
    let dir = PathBuf::from(line["records"].as_str().expect("records"));
    let records = records::read_all(&[dir]).expect("records");
    let children: f64 = records.iter().map(|r| r.wall_seconds).sum();
    (
        wall,
        children,
        u32::try_from(records.len()).expect("few runs"),
    )
}

/// The test and runner the overhead is measured on: `cp` of a canned report, or one
/// passing test of the Playwright fixture.
fn overhead_repo(repo: &Path, playwright: bool) -> &'static str {
    run(repo, "git", &["init", "--quiet", "-b", "main"]);
    if playwright {
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/js/playwright");
        for name in ["package.json", "playwright.config.js", "flaky.js"] {
            std::fs::copy(fixture.join(name), repo.join(name)).expect("copy the fixture");
        }
        std::fs::create_dir_all(repo.join("tests")).expect("tests");
        std::fs::copy(
            fixture.join("tests/basic.spec.js"),
            repo.join("tests/basic.spec.js"),
        )
        .expect("copy the fixture's tests");
        std::os::unix::fs::symlink(fixture.join("node_modules"), repo.join("node_modules"))
            .expect("link node_modules");
        std::fs::write(
            repo.join("candor.toml"),
            "[runner]\nkind = \"playwright\"\n",
        )
        .expect("candor.toml");
        std::fs::write(repo.join(".gitignore"), ".candor/\nnode_modules\n").expect("ignore");
        run(repo, "git", &["add", "-A"]);
        run(repo, "git", &["commit", "--quiet", "-m", "playwright"]);
        return "[alpha] tests/basic.spec.js::math > adds";
    }
    std::fs::write(
        repo.join("candor.toml"),
        "[runner]\nkind = \"command\"\ncommand = [\"cp\", \"canned/{test}.xml\", \"{report}\"]\n",
    )
    .expect("candor.toml");
    std::fs::create_dir_all(repo.join("canned")).expect("canned");
    std::fs::write(
        repo.join("canned/suite::trivial.xml"),
        "<testsuite name=\"suite\" tests=\"1\"><testcase classname=\"suite\" name=\"trivial\" time=\"0.001\"/></testsuite>\n",
    )
    .expect("report");
    std::fs::write(repo.join(".gitignore"), ".candor/\n").expect("ignore");
    run(repo, "git", &["add", "-A"]);
    run(repo, "git", &["commit", "--quiet", "-m", "trivial"]);
    "suite::trivial"
}

fn overhead(options: &Options) {
    let temp = tempfile::tempdir().expect("temp dir");
    let repo = temp.path();
    let test = overhead_repo(repo, options.playwright);
    // Warm the worktree and the history so both measurements reuse them.
    compare_once(repo, test, 1);
    let mut slopes = Vec::new();
    for _ in 0..3 {
        let (short_wall, short_children, short_runs) = compare_once(repo, test, options.short_runs);
        let (long_wall, long_children, long_runs) = compare_once(repo, test, options.long_runs);
        let extra_runs = f64::from(long_runs - short_runs);
        let candor_only = (long_wall - long_children) - (short_wall - short_children);
        slopes.push((
            candor_only / extra_runs,
            (long_children - short_children) / extra_runs,
            long_wall / f64::from(long_runs),
        ));
    }
    slopes.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (per_run, child, total) = slopes[1];
    println!("| measure (median of 3) | per run |");
    println!("| --- | --- |");
    println!(
        "| candor's overhead beyond the runner process | {:.2} ms |",
        per_run * 1e3
    );
    println!(
        "| the runner process ({}) | {:.2} ms |",
        if options.playwright {
            "`playwright test` of one passing test"
        } else {
            "`cp` of a canned report"
        },
        child * 1e3
    );
    println!(
        "| whole `candor compare --runs {}` divided by its runs | {:.2} ms |",
        options.long_runs,
        total * 1e3
    );
}

fn main() -> ExitCode {
    let options = Options::parse();
    if !options.playwright {
        runs_to_verdict(&options);
    }
    overhead(&options);
    ExitCode::SUCCESS
}
