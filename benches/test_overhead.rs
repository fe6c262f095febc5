//! `cargo bench --bench test-overhead`: candor's own time around a suite run. Generates a
//! pytest project of `--tests` tests (files of 50, a real git repository in a temp dir),
//! then alternates, `--iterations` times, `candor test --seed N` (the release binary) and
//! bare pytest with exactly the argv candor gave it (from the `test_run` event; only the
//! report path differs). candor's own time is its wall time minus its suite child's wall
//! time (the `# ended: … after Ns` line candor's log of that child ends with); the bare
//! run is the cross-check. Prints a Markdown table of medians. See docs/benchmarks.md.

#[path = "support/measure.rs"]
mod measure;
#[path = "support/quiet.rs"]
mod quiet;

use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;

use measure::Sample;

#[derive(Debug, Parser)]
#[command(about = "Measures candor test's own time around a generated pytest suite")]
struct Options {
    /// Tests in the generated project (files of 50).
    #[arg(long, default_value_t = 2_000)]
    tests: u32,
    /// Timed runs of each side; the table shows the median.
    #[arg(long, default_value_t = 7)]
    iterations: usize,
    /// The seed handed to the runner (`candor test --seed`), the same every run.
    #[arg(long, default_value_t = 0x00C4_ED01)]
    seed: u64,
    /// Another candor binary (an earlier build) to measure alternately with this one, each
    /// with its own history: a before-and-after on the same machine at the same time.
    #[arg(long, value_name = "PATH")]
    baseline: Option<PathBuf>,
    /// Keep the generated project in this directory instead of a temp dir.
    #[arg(long)]
    keep_in: Option<PathBuf>,
    /// Exit non-zero when candor's own time is above 3% of the runner's.
    #[arg(long)]
    check: bool,
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
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

/// A project of `tests` passing tests that each do a little work, as unit tests do.
fn generate(repo: &Path, tests: u32) -> Result<(), String> {
    let write = |path: PathBuf, text: &str| -> Result<(), String> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        }
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))
    };
    write(
        repo.join("pyproject.toml"),
        "[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\n",
    )?;
    write(repo.join(".gitignore"), ".candor/\n__pycache__/\n")?;
    for file in 0..tests.div_ceil(50) {
        let mut text = String::from("import json\n\n\n");
        for test in 0..50.min(tests - file * 50) {
            let _ = write!(
                text,
                "def test_case_{test}():\n    data = json.loads(json.dumps({{\"n\": {file}, \"items\": list(range({test}))}}))\n    assert sum(data[\"items\"]) == {}\n\n\n",
                test * test.saturating_sub(1) / 2
            );
        }
        write(repo.join(format!("tests/test_module_{file:03}.py")), &text)?;
    }
    quiet::run(repo, "git", &["init", "--quiet", "-b", "main"]);
    quiet::run(repo, "git", &["add", "-A"]);
    quiet::run(repo, "git", &["commit", "--quiet", "-m", "suite"]);
    Ok(())
}

/// One `candor test`: its sample, the suite child's argv and wall time, and the wall time
/// of its other children (probes), from their logs.
struct CandorRun {
    sample: Sample,
    argv: Vec<String>,
    suite: Duration,
    probes: Duration,
    tests: u64,
}

fn candor_test(candor: &Path, repo: &Path, db: &Path, seed: u64) -> Result<CandorRun, String> {
    let command: Vec<OsString> = vec![
        "test".into(),
        "--seed".into(),
        seed.to_string().into(),
        "--format".into(),
        "json".into(),
        "--db".into(),
        db.into(),
    ];
    let sample = measure::measure(candor, &command, repo)?;
    let event = sample
        .stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .find(|line| line.get("logs").is_some() && line.get("argv").is_some())
        .ok_or_else(|| format!("candor test printed no test_run event:\n{}", sample.stdout))?;
    let runner_argv: Vec<String> = event["argv"][0]
        .as_array()
        .ok_or("the test_run event has no argv")?
        .iter()
        .filter_map(|arg| arg.as_str().map(str::to_owned))
        .collect();
    let suite_log = PathBuf::from(
        event["logs"][0]
            .as_str()
            .ok_or("the test_run event has no log")?,
    );
    let suite = ended_after(&suite_log)?;
    // Every other log in the run's scratch folder is a probe candor ran before the suite.
    let mut probes = Duration::ZERO;
    let folder = suite_log.parent().ok_or("a log has a folder")?;
    for entry in std::fs::read_dir(folder).map_err(|e| format!("{}: {e}", folder.display()))? {
        let path = entry.map_err(|e| e.to_string())?.path();
        if path != suite_log && path.extension().is_some_and(|ext| ext == "log") {
            probes += ended_after(&path)?;
        }
    }
    Ok(CandorRun {
        sample,
        argv: runner_argv,
        suite,
        probes,
        tests: event["tests"].as_u64().unwrap_or(0),
    })
}

/// The child's wall time from the last line candor writes in its log.
fn ended_after(log: &Path) -> Result<Duration, String> {
    let text = std::fs::read_to_string(log).map_err(|e| format!("{}: {e}", log.display()))?;
    let seconds = text
        .lines()
        .rev()
        .find_map(|line| line.strip_prefix("# ended: "))
        .and_then(|rest| rest.split(" after ").nth(1))
        .and_then(|rest| rest.split('s').next())
        .and_then(|number| number.parse::<f64>().ok())
        .ok_or_else(|| format!("{}: no `# ended: … after Ns` line", log.display()))?;
    Ok(Duration::from_secs_f64(seconds))
}

fn run(options: &Options) -> Result<bool, String> {
    let temp;
    let dir: &Path = if let Some(dir) = &options.keep_in {
        std::fs::create_dir_all(dir).map_err(|error| format!("{}: {error}", dir.display()))?;
        dir
    } else {
        temp = tempfile::tempdir().map_err(|error| format!("no temp dir: {error}"))?;
        temp.path()
    };
    let repo = dir.join("project");
    let bare_report = dir.join("bare-junit.xml");
    let machine = measure::machine_facts();
    eprintln!("generating {} tests in {} …", options.tests, repo.display());
    generate(&repo, options.tests)?;
    let mut binaries = vec![(
        "this build".to_string(),
        PathBuf::from(env!("CARGO_BIN_EXE_candor")),
        dir.join("history.db"),
    )];
    if let Some(baseline) = &options.baseline {
        binaries.push((
            format!("baseline `{}`", baseline.display()),
            baseline.clone(),
            dir.join("history-baseline.db"),
        ));
    }
    let mut runner_argv = Vec::new();
    for (name, candor, db) in &binaries {
        // Unmeasured: Python's bytecode caches, the history's creation.
        let warm = candor_test(candor, &repo, db, options.seed)?;
        if warm.tests != u64::from(options.tests) {
            return Err(format!(
                "{name}: candor stored {} tests of the {} generated",
                warm.tests, options.tests
            ));
        }
        runner_argv = warm.argv;
    }
    let mut candor_runs: Vec<Vec<CandorRun>> = binaries.iter().map(|_| Vec::new()).collect();
    let mut bare = Vec::new();
    for iteration in 1..=options.iterations.max(1) {
        for ((name, candor, db), runs) in binaries.iter().zip(&mut candor_runs) {
            let ran = candor_test(candor, &repo, db, options.seed)?;
            eprintln!(
                "iteration {iteration}: {name}: candor test {:.3} s (suite child {:.3} s, probes {:.3} s, CPU {:.3} s)",
                ran.sample.wall.as_secs_f64(),
                ran.suite.as_secs_f64(),
                ran.probes.as_secs_f64(),
                ran.sample.cpu.as_secs_f64(),
            );
            runner_argv.clone_from(&ran.argv);
            runs.push(ran);
        }
        let (program, rest) = runner_argv
            .split_first()
            .ok_or("candor ran an empty argv")?;
        // The same argv, the report elsewhere: candor's own report stays as it stored it.
        let bare_args: Vec<OsString> = rest
            .iter()
            .map(|arg| {
                if arg.starts_with("--junitxml=") {
                    format!("--junitxml={}", bare_report.display()).into()
                } else {
                    arg.into()
                }
            })
            .collect();
        // A bare name is looked up on PATH by the wrapper, as candor's child was.
        let sample = measure::measure(Path::new(program), &bare_args, &repo)?;
        eprintln!(
            "iteration {iteration}: bare {program} {:.3} s (CPU {:.3} s)",
            sample.wall.as_secs_f64(),
            sample.cpu.as_secs_f64(),
        );
        bare.push(sample);
    }
    let names: Vec<&str> = binaries.iter().map(|(name, ..)| name.as_str()).collect();
    let (report, met) = report(options, &machine, &runner_argv, &names, &candor_runs, &bare);
    println!("{report}");
    Ok(met || !options.check)
}

fn median(values: impl Iterator<Item = Duration>) -> Duration {
    let values: Vec<Duration> = values.collect();
    measure::median(&values).unwrap_or_default()
}

fn report(
    options: &Options,
    machine: &[(&'static str, String)],
    argv: &[String],
    names: &[&str],
    candor: &[Vec<CandorRun>],
    bare: &[Sample],
) -> (String, bool) {
    let mut out = String::new();
    let _ = writeln!(out, "\n## candor test overhead benchmark\n");
    let _ = writeln!(out, "| fact | value |\n| --- | --- |");
    for (fact, value) in machine {
        let _ = writeln!(out, "| {fact} | {value} |");
    }
    let _ = writeln!(out, "| load average at end | {} |", measure::load_average());
    let _ = writeln!(
        out,
        "| suite | {} generated pytest tests in {} files, seed {} |",
        options.tests,
        options.tests.div_ceil(50),
        options.seed
    );
    let _ = writeln!(out, "| runner argv | `{}` |", argv.join(" "));
    let _ = writeln!(
        out,
        "| iterations | {} (every binary and the bare runner alternated; medians) |",
        bare.len()
    );
    let bare_wall = median(bare.iter().map(|sample| sample.wall));
    let bare_cpu = median(bare.iter().map(|sample| sample.cpu));
    let _ = writeln!(
        out,
        "\n| binary | `candor test` wall | suite child's wall | probes' wall | **own time** (wall − suite child) | own ÷ suite child | target ≤ 3% | wall ÷ bare runner's | CPU, candor and children | CPU − bare runner's |"
    );
    let _ = writeln!(
        out,
        "| --- | --: | --: | --: | --: | --: | --- | --: | --: | --: |"
    );
    let mut met = true;
    for (name, runs) in names.iter().zip(candor) {
        let wall = median(runs.iter().map(|run| run.sample.wall));
        let suite = median(runs.iter().map(|run| run.suite));
        let probes = median(runs.iter().map(|run| run.probes));
        let own = median(
            runs.iter()
                .map(|run| run.sample.wall.saturating_sub(run.suite)),
        );
        let cpu = median(runs.iter().map(|run| run.sample.cpu));
        let share = own.as_secs_f64() / suite.as_secs_f64().max(f64::MIN_POSITIVE);
        let this_met = share <= 0.03;
        if name == &names[0] {
            met = this_met;
        }
        let _ = writeln!(
            out,
            "| {name} | {:.3} s | {:.3} s | {:.3} s | **{:.3} s** | {:.1}% | {} | {:.3} | {:.3} s | {:+.3} s |",
            wall.as_secs_f64(),
            suite.as_secs_f64(),
            probes.as_secs_f64(),
            own.as_secs_f64(),
            share * 100.0,
            if this_met { "met" } else { "**not met**" },
            wall.as_secs_f64() / bare_wall.as_secs_f64().max(f64::MIN_POSITIVE),
            cpu.as_secs_f64(),
            cpu.as_secs_f64() - bare_cpu.as_secs_f64(),
        );
    }
    let _ = writeln!(
        out,
        "| bare runner, same argv | {:.3} s | | | | | | 1.000 | {:.3} s | |",
        bare_wall.as_secs_f64(),
        bare_cpu.as_secs_f64()
    );
    (out, met)
}
