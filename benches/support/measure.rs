//! Wall time and peak resident memory of one command, measured in a fresh wrapper process.
//!
//! `getrusage(RUSAGE_CHILDREN)` reports the largest `ru_maxrss` of every child a process
//! has ever waited for, so one long-lived parent cannot tell its fifth child's peak from
//! its first's. Each measurement therefore runs through a short-lived wrapper (this same
//! executable, started with [`WRAPPER_ARG`]) that has exactly one child: its
//! `RUSAGE_CHILDREN` maximum is that child's peak. The crate forbids `unsafe`, so the
//! call goes through `nix`'s safe `getrusage` rather than `libc`.

use std::ffi::OsString;
use std::path::Path;
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use nix::sys::resource::{UsageWho, getrusage};

/// First argument that turns the bench executable into the measuring wrapper.
pub const WRAPPER_ARG: &str = "__measure";

const REPORT_PREFIX: &str = "__measured ";

/// One run of one command.
#[derive(Debug, Clone)]
pub struct Sample {
    /// From spawn to exit, as seen by the wrapper.
    pub wall: Duration,
    /// Peak resident set size of the command, in KiB.
    #[allow(
        dead_code,
        reason = "every bench includes this module; not every one reports memory"
    )]
    pub peak_rss_kib: u64,
    /// CPU time of the command (user and system, all its threads): unlike wall time, it
    /// does not grow when other work on the machine takes the cores.
    #[allow(
        dead_code,
        reason = "every bench includes this module; not every one reports CPU time"
    )]
    pub cpu: Duration,
    /// What the command printed on stdout.
    pub stdout: String,
}

/// Runs `program args…` under the wrapper and returns its sample, or what it printed when
/// it failed.
pub fn measure(program: &Path, args: &[OsString], current_dir: &Path) -> Result<Sample, String> {
    let wrapper = std::env::current_exe().map_err(|error| format!("no current exe: {error}"))?;
    let output = Command::new(wrapper)
        .arg(WRAPPER_ARG)
        .arg(program)
        .args(args)
        .current_dir(current_dir)
        .stdin(Stdio::null())
        .output()
        .map_err(|error| format!("could not start the wrapper: {error}"))?;
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    if !output.status.success() {
        return Err(format!(
            "`{} {}` failed ({}):\n{}\n{}",
            program.display(),
            args.iter()
                .map(|arg| arg.to_string_lossy())
                .collect::<Vec<_>>()
                .join(" "),
            output.status,
            stdout.trim_end(),
            String::from_utf8_lossy(&output.stderr).trim_end()
        ));
    }
    let report_at = stdout
        .rfind(REPORT_PREFIX)
        .ok_or_else(|| format!("the wrapper printed no measurement:\n{stdout}"))?;
    let report = stdout[report_at..].lines().next().unwrap_or_default();
    let mut fields = report[REPORT_PREFIX.len()..].split_whitespace();
    let mut number = |what: &str| -> Result<u64, String> {
        fields
            .next()
            .and_then(|field| field.parse().ok())
            .ok_or_else(|| format!("the wrapper's report has no {what}: {report}"))
    };
    let wall = Duration::from_nanos(number("wall time")?);
    let peak_rss_kib = number("peak RSS")?;
    let cpu = Duration::from_nanos(number("CPU time")?);
    Ok(Sample {
        wall,
        peak_rss_kib,
        cpu,
        stdout: stdout[..report_at].to_string(),
    })
}

/// The wrapper: runs `args[0] args[1..]`, then prints wall time (ns), the child's peak
/// RSS (KiB) and its CPU time (ns) on the last line. Exits non-zero when the child did.
pub fn run_wrapper(args: &[OsString]) -> ExitCode {
    let Some((program, rest)) = args.split_first() else {
        eprintln!("{WRAPPER_ARG}: no command given");
        return ExitCode::FAILURE;
    };
    let started = Instant::now();
    let status = Command::new(program)
        .args(rest)
        .stdin(Stdio::null())
        .status();
    let wall = started.elapsed();
    let status = match status {
        Ok(status) => status,
        Err(error) => {
            eprintln!(
                "{WRAPPER_ARG}: could not run {}: {error}",
                program.to_string_lossy()
            );
            return ExitCode::FAILURE;
        }
    };
    let usage = match getrusage(UsageWho::RUSAGE_CHILDREN) {
        Ok(usage) => usage,
        Err(error) => {
            eprintln!("{WRAPPER_ARG}: getrusage failed: {error}");
            return ExitCode::FAILURE;
        }
    };
    // Linux reports ru_maxrss in KiB, macOS in bytes.
    let peak = u64::try_from(usage.max_rss()).unwrap_or(0);
    let peak_kib = if cfg!(target_os = "macos") {
        peak / 1024
    } else {
        peak
    };
    let cpu = [usage.user_time(), usage.system_time()]
        .iter()
        .map(|time| {
            let micros = time.tv_sec() * 1_000_000 + time.tv_usec();
            Duration::from_micros(u64::try_from(micros).unwrap_or(0))
        })
        .sum::<Duration>();
    println!(
        "{REPORT_PREFIX}{} {peak_kib} {}",
        wall.as_nanos(),
        cpu.as_nanos()
    );
    if status.success() {
        ExitCode::SUCCESS
    } else {
        eprintln!("{WRAPPER_ARG}: the command exited with {status}");
        ExitCode::FAILURE
    }
}

/// The median of `values` (the lower middle one for an even count); `None` when empty.
pub fn median<T: Copy + Ord>(values: &[T]) -> Option<T> {
    let mut sorted = values.to_vec();
    sorted.sort_unstable();
    sorted.get(sorted.len().saturating_sub(1) / 2).copied()
}

/// Facts about the machine that a reader needs to compare numbers across runs.
pub fn machine_facts() -> Vec<(&'static str, String)> {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu = cpuinfo
        .lines()
        .find_map(|line| line.strip_prefix("model name"))
        .and_then(|rest| rest.split_once(':'))
        .map_or_else(
            || "unknown".to_string(),
            |(_, model)| model.trim().to_string(),
        );
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let memory = meminfo
        .lines()
        .find_map(|line| line.strip_prefix("MemTotal:"))
        .and_then(|rest| rest.trim().strip_suffix("kB"))
        .and_then(|kib| kib.trim().parse::<u64>().ok())
        .map_or_else(
            || "unknown".to_string(),
            |kib| format!("{:.1} GiB", kib as f64 / 1_048_576.0),
        );
    let nproc = std::thread::available_parallelism()
        .map_or_else(|_| "unknown".to_string(), |count| count.to_string());
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map_or_else(|_| "unknown".to_string(), |text| text.trim().to_string());
    let rustc = Command::new("rustc")
        .arg("-V")
        .output()
        .ok()
        .map(|output| String::from_utf8_lossy(&output.stdout).trim().to_string())
        .filter(|text| !text.is_empty())
        .unwrap_or_else(|| "unknown".to_string());
    let commit = Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|output| output.status.success())
        .map_or_else(
            || "unknown".to_string(),
            |output| String::from_utf8_lossy(&output.stdout).trim().to_string(),
        );
    vec![
        ("nproc", nproc),
        ("CPU", cpu),
        ("memory", memory),
        ("kernel", kernel),
        ("rustc", rustc),
        ("candor commit", commit),
        ("load average at start", load_average()),
    ]
}

/// `/proc/loadavg`'s first three fields: other work on the machine skews timings.
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg").map_or_else(
        |_| "unknown".to_string(),
        |text| {
            text.split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(" ")
        },
    )
}
