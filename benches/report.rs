//! `cargo bench --bench report`: a generated history of 10,000 tests × 200 runs in a real
//! SQLite store (benches/support/history_gen.rs), then `candor report --html` (the release
//! binary, as a child process): wall time (median), peak memory and file size; and, where
//! Debian's chromium and Python's playwright are installed, the time to the load event in
//! headless Chromium (tests/browser/check_report.py). Prints a Markdown table; see
//! docs/benchmarks.md.

#[path = "support/history_gen.rs"]
mod history_gen;
#[path = "support/measure.rs"]
mod measure;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

use clap::Parser;

#[derive(Debug, Parser)]
#[command(about = "Measures `candor report --html` on a large generated history")]
struct Options {
    /// Tests in the history.
    #[arg(long, default_value_t = 10_000)]
    tests: usize,
    /// Runs in the history.
    #[arg(long, default_value_t = 200)]
    runs: usize,
    /// Generator seed (printed).
    #[arg(long, default_value_t = 0x4E90_47)]
    seed: u64,
    /// Timed runs; the table shows the median.
    #[arg(long, default_value_t = 3)]
    iterations: usize,
    /// Keep the generated history in this directory instead of a temp dir.
    #[arg(long)]
    keep_in: Option<PathBuf>,
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

fn release_binary() -> Result<PathBuf, String> {
    let status = Command::new(env!("CARGO"))
        .args(["build", "--release", "--quiet", "--bin", "candor"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .map_err(|e| e.to_string())?;
    if !status.success() {
        return Err("cargo build --release failed".into());
    }
    Ok(Path::new(env!("CARGO_MANIFEST_DIR")).join("target/release/candor"))
}

fn run(options: &Options) -> Result<(), String> {
    let binary = release_binary()?;
    let temporary = tempfile::tempdir().map_err(|e| e.to_string())?;
    let dir = match &options.keep_in {
        Some(dir) => {
            std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
            dir.clone()
        }
        None => temporary.path().to_owned(),
    };
    let dir = dir.as_path();
    let status = Command::new("git")
        .args(["init", "-q", "-b", "main"])
        .current_dir(dir)
        .status()
        .map_err(|e| e.to_string())?;
    if !status.success() {
        return Err("git init failed".into());
    }
    eprintln!(
        "generating {} tests × {} runs (seed {})…",
        options.tests, options.runs, options.seed
    );
    let started = Instant::now();
    history_gen::generate(
        dir,
        &history_gen::Shape {
            tests: options.tests,
            runs: options.runs,
            seed: options.seed,
        },
    );
    eprintln!("generated in {:.1} s", started.elapsed().as_secs_f64());

    let mut walls = Vec::new();
    let mut peaks = Vec::new();
    for _ in 0..options.iterations {
        let sample = measure::measure(
            &binary,
            &["report".into(), "--html".into(), "report.html".into()],
            dir,
        )?;
        eprint!("{}", sample.stdout);
        walls.push(sample.wall);
        peaks.push(sample.peak_rss_kib);
    }
    let wall = measure::median(&walls).unwrap_or_default();
    let peak = peaks.iter().copied().max().unwrap_or_default();
    let size = std::fs::metadata(dir.join("report.html"))
        .map_err(|e| e.to_string())?
        .len();

    let load = browser_load(&binary, dir);
    for (fact, value) in measure::machine_facts() {
        println!("{fact}: {value}");
    }
    println!("load average: {}", measure::load_average());
    println!();
    println!(
        "| history | report build (median of {}) | peak RSS | file size | load event in Chromium | target |",
        options.iterations
    );
    println!("| --- | --: | --: | --: | --: | --- |");
    println!(
        "| {} tests × {} runs | {:.2} s | {:.1} MiB | {:.2} MiB | {} | build ≤ 2 s, file ≤ 5 MiB, load ≤ 1 s |",
        options.tests,
        options.runs,
        wall.as_secs_f64(),
        peak as f64 / 1024.0,
        size as f64 / (1024.0 * 1024.0),
        load.unwrap_or_else(|why| format!("not measured: {why}"))
    );
    Ok(())
}

/// The load event's time, as the browser check prints it.
fn browser_load(binary: &Path, dir: &Path) -> Result<String, String> {
    if !Path::new("/usr/bin/chromium").exists() {
        return Err("no /usr/bin/chromium".into());
    }
    let listing = Command::new(binary)
        .args(["tests", "--format", "json"])
        .current_dir(dir)
        .output()
        .map_err(|e| e.to_string())?;
    std::fs::write(dir.join("tests.jsonl"), &listing.stdout).map_err(|e| e.to_string())?;
    let output = Command::new("python3")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser/check_report.py"))
        .arg("/usr/bin/chromium")
        .arg(dir.join("report.html"))
        .arg(dir.join("tests.jsonl"))
        .arg(dir.join("report.png"))
        .output()
        .map_err(|e| e.to_string())?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let load = stdout
        .split("load: ")
        .nth(1)
        .and_then(|rest| rest.split(',').next())
        .ok_or_else(|| format!("the browser check said: {stdout}"))?;
    if !output.status.success() {
        return Err(format!("the browser check failed: {stdout}"));
    }
    Ok(load.to_owned())
}
