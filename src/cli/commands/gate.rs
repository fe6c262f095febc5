//! `candor gate`: the merge lane's I/O — the change and the base's policy from git, the
//! touched tests from the runner's listing, the replays (one runner process each, pinned
//! seed and environment, inside the lane's time), the report and the step summary. The
//! verdict itself is `gate::lane::lane_verdict`.

use crate::history::Location;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use jiff::civil::Date;

use super::running::{RunPlace, run_record, scratch};
use super::{Open, open_store};
use crate::classify::{Bucket, classify};
use crate::cli::error::CliError;
use crate::cli::output::{Printer, terminal_safe};
use crate::cli::settings::GateSettings;
use crate::exit_codes;
use crate::gate::diff::{Diff, FileStatus};
use crate::gate::lane::{
    self, LaneFindings, ReplayRun, SCHEMA, ScoreReport, TouchedReport, deterministic, lane_verdict,
};
use crate::gate::touched::{ChangedTestFile, TouchedTest, touched_tests};
use crate::gate::{self, files};
use crate::git::Git;
use crate::history::Source;
use crate::policy::Config;
use crate::records::{self, RunRecord, Side};
use crate::results::ParseOptions;
use crate::runner::process::SystemExecutor;
use crate::runner::{self, Adapter, RunOptions, SeedSupport};

pub(super) fn run(
    settings: &GateSettings,
    db: &Location,
    repo_root: &Path,
    today: Date,
    printer: &mut Printer,
) -> Result<u8, CliError> {
    let started = Instant::now();
    // Refused before any replay: the report must not follow a symlink out (#14 item 8).
    crate::confine::check_write_if_under(repo_root, &settings.report)?;
    let head = settings.change.head.clone().map_err(CliError::NoChange)?;
    let base = settings.change.base.clone().map_err(CliError::NoChange)?;
    let git = Git::new(repo_root);
    let policy = gate::base_policy(&git, &base)?;
    let diff = gate::read_change(&git, &base, &head)?;
    let human_owned = gate::human_owned_changes(&git, &base, &head, &policy, &diff)?;
    let findings = gate::lint(&git, &base, &diff, &policy)?;
    let fixture_drift = gate::fixture_drift(&git, &head, &policy.lane)?;
    let cassettes = gate::cassette_check(&git, &base, &head, &policy.lane)?;

    let changed = changed_test_files(&git, &base, &head, &diff)?;
    if !changed.is_empty() && git.has_tracked_changes()? {
        printer.warning(
            "tracked files differ from HEAD: the replays run the working tree, the report judges HEAD; commit or stash first",
        )?;
    }
    let lane_time = Duration::from_secs(u64::from(policy.lane.max_wall_seconds));
    let mut replays = Replays::default();
    let mut touched = Vec::new();
    let mut listing_seconds = None;
    if !changed.is_empty() {
        let dir = scratch(repo_root, "gate")?;
        let executor = SystemExecutor;
        let listing_context = runner::Context::new(repo_root, dir.join("listing"), &executor)
            .with_timeout(Some(policy.runner.timeout), policy.runner.grace)
            .with_pinned_environment();
        printer.progress("listing the tests of the changed test files…")?;
        let listing_started = Instant::now();
        let adapter = runner::adapter(&policy.runner, &listing_context)?;
        let listed = adapter.list(&listing_context)?;
        listing_seconds = Some(listing_started.elapsed().as_secs_f64());
        touched = touched_tests(adapter.kind(), &listed, &changed);
        let seed = match adapter.seed_support() {
            SeedSupport::Controls(_) => Some(pinned_seed(&head)),
            SeedSupport::None(_) => None,
        };
        replays = replay(
            &ReplayPlan {
                adapter: &*adapter,
                executor: &executor,
                repo_root,
                dir: &dir,
                head: &head,
                seed,
                policy: &policy,
                lane_time,
                started,
            },
            &touched,
            printer,
        )?;
        store_replays(db, settings, &replays.records, repo_root)?;
    }

    let classified = classify(&replays.records);
    // Replayed, yet no replay ran it: every one was a skip.
    let skipped: Vec<String> = touched
        .iter()
        .filter(|t| replays.records.iter().any(|r| r.test == t.id))
        .filter(|t| !classified.iter().any(|c| c.test == t.id))
        .map(|t| t.id.clone())
        .collect();
    let verdict = lane_verdict(&LaneFindings {
        findings: &findings,
        fixture_drift: &fixture_drift,
        cassettes: Some(&cassettes),
        human_owned: &human_owned,
        approved_by: settings.approved_by.as_deref(),
        replays: &classified,
        skipped: &skipped,
        replays_left: replays.left,
        max_wall_seconds: policy.lane.max_wall_seconds,
    });
    let touched_reports: Vec<TouchedReport> = touched
        .iter()
        .map(|test| TouchedReport {
            test: test.clone(),
            bucket: classified
                .iter()
                .find(|c| c.test == test.id)
                .map(|c| c.bucket),
        })
        .collect();
    let runs: Vec<ReplayRun> = replays
        .records
        .iter()
        .map(|record| ReplayRun {
            test: record.test.clone(),
            replay: record.sequence,
            seed: record.seed,
            outcome: record.outcome,
            exit_code: record.exit_status,
            seconds: record.wall_seconds,
            log: record.log.display().to_string(),
        })
        .collect();
    let touched_ids: Vec<&str> = touched.iter().map(|t| t.id.as_str()).collect();
    let report = ScoreReport {
        schema: SCHEMA,
        lane: "merge",
        flake_budget: 0,
        base: &base,
        head: &head,
        pass: verdict.pass,
        deterministic: deterministic(&classified),
        reasons: &verdict.reasons,
        min_replays: policy.lane.min_replays,
        seed: replays.seed,
        max_wall_seconds: policy.lane.max_wall_seconds,
        wall_seconds: started.elapsed().as_secs_f64(),
        listing_seconds,
        touched: &touched_reports,
        runs: &runs,
        findings: &findings,
        fixture_drift: &fixture_drift,
        human_owned: &human_owned,
        approvals: &verdict.approvals,
        freezes_in_force: gate::freeze::in_force(&policy.freezes, today, |test| {
            touched_ids.contains(&test)
        })
        .into_iter()
        .map(|freeze| freeze.test.clone())
        .collect(),
    };
    write_report(&settings.report, &report)?;
    if let Some(summary) = &settings.step_summary {
        append_summary(summary, &lane::markdown(&report))?;
    }
    print(printer, &report, &settings.report)?;
    Ok(if verdict.pass {
        exit_codes::OK
    } else {
        exit_codes::NEGATIVE
    })
}

/// The seed every replay of this change is pinned to: from HEAD's sha, so the same change
/// replays the same way on every CI run, below 2^32 for every runner.
fn pinned_seed(head: &str) -> u64 {
    u64::from_str_radix(head.get(..8).unwrap_or("0"), 16).unwrap_or(0) % (1 << 32)
}

/// Test files the change added or modified, with their text at both ends.
fn changed_test_files(
    git: &Git,
    base: &str,
    head: &str,
    diff: &Diff,
) -> Result<Vec<ChangedTestFile>, CliError> {
    let mut changed = Vec::new();
    for file in &diff.files {
        if file.binary || file.status == FileStatus::Deleted || !files::is_test_file(&file.path) {
            continue;
        }
        let text = |revision: &str| -> Result<Option<String>, CliError> {
            Ok(git
                .show(revision, &file.path)?
                .map(|bytes| String::from_utf8_lossy(&bytes).into_owned()))
        };
        let Some(head_text) = text(head)? else {
            continue;
        };
        let base_text = if file.status == FileStatus::Added {
            None
        } else {
            text(base)?
        };
        changed.push(ChangedTestFile {
            path: file.path.clone(),
            head_text,
            base_text,
        });
    }
    Ok(changed)
}

struct ReplayPlan<'a> {
    adapter: &'a dyn Adapter,
    executor: &'a SystemExecutor,
    repo_root: &'a Path,
    dir: &'a Path,
    head: &'a str,
    seed: Option<u64>,
    policy: &'a Config,
    lane_time: Duration,
    started: Instant,
}

#[derive(Default)]
struct Replays {
    records: Vec<RunRecord>,
    /// Replays not made because the lane's time ran out.
    left: u32,
    seed: Option<u64>,
}

/// Every touched test `min_replays` times, sequentially, same seed, pinned environment,
/// ignoring freezes, quarantine and tiers. Each process gets at most the lane's time left.
fn replay(
    plan: &ReplayPlan<'_>,
    touched: &[TouchedTest],
    printer: &mut Printer,
) -> Result<Replays, CliError> {
    let min_replays = plan.policy.lane.min_replays;
    let total = u32::try_from(touched.len())
        .unwrap_or(u32::MAX)
        .saturating_mul(min_replays);
    let bar = printer.progress_bar(u64::from(total));
    let mut replays = Replays {
        seed: plan.seed,
        ..Replays::default()
    };
    let parse = ParseOptions {
        repo_root: Some(plan.repo_root.to_string_lossy().into_owned()),
        ..ParseOptions::default()
    };
    let records_dir = plan.dir.join("records");
    let mut made = 0;
    'tests: for test in touched {
        for replay in 1..=min_replays {
            let left = plan.lane_time.saturating_sub(plan.started.elapsed());
            if left.is_zero() {
                break 'tests;
            }
            bar.set_message(format!("replay {replay} of {}", test.id));
            let context = runner::Context::new(
                plan.repo_root,
                plan.dir.join(format!("{:03}", made + 1)),
                plan.executor,
            )
            .with_timeout(
                Some(plan.policy.runner.timeout.min(left)),
                plan.policy.runner.grace,
            )
            .with_pinned_environment();
            let lane_bound = left < plan.policy.runner.timeout;
            let report =
                plan.adapter
                    .run_one(&context, &test.id, RunOptions { seed: plan.seed })?;
            let (mut record, _) = run_record(
                &RunPlace {
                    test: &test.id,
                    side: Side::Replay,
                    sequence: replay,
                    root: plan.repo_root,
                    commit: plan.head,
                    fixtures: &plan.policy.lane.fixtures,
                    new_test: test.new,
                },
                &report,
                &parse,
            )?;
            // Stopped by the lane's clock, not by the runner's own limit: a replay not made,
            // not a red one.
            if record.timed_out && lane_bound {
                break 'tests;
            }
            // Record files are numbered by their place in the whole lane.
            made += 1;
            let file_record = RunRecord {
                sequence: made,
                ..record.clone()
            };
            records::write(&records_dir, &file_record).map_err(|source| CliError::Write {
                path: records_dir.clone(),
                source,
            })?;
            record.sequence = replay;
            replays.records.push(record);
            bar.inc(1);
        }
    }
    bar.finish_and_clear();
    replays.left = total.saturating_sub(made);
    Ok(replays)
}

/// Stores each replay's report in the history as a `gate` run.
fn store_replays(
    db: &Location,
    settings: &GateSettings,
    records: &[RunRecord],
    repo_root: &Path,
) -> Result<(), CliError> {
    let mut store = open_store(db, Open::CreateIfMissing)?;
    let parse = ParseOptions {
        repo_root: Some(repo_root.to_string_lossy().into_owned()),
        ..ParseOptions::default()
    };
    for record in records {
        if !fs_err::metadata(&record.report).is_ok_and(|m| m.len() > 0) {
            continue;
        }
        let run = crate::history::NewRun {
            commit: record.commit.clone(),
            branch: settings.workspace.branch.clone(),
            merge_base: settings.change.base.clone().ok(),
            started_at: record.started_at,
            source: Source::Gate,
            ci_provider: settings
                .workspace
                .ci
                .provider
                .map(|p| p.as_str().to_owned()),
            job: settings.workspace.ci.job.clone(),
            workers: Some(1),
            seed: record.seed.map(|s| s.to_string()),
            conditions: crate::history::Conditions {
                ci: settings.workspace.ci.detected,
                runner: None,
                os: Some(std::env::consts::OS.to_owned()),
            },
            format: None,
            producer: None,
            source_path: Some(record.report.display().to_string()),
        };
        crate::ingest::ingest_file(&mut *store, &record.report, &run, &parse)
            .map_err(CliError::Results)?;
    }
    Ok(())
}

fn write_report(path: &Path, report: &ScoreReport<'_>) -> Result<(), CliError> {
    let write_error = |source| CliError::Write {
        path: path.to_owned(),
        source,
    };
    let mut text = serde_json::to_string_pretty(report).map_err(|e| write_error(e.into()))?;
    text.push('\n');
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map_or_else(|| PathBuf::from("."), Path::to_owned);
    fs_err::create_dir_all(&dir).map_err(write_error)?;
    let mut file = tempfile::NamedTempFile::new_in(&dir).map_err(write_error)?;
    std::io::Write::write_all(&mut file, text.as_bytes()).map_err(write_error)?;
    file.persist(path).map_err(|e| write_error(e.error))?;
    Ok(())
}

fn append_summary(path: &Path, markdown: &str) -> Result<(), CliError> {
    use std::io::Write as _;
    let write_error = |source| CliError::Write {
        path: path.to_owned(),
        source,
    };
    let mut file = fs_err::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(write_error)?;
    file.write_all(markdown.as_bytes()).map_err(write_error)?;
    Ok(())
}

fn print(printer: &mut Printer, report: &ScoreReport<'_>, path: &Path) -> Result<(), CliError> {
    if printer.is_json() {
        #[derive(serde::Serialize)]
        struct GateLine<'a> {
            #[serde(flatten)]
            report: &'a ScoreReport<'a>,
            report_path: &'a Path,
        }
        printer.json(
            "gate",
            &GateLine {
                report,
                report_path: path,
            },
        )?;
        return Ok(());
    }
    let short = |sha: &str| sha.get(..12).unwrap_or(sha).to_owned();
    printer.line(&format!(
        "gate: {} (merge lane, flake budget 0; {}..{}, policy from the base)",
        if report.pass { "accepted" } else { "rejected" },
        short(report.base),
        short(report.head)
    ))?;
    for touched in report.touched {
        let runs: Vec<_> = report
            .runs
            .iter()
            .filter(|r| r.test == touched.test.id)
            .collect();
        let failed = runs.iter().filter(|r| r.outcome.is_red()).count();
        printer.line(&format!(
            "  touched: {}{}: {} of {} replays failed [{}]",
            terminal_safe(&touched.test.id),
            if touched.test.new { " (new)" } else { "" },
            failed,
            runs.len(),
            touched.bucket.map_or("not run", Bucket::as_str)
        ))?;
    }
    for finding in report.findings {
        printer.line(&format!(
            "  {}:{}: {}: {}",
            terminal_safe(&finding.file),
            finding.line,
            finding.rule,
            terminal_safe(&finding.reason)
        ))?;
    }
    for reason in report.reasons {
        printer.line(&format!(
            "  rejected: {}",
            terminal_safe(&reason.describe())
        ))?;
    }
    for approval in report.approvals {
        printer.line(&format!(
            "  approved by {}: {}",
            terminal_safe(&approval.by),
            terminal_safe(&approval.approved.join(", "))
        ))?;
    }
    printer.info(&format!("report: {}", path.display()))?;
    Ok(())
}
