//! `cargo bench --bench ingest`: generates a large pytest-style JUnit file, then measures
//! side by side a bare quick-xml scan, candor's streaming parse, `candor ingest` (the
//! release binary, as a child process) and quick-junit's in-memory reader, and prints a
//! Markdown table of medians, ratios to the scan and peak memory. See docs/benchmarks.md.

#[path = "support/generator.rs"]
mod generator;
#[path = "support/measure.rs"]
mod measure;

use std::ffi::OsString;
use std::fmt::Write as _;
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, ValueEnum};

use generator::{Generated, Size};
use measure::Sample;

/// First argument that turns the bench executable into one measured stage.
const STAGE_ARG: &str = "__stage";

#[derive(Debug, Parser)]
#[command(about = "Measures candor's JUnit parse and ingest against a bare XML scan")]
struct Options {
    /// Test cases in the generated file.
    #[arg(long, default_value_t = 200_000, conflicts_with = "bytes")]
    cases: u64,
    /// Generate a file of at least this size instead (`1GiB`, `512MiB`): the memory check.
    #[arg(long, value_parser = generator::parse_bytes)]
    bytes: Option<u64>,
    /// Generator seed; the same seed gives the same file byte for byte.
    #[arg(long, default_value_t = 0x00C4_ED01)]
    seed: u64,
    /// Timed runs of each stage; the table shows the median [default: 9, or 3 with --bytes].
    #[arg(long)]
    iterations: Option<usize>,
    /// Include quick-junit's reader; `auto` includes it except with --bytes, because it
    /// holds the whole report in memory.
    #[arg(long, value_enum, default_value_t = Toggle::Auto)]
    quick_junit: Toggle,
    /// Keep the generated file and databases in this directory instead of a temp dir.
    #[arg(long)]
    keep_in: Option<PathBuf>,
    /// Also run (c) pinned to one core with `taskset -c 0` (util-linux).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    one_core: bool,
    /// Exit non-zero when a target is missed (timings on a busy machine are noisy).
    #[arg(long)]
    check: bool,
    /// Passed by `cargo bench`; ignored.
    #[arg(long, hide = true)]
    bench: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Toggle {
    Auto,
    On,
    Off,
}

fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().collect();
    match args.get(1).and_then(|arg| arg.to_str()) {
        Some(measure::WRAPPER_ARG) => return measure::run_wrapper(&args[2..]),
        Some(STAGE_ARG) => return run_stage(&args[2..]),
        _ => {}
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

/// A measured stage: how to run it and what the report calls it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Scan,
    Parse,
    Ingest,
    /// The same file again as another job: every test is already in the history, as in
    /// every ingest after a project's first.
    IngestKnown,
    /// (c) pinned to one core with `taskset -c 0`, as on a one-core CI runner: its wall
    /// time is its CPU time plus what it waits for.
    IngestOneCore,
    QuickJunit,
}

impl Stage {
    fn label(self) -> &'static str {
        match self {
            Stage::Scan => "(a) quick-xml scan: `read_event_into` loop, events counted",
            Stage::Parse => "(b) candor `results::parse`, counting sink",
            Stage::Ingest => "(c) `candor ingest FILE --db TMP/history.db` (release binary)",
            Stage::IngestKnown => {
                "(c′) the same, into a history that holds the file's tests already (another `--job`)"
            }
            Stage::IngestOneCore => "(c1) the same as (c), pinned to one core (`taskset -c 0`)",
            Stage::QuickJunit => "(d) quick-junit `Report::deserialize`",
        }
    }

    fn name(self) -> &'static str {
        match self {
            Stage::Scan => "scan",
            Stage::Parse => "parse",
            Stage::Ingest => "ingest",
            Stage::IngestKnown => "ingest-known",
            Stage::IngestOneCore => "ingest-1core",
            Stage::QuickJunit => "quick-junit",
        }
    }
}

struct StageResult {
    stage: Stage,
    samples: Vec<Sample>,
}

impl StageResult {
    fn median_wall(&self) -> Duration {
        let walls: Vec<Duration> = self.samples.iter().map(|sample| sample.wall).collect();
        measure::median(&walls).unwrap_or_default()
    }

    fn median_cpu(&self) -> Duration {
        let cpus: Vec<Duration> = self.samples.iter().map(|sample| sample.cpu).collect();
        measure::median(&cpus).unwrap_or_default()
    }

    fn median_rss_kib(&self) -> u64 {
        let peaks: Vec<u64> = self.samples.iter().map(|s| s.peak_rss_kib).collect();
        measure::median(&peaks).unwrap_or_default()
    }

    fn spread(&self) -> (Duration, Duration) {
        let walls = self.samples.iter().map(|sample| sample.wall);
        (
            walls.clone().min().unwrap_or_default(),
            walls.max().unwrap_or_default(),
        )
    }

    /// What the stage said it saw (`events 123`), from its last run.
    fn seen(&self) -> String {
        self.samples
            .last()
            .map(|sample| sample.stdout.trim().to_string())
            .unwrap_or_default()
    }
}

fn run(options: &Options) -> Result<bool, String> {
    let size = options
        .bytes
        .map_or(Size::Cases(options.cases), Size::Bytes);
    let iterations = options
        .iterations
        .unwrap_or(if options.bytes.is_some() { 3 } else { 9 })
        .max(1);
    let with_quick_junit = match options.quick_junit {
        Toggle::On => true,
        Toggle::Off => false,
        Toggle::Auto => options.bytes.is_none(),
    };
    let temp;
    let dir: &Path = if let Some(dir) = &options.keep_in {
        std::fs::create_dir_all(dir).map_err(|error| format!("{}: {error}", dir.display()))?;
        dir
    } else {
        temp = tempfile::tempdir().map_err(|error| format!("no temp dir: {error}"))?;
        temp.path()
    };
    let file = dir.join("junit-bench.xml");
    let machine = measure::machine_facts();

    eprintln!(
        "generating {} with seed {} ({size:?}) …",
        file.display(),
        options.seed
    );
    let generated = generator::generate(&file, options.seed, size)
        .map_err(|error| format!("{}: {error}", file.display()))?;
    eprintln!(
        "generated {} test cases, {:.1} MiB, seed {}",
        generated.cases,
        mib(generated.bytes),
        options.seed
    );

    let mut stages = vec![Stage::Scan, Stage::Parse, Stage::Ingest, Stage::IngestKnown];
    if options.one_core {
        stages.push(Stage::IngestOneCore);
    }
    if with_quick_junit {
        stages.push(Stage::QuickJunit);
    }
    let mut results: Vec<StageResult> = stages
        .iter()
        .map(|&stage| StageResult {
            stage,
            samples: Vec::new(),
        })
        .collect();
    let candor = Path::new(env!("CARGO_BIN_EXE_candor"));
    let bench = std::env::current_exe().map_err(|error| format!("no current exe: {error}"))?;
    // The history (c′) starts from: the file ingested once, unmeasured.
    let known = dir.join("history-known.db");
    remove_database(&known);
    let args: Vec<OsString> = vec![
        "ingest".into(),
        file.clone().into(),
        "--db".into(),
        known.clone().into(),
        "--job".into(),
        "first".into(),
    ];
    measure::measure(candor, &args, dir)?;
    // Stages alternate within each iteration so that a burst of other work on the machine
    // spreads over all of them instead of skewing one.
    for iteration in 1..=iterations {
        for result in &mut results {
            let sample = match result.stage {
                Stage::Ingest | Stage::IngestOneCore => {
                    let db = dir.join(format!("history-{iteration}.db"));
                    let mut args: Vec<OsString> = vec![
                        "ingest".into(),
                        file.clone().into(),
                        "--db".into(),
                        db.clone().into(),
                    ];
                    let program = if result.stage == Stage::IngestOneCore {
                        args.splice(0..0, ["-c".into(), "0".into(), candor.into()]);
                        Path::new("taskset")
                    } else {
                        candor
                    };
                    let sample = measure::measure(program, &args, dir).and_then(|mut sample| {
                        sample.stdout = stored_executions(&db)?;
                        Ok(sample)
                    });
                    remove_database(&db);
                    sample?
                }
                Stage::IngestKnown => {
                    let db = dir.join(format!("history-known-{iteration}.db"));
                    remove_database(&db);
                    std::fs::copy(&known, &db)
                        .map_err(|error| format!("{}: {error}", db.display()))?;
                    let args: Vec<OsString> = vec![
                        "ingest".into(),
                        file.clone().into(),
                        "--db".into(),
                        db.clone().into(),
                        "--job".into(),
                        "second".into(),
                    ];
                    let sample = measure::measure(candor, &args, dir).and_then(|mut sample| {
                        sample.stdout = stored_executions(&db)?;
                        Ok(sample)
                    });
                    remove_database(&db);
                    sample?
                }
                stage => {
                    let args: Vec<OsString> =
                        vec![STAGE_ARG.into(), stage.name().into(), file.clone().into()];
                    measure::measure(&bench, &args, dir)?
                }
            };
            eprintln!(
                "iteration {iteration}/{iterations}: {:<11} {:>8.3} s  {:>8.3} s CPU  {:>8.1} MiB",
                result.stage.name(),
                sample.wall.as_secs_f64(),
                sample.cpu.as_secs_f64(),
                sample.peak_rss_kib as f64 / 1024.0
            );
            result.samples.push(sample);
        }
    }

    let (report, all_met) = report(options, &machine, &generated, iterations, &results);
    println!("{report}");
    let mut complete = true;
    for result in &results {
        if !counts_agree(&generated, result) {
            eprintln!(
                "error: {} reported `{}` but the file holds {} test cases",
                result.stage.name(),
                result.seen(),
                generated.cases
            );
            complete = false;
        }
    }
    Ok(complete && (all_met || !options.check))
}

/// What the ingest left in the database, read back through the store's own interface.
fn stored_executions(db: &Path) -> Result<String, String> {
    use candor::history::{HistoryStore, SqliteStore};
    let store = SqliteStore::open(db, Duration::from_secs(5))
        .map_err(|error| format!("{}: {error}", db.display()))?;
    let runs = store
        .runs(10)
        .map_err(|error| format!("{}: {error}", db.display()))?;
    // The measured run; a history made for (c′) also holds the unmeasured first one.
    let measured: Vec<_> = runs
        .iter()
        .filter(|run| run.run.job.as_deref() != Some("first"))
        .collect();
    Ok(match measured.as_slice() {
        [run] => format!("executions {}", run.executions),
        other => format!("{} runs stored", other.len()),
    })
}

fn remove_database(db: &Path) {
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let mut path = db.as_os_str().to_owned();
        path.push(suffix);
        let _ = std::fs::remove_file(PathBuf::from(path));
    }
}

/// candor's parse must hand over, and the ingest store, exactly the cases the generator
/// wrote (each has a unique id): a bench of a reader that drops test cases measures
/// nothing.
fn counts_agree(generated: &Generated, result: &StageResult) -> bool {
    match result.stage {
        Stage::Parse | Stage::Ingest | Stage::IngestKnown | Stage::IngestOneCore => {
            result.seen() == format!("executions {}", generated.cases)
        }
        Stage::Scan | Stage::QuickJunit => true,
    }
}

fn report(
    options: &Options,
    machine: &[(&'static str, String)],
    generated: &Generated,
    iterations: usize,
    results: &[StageResult],
) -> (String, bool) {
    let mut out = String::new();
    let _ = writeln!(out, "\n## candor ingest benchmark\n");
    let _ = writeln!(out, "| fact | value |\n| --- | --- |");
    for (fact, value) in machine {
        let _ = writeln!(out, "| {fact} | {value} |");
    }
    let _ = writeln!(out, "| load average at end | {} |", measure::load_average());
    let _ = writeln!(
        out,
        "| file | {} test cases ({} failures, {} errors, {} skipped, {} with output), {:.1} MiB, seed {} |",
        generated.cases,
        generated.failures,
        generated.errors,
        generated.skipped,
        generated.with_output,
        mib(generated.bytes),
        options.seed
    );
    let _ = writeln!(
        out,
        "| iterations | {iterations} (median shown, min–max beside it) |"
    );

    let scan_result = results.iter().find(|result| result.stage == Stage::Scan);
    let big_file = options.bytes.is_some();
    let _ = writeln!(
        out,
        "\n| stage | median wall | min–max | MiB/s | × scan | median CPU | CPU × scan CPU (95% CI) | peak RSS | target | met | saw |"
    );
    let _ = writeln!(
        out,
        "| --- | --: | --: | --: | --: | --: | --: | --: | --- | --- | --- |"
    );
    let mut all_met = true;
    for result in results {
        let wall = result.median_wall();
        let (fastest, slowest) = result.spread();
        // Each iteration's stage against the same iteration's scan, seconds apart: the
        // machine's speed drifts between iterations (a shared host's load), and a ratio
        // of two medians taken over different moments carries that drift.
        let ratio = scan_result.map_or(Ratios::default(), |scan| {
            Ratios::paired(&scan.samples, &result.samples, |sample| sample.wall)
        });
        let cpu_ratios = scan_result.map_or(Ratios::default(), |scan| {
            Ratios::paired(&scan.samples, &result.samples, |sample| sample.cpu)
        });
        let (ratio, cpu_ratio) = (ratio.median, cpu_ratios.median);
        let cpu = result.median_cpu();
        let rss_mib = result.median_rss_kib() as f64 / 1024.0;
        let (target, mut met) = match result.stage {
            Stage::Scan | Stage::QuickJunit => ("—".to_string(), None),
            Stage::IngestKnown if big_file => {
                ("peak RSS < 100 MiB".to_string(), Some(rss_mib < 100.0))
            }
            Stage::Parse => ("≤ 2.5× scan".to_string(), Some(ratio <= 2.5)),
            Stage::Ingest if big_file => ("peak RSS < 100 MiB".to_string(), Some(rss_mib < 100.0)),
            Stage::Ingest => (
                "≤ 5× scan (wall and CPU), peak RSS ≤ 64 MiB".to_string(),
                Some(ratio <= 5.0 && cpu_ratio <= 5.0 && rss_mib <= 64.0),
            ),
            Stage::IngestOneCore => (
                "≤ 5× scan (wall and CPU)".to_string(),
                Some(ratio <= 5.0 && cpu_ratio <= 5.0),
            ),
            Stage::IngestKnown => ("peak RSS ≤ 64 MiB".to_string(), Some(rss_mib <= 64.0)),
        };
        if !counts_agree(generated, result) {
            met = Some(false);
        }
        if met == Some(false) {
            all_met = false;
        }
        let _ = writeln!(
            out,
            "| {} | {:.3} s | {:.3}–{:.3} s | {:.0} | {:.2} | {:.3} s | {:.2} ({:.2}–{:.2}) | {:.1} MiB | {} | {} | {} |",
            result.stage.label(),
            wall.as_secs_f64(),
            fastest.as_secs_f64(),
            slowest.as_secs_f64(),
            mib(generated.bytes) / wall.as_secs_f64().max(f64::MIN_POSITIVE),
            ratio,
            cpu.as_secs_f64(),
            cpu_ratio,
            cpu_ratios.low,
            cpu_ratios.high,
            rss_mib,
            target,
            match met {
                Some(true) => "yes",
                Some(false) if counts_agree(generated, result) => "**no**",
                Some(false) => "**no: test cases missing**",
                None => "",
            },
            result.seen().replace('\n', "; ")
        );
    }
    (out, all_met)
}

/// A stage's per-iteration ratios to the scan: their median, and the ratios between which
/// the true median lies with 95% confidence (distribution-free: order statistics of the
/// binomial, so a noisy machine widens the interval instead of moving the verdict).
#[derive(Debug, Clone, Copy)]
struct Ratios {
    median: f64,
    low: f64,
    high: f64,
}

impl Default for Ratios {
    fn default() -> Ratios {
        Ratios {
            median: f64::NAN,
            low: f64::NAN,
            high: f64::NAN,
        }
    }
}

impl Ratios {
    /// `of(stage) / of(scan)` for each iteration both ran in; the median of an even count
    /// is the mean of the middle two. Under six iterations the interval is the range.
    fn paired(scan: &[Sample], stage: &[Sample], of: impl Fn(&Sample) -> Duration) -> Ratios {
        let mut ratios: Vec<f64> = scan
            .iter()
            .zip(stage)
            .filter(|(scan, _)| !of(scan).is_zero())
            .map(|(scan, stage)| of(stage).as_secs_f64() / of(scan).as_secs_f64())
            .collect();
        ratios.sort_by(f64::total_cmp);
        let count = ratios.len();
        if count == 0 {
            return Ratios::default();
        }
        let middle = count / 2;
        let median = if count % 2 == 1 {
            ratios[middle]
        } else {
            f64::midpoint(ratios[middle - 1], ratios[middle])
        };
        // Ranks n/2 ∓ 0.98·√n (1-based): the normal approximation of the binomial's 95%.
        let half_width = 0.98 * (count as f64).sqrt();
        let low_rank = ((count as f64 / 2.0 - half_width).floor() as usize).max(1);
        let high_rank = ((count as f64 / 2.0 + 1.0 + half_width).ceil() as usize).min(count);
        let (low, high) = if count < 6 {
            (ratios[0], ratios[count - 1])
        } else {
            (ratios[low_rank - 1], ratios[high_rank - 1])
        };
        Ratios { median, low, high }
    }
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// One stage, run inside the wrapper so that its peak memory is its own. Prints what it
/// saw, which the report shows and `check_counts` verifies.
fn run_stage(args: &[OsString]) -> ExitCode {
    let (Some(stage), Some(path)) = (args.first().and_then(|a| a.to_str()), args.get(1)) else {
        eprintln!("{STAGE_ARG}: expected a stage name and a file");
        return ExitCode::FAILURE;
    };
    let path = Path::new(path);
    let outcome = match stage {
        "scan" => scan(path).map(|events| format!("events {events}")),
        "parse" => parse(path).map(|executions| format!("executions {executions}")),
        "quick-junit" => quick_junit(path).map(|cases| format!("testcases {cases}")),
        other => Err(format!("unknown stage `{other}`")),
    };
    match outcome {
        Ok(seen) => {
            println!("{seen}");
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("{stage}: {message}");
            ExitCode::FAILURE
        }
    }
}

/// The floor: every XML event read into one reused buffer, nothing decoded or kept.
fn scan(path: &Path) -> Result<u64, String> {
    use quick_xml::events::Event;
    let file = File::open(path).map_err(|error| format!("{}: {error}", path.display()))?;
    let mut reader = quick_xml::Reader::from_reader(BufReader::with_capacity(64 * 1024, file));
    let mut buffer = Vec::with_capacity(64 * 1024);
    let mut events = 0u64;
    loop {
        match reader.read_event_into(&mut buffer) {
            Ok(Event::Eof) => return Ok(events),
            Ok(_) => events += 1,
            Err(error) => {
                return Err(format!("at byte {}: {error}", reader.buffer_position()));
            }
        }
        buffer.clear();
    }
}

fn parse(path: &Path) -> Result<u64, String> {
    let file = File::open(path).map_err(|error| format!("{}: {error}", path.display()))?;
    let mut executions = 0u64;
    candor::results::parse(
        file,
        &candor::results::ParseOptions::default(),
        &mut |_execution| {
            executions += 1;
            Ok(())
        },
    )
    .map_err(|error| error.to_string())?;
    Ok(executions)
}

fn quick_junit(path: &Path) -> Result<u64, String> {
    let file = File::open(path).map_err(|error| format!("{}: {error}", path.display()))?;
    let report = quick_junit::Report::deserialize(BufReader::with_capacity(64 * 1024, file))
        .map_err(|error| error.to_string())?;
    Ok(report
        .test_suites
        .iter()
        .map(|suite| suite.test_cases.len() as u64)
        .sum())
}
