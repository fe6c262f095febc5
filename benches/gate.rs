//! `cargo bench --bench gate`: the merge lane's own time on a generated repository of
//! 10,000 pytest tests (200 files of 50, a locked fixture folder of 1,000 files, a ledger,
//! a policy with bans and presets) and a change that adds one test to a small file. The
//! gate's own time is its wall time minus its runner processes: the replays (their wall
//! time is in score-report.json), the runner's probe and listing (`listing_seconds`) and the
//! base-version replay of the touched module (`base_version_seconds`). Median of
//! `--iterations`. See docs/benchmarks.md.
//!
//! `--touched 40` measures the replays instead (issue #15): a generated pytest project
//! whose change edits every test of 4 files (40 touched tests, each doing a little
//! arithmetic), `candor gate` (`replay = "touched"`: listing, 3 rounds, the base's version
//! of the 4 modules) against one plain `pytest` run of those 40 tests, median of
//! `--iterations` each, alternated so that a change in the machine's load hits all
//! sides. `--candor PATH` times another build; `--baseline PATH` times a build before a
//! change beside it; `--jobs N` passes `candor gate --jobs N`.
//! `--runner cargo`, `--runner nextest` and `--runner go` do the same on a generated
//! crate (4 integration test files) or go module (4 packages), against one plain
//! `cargo test`, `cargo nextest run` or `go test -count=1 ./...` of the 40 tests, the
//! build warm for both; the crate's compile of the changed test code, which the gate
//! pays once per change, is timed apart.

#[path = "support/quiet.rs"]
mod quiet;

use quiet::run;
use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, ExitCode};
use std::time::Instant;

use clap::Parser;

#[derive(Debug, Parser)]
#[command(about = "Measures candor gate's own time on a generated 10,000-test repository")]
struct Options {
    /// Test files of 50 tests each.
    #[arg(long, default_value_t = 200)]
    files: u32,
    /// Fixture files under tests/fixtures.
    #[arg(long, default_value_t = 1_000)]
    fixtures: u32,
    /// Timed gate runs; the table shows the median.
    #[arg(long, default_value_t = 3)]
    iterations: usize,
    /// Measure the replays of a change touching this many tests (in 4 files) instead.
    #[arg(long)]
    touched: Option<u32>,
    /// The runner of the `--touched` project: pytest, cargo, nextest or go.
    #[arg(long, default_value = "pytest")]
    runner: String,
    /// The candor binary to time (default: this build's).
    #[arg(long)]
    candor: Option<std::path::PathBuf>,
    /// With `--touched`: a build to time beside this one, alternated (the one before a
    /// change; it gets no `--jobs`).
    #[arg(long)]
    baseline: Option<std::path::PathBuf>,
    /// `candor gate --jobs N` (a build before issue #15 item 3 has no such option).
    #[arg(long)]
    jobs: Option<u32>,
    /// Passed by `cargo bench`; ignored.
    #[arg(long, hide = true)]
    bench: bool,
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

fn generate(repo: &Path, options: &Options) {
    write(
        &repo.join("pyproject.toml"),
        "[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\n",
    );
    write(
        &repo.join("candor.toml"),
        "[lane]\nmin_replays = 3\npresets = [\"no-sleep-wait\", \"no-naive-datetime\"]\n\n[[ban]]\nid = \"no-network\"\npaths = [\"tests/**/*.py\"]\npattern = 'requests\\.get\\('\nmessage = \"use the recorded cassette\"\nsource = \"bench\"\n",
    );
    write(
        &repo.join(".flake-ledger.tsv"),
        "# date\tsha\ttest_id\tfp\tfirst_fail_sha256\tseed\tworkers\tattempts\toutcome\n",
    );
    write(
        &repo.join(".gitignore"),
        ".candor/\n__pycache__/\nscore-report.json\n",
    );
    for file in 0..options.files {
        let mut text = String::new();
        for test in 0..50 {
            let _ = write!(
                text,
                "def test_case_{test}():\n    assert {file} + {test} == {}\n\n\n",
                file + test
            );
        }
        write(&repo.join(format!("tests/test_module_{file:03}.py")), &text);
    }
    for fixture in 0..options.fixtures {
        write(
            &repo.join(format!(
                "tests/fixtures/set_{:02}/item_{fixture:04}.json",
                fixture % 20
            )),
            &format!("{{\"id\": {fixture}, \"price\": {}}}\n", fixture * 7 % 100),
        );
    }
    write(
        &repo.join("tests/test_small.py"),
        "def test_small():\n    assert True\n",
    );
    run(repo, "git", &["init", "--quiet", "-b", "main"]);
    run(repo, env!("CARGO_BIN_EXE_candor"), &["lock", "fixtures"]);
    run(repo, "git", &["add", "-A"]);
    run(repo, "git", &["commit", "--quiet", "-m", "base"]);
    run(repo, "git", &["checkout", "--quiet", "-b", "change"]);
    write(
        &repo.join("tests/test_small.py"),
        "def test_small():\n    assert True\n\n\ndef test_added():\n    assert 2 > 1\n",
    );
    run(repo, "git", &["commit", "--quiet", "-am", "one more test"]);
}

struct Measured {
    wall: f64,
    replays: f64,
    listing: f64,
    base_version: f64,
    runs: usize,
    /// How the replays ran: the report's batching in one sentence, or the processes of
    /// the replays alone.
    processes: String,
}

fn gate_once(repo: &Path, candor: &Path, jobs: Option<u32>) -> Measured {
    let started = Instant::now();
    let jobs: Vec<String> = jobs
        .map(|n| vec!["--jobs".to_owned(), n.to_string()])
        .unwrap_or_default();
    let output = Command::new(candor)
        .args(["gate", "--format", "json"])
        .args(&jobs)
        .current_dir(repo)
        .env("CANDOR_DB", repo.join(".candor/history.db"))
        .output()
        .expect("candor runs");
    let wall = started.elapsed().as_secs_f64();
    let line: serde_json::Value =
        serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("{e}: {output:?}"));
    assert_eq!(line["pass"], true, "{line:#}");
    let runs = line["runs"].as_array().expect("runs");
    let processes = line["batching"]["rounds"].as_array().map_or_else(
        || format!("{} runner processes, one per replay", runs.len()),
        |rounds| {
            let count: u64 = rounds
                .iter()
                .flat_map(|r| r["batches"].as_array().cloned().unwrap_or_default())
                .map(|b| b["processes"].as_u64().unwrap_or(1))
                .sum();
            format!("{} rounds in {count} runner processes", rounds.len())
        },
    );
    Measured {
        processes,
        wall,
        replays: runs.iter().filter_map(|r| r["seconds"].as_f64()).sum(),
        listing: line["listing_seconds"].as_f64().unwrap_or(0.0),
        base_version: line["base_version_seconds"].as_f64().unwrap_or(0.0),
        runs: runs.len(),
    }
}

/// 4 test files whose `touched / 4` tests each the change edits (the expected value's
/// spelling), so every one is touched and every module has a base version.
fn generate_touched(repo: &Path, touched: u32) {
    write(
        &repo.join("pyproject.toml"),
        "[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\n",
    );
    write(&repo.join("candor.toml"), "[lane]\nreplay = \"touched\"\n");
    write(
        &repo.join(".gitignore"),
        ".candor/\n__pycache__/\nscore-report.json\n",
    );
    let files = |expected: &str| {
        for file in 0..4 {
            let mut text = String::new();
            for test in 0..touched / 4 {
                let _ = write!(
                    text,
                    "def test_sum_{test}():\n    assert sum(i * i for i in range(20_000 + {test})) > {expected}\n\n\n"
                );
            }
            write(&repo.join(format!("tests/test_part_{file}.py")), &text);
        }
    };
    files("0");
    run(repo, "git", &["init", "--quiet", "-b", "main"]);
    run(repo, "git", &["add", "-A"]);
    run(repo, "git", &["commit", "--quiet", "-m", "base"]);
    run(repo, "git", &["checkout", "--quiet", "-b", "change"]);
    files("0x0");
    run(
        repo,
        "git",
        &["commit", "--quiet", "-am", "every test edited"],
    );
}

/// The same change for a cargo crate (`kind`: cargo or nextest): 4 integration test
/// files whose `touched / 4` tests the change edits.
fn generate_touched_crate(repo: &Path, touched: u32, kind: &str) {
    write(
        &repo.join("Cargo.toml"),
        "[package]\nname = \"bench\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n",
    );
    write(
        &repo.join("src/lib.rs"),
        "pub fn sum_squares(n: u64) -> u64 {\n    (0..n).map(|i| i * i).sum()\n}\n",
    );
    write(
        &repo.join("candor.toml"),
        &format!("[lane]\nreplay = \"touched\"\n\n[runner]\nkind = \"{kind}\"\n"),
    );
    write(
        &repo.join(".gitignore"),
        "target/\n.candor/\nscore-report.json\n",
    );
    let files = |expected: &str| {
        for file in 0..4 {
            let mut text = String::new();
            for test in 0..touched / 4 {
                let _ = write!(
                    text,
                    "#[test]\nfn sum_{test}() {{\n    assert!(bench::sum_squares(std::hint::black_box(200_000 + {test})) > {expected});\n}}\n\n"
                );
            }
            write(&repo.join(format!("tests/part_{file}.rs")), &text);
        }
    };
    files("0");
    commit_base_then(repo, || files("0x0"));
}

/// The same change for a go module: 4 packages whose `touched / 4` tests the change
/// edits.
fn generate_touched_go(repo: &Path, touched: u32) {
    write(
        &repo.join("go.mod"),
        "module example.com/bench\n\ngo 1.19\n",
    );
    write(&repo.join("candor.toml"), "[lane]\nreplay = \"touched\"\n");
    write(&repo.join(".gitignore"), ".candor/\nscore-report.json\n");
    let files = |expected: &str| {
        for package in 0..4 {
            let mut text = format!(
                "package part{package}\n\nimport \"testing\"\n\nfunc sumSquares(n int) int {{\n\ts := 0\n\tfor i := 0; i < n; i++ {{\n\t\ts += i * i\n\t}}\n\treturn s\n}}\n\n"
            );
            for test in 0..touched / 4 {
                let _ = write!(
                    text,
                    "func TestSum{test}(t *testing.T) {{\n\tif sumSquares(200000+{test}) <= {expected} {{\n\t\tt.Fatal(\"sum\")\n\t}}\n}}\n\n"
                );
            }
            write(&repo.join(format!("part{package}/part_test.go")), &text);
        }
    };
    files("0");
    commit_base_then(repo, || files("0x0"));
}

fn commit_base_then(repo: &Path, change: impl Fn()) {
    run(repo, "git", &["init", "--quiet", "-b", "main"]);
    run(repo, "git", &["add", "-A"]);
    run(repo, "git", &["commit", "--quiet", "-m", "base"]);
    run(repo, "git", &["checkout", "--quiet", "-b", "change"]);
    change();
    run(
        repo,
        "git",
        &["commit", "--quiet", "-am", "every test edited"],
    );
}

fn timed(repo: &Path, argv: &[&str]) -> f64 {
    let started = Instant::now();
    let status = Command::new(argv[0])
        .args(&argv[1..])
        .current_dir(repo)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .expect("the runner runs");
    assert!(status.success(), "{argv:?}");
    started.elapsed().as_secs_f64()
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// The load average over the last minute, as `/proc/loadavg` says (Linux).
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|text| text.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "unknown".to_owned())
}

fn touched_main(options: &Options, touched: u32, candor: &Path) -> ExitCode {
    let temp = tempfile::tempdir().expect("temp dir");
    let repo = temp.path();
    let runner = options.runner.as_str();
    let (project, plain_argv, units): (&str, Vec<&str>, &str) = match runner {
        "pytest" => {
            generate_touched(repo, touched);
            (
                "pytest project",
                vec![
                    "python3",
                    "-m",
                    "pytest",
                    "-q",
                    "-p",
                    "no:cacheprovider",
                    "tests",
                ],
                "files",
            )
        }
        "cargo" | "nextest" => {
            generate_touched_crate(repo, touched, runner);
            let argv = if runner == "cargo" {
                vec!["cargo", "test", "-q", "--tests"]
            } else {
                vec!["cargo", "nextest", "run", "--tests"]
            };
            ("cargo crate", argv, "integration test files")
        }
        "go" => {
            generate_touched_go(repo, touched);
            (
                "go module",
                vec!["go", "test", "-count=1", "./..."],
                "packages",
            )
        }
        other => panic!("--runner {other}: pytest, cargo, nextest or go"),
    };
    // The compile of the changed test code, which the gate's first replay pays: timed
    // apart (the test files touched, `--no-run`), then the build is warm for both.
    let compile = match runner {
        "cargo" | "nextest" => {
            timed(repo, &["cargo", "test", "--tests", "--no-run", "-q"]);
            for file in 0..4 {
                let path = repo.join(format!("tests/part_{file}.rs"));
                let text = std::fs::read_to_string(&path).expect("read");
                write(&path, &format!("{text}\n"));
            }
            let seconds = timed(repo, &["cargo", "test", "--tests", "--no-run", "-q"]);
            run(repo, "git", &["checkout", "--quiet", "--", "tests"]);
            timed(repo, &["cargo", "test", "--tests", "--no-run", "-q"]);
            Some(seconds)
        }
        "go" => {
            timed(repo, &["go", "test", "-count=1", "-run", "^$", "./..."]);
            None
        }
        _ => None,
    };
    let load_before = load_average();
    // Alternated: a plain run, the baseline's gate (when given), this build's gate.
    let mut plain = Vec::new();
    let mut before: Vec<Measured> = Vec::new();
    let mut measured: Vec<Measured> = Vec::new();
    for _ in 0..options.iterations {
        plain.push(timed(repo, &plain_argv));
        if let Some(baseline) = &options.baseline {
            before.push(gate_once(repo, baseline, None));
        }
        measured.push(gate_once(repo, candor, options.jobs));
    }
    let plain = median(plain);
    println!(
        "{project}: {touched} touched tests in 4 {units}; load average {load_before} before, {} after\n",
        load_average()
    );
    let columns: Vec<(String, &[Measured])> = options
        .baseline
        .iter()
        .map(|b| (b.display().to_string(), before.as_slice()))
        .chain(std::iter::once((
            candor.display().to_string(),
            measured.as_slice(),
        )))
        .collect();
    for (name, runs) in columns {
        let processes = runs[0].runs;
        let gate = median(runs.iter().map(|m| m.wall).collect());
        let listing = median(runs.iter().map(|m| m.listing).collect());
        let base_version = median(runs.iter().map(|m| m.base_version).collect());
        let batched = &runs[0].processes;
        println!("candor {name}\n");
        println!("| part (median of {}) | seconds |", options.iterations);
        println!("| --- | --: |");
        println!(
            "| one plain `{}` run of the {touched} tests | {plain:.3} |",
            plain_argv.join(" ")
        );
        println!("| whole `candor gate` ({processes} replays judged; {batched}) | {gate:.3} |");
        println!("| of which the probe and listing | {listing:.3} |");
        if runner == "pytest" {
            println!("| of which the base's version of the 4 modules | {base_version:.3} |");
        }
        if let Some(compile) = compile {
            println!(
                "| the compile of the changed test code (`cargo test --no-run`, paid once per change, not in the gate's wall above) | {compile:.3} |"
            );
        }
        println!(
            "| **gate / plain run** | **{:.1}×** (target ≤ 4×) |\n",
            gate / plain
        );
    }
    ExitCode::SUCCESS
}

fn main() -> ExitCode {
    let options = Options::parse();
    let candor = options
        .candor
        .clone()
        .unwrap_or_else(|| env!("CARGO_BIN_EXE_candor").into());
    if let Some(touched) = options.touched {
        return touched_main(&options, touched, &candor);
    }
    let temp = tempfile::tempdir().expect("temp dir");
    let repo = temp.path();
    generate(repo, &options);
    let mut measured: Vec<Measured> = (0..options.iterations)
        .map(|_| gate_once(repo, &candor, options.jobs))
        .collect();
    let own = |m: &Measured| m.wall - m.replays - m.listing - m.base_version;
    measured.sort_by(|a, b| own(a).total_cmp(&own(b)));
    let median = &measured[measured.len() / 2];
    println!(
        "Repository: {} tests in {} files, {} locked fixture files; the change adds one test to a 1-test file.\n",
        options.files * 50 + 1,
        options.files + 1,
        options.fixtures
    );
    println!("| part (median of {}) | seconds |", options.iterations);
    println!("| --- | --: |");
    println!("| whole `candor gate` | {:.3} |", median.wall);
    println!(
        "| replays ({} runner processes) | {:.3} |",
        median.runs, median.replays
    );
    println!(
        "| the runner's probe and listing (`pytest -VV`, `pytest --collect-only -q`) | {:.3} |",
        median.listing
    );
    println!(
        "| the base's version of the touched module, against the head's code (a worktree and one runner process) | {:.3} |",
        median.base_version
    );
    println!(
        "| **the gate's own time** (git, policy, diff rules, locks, classification, report) | **{:.3}** |",
        own(median)
    );
    ExitCode::SUCCESS
}
