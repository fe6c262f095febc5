//! `candor report`: opens the history and policy, has `app::report` compute, and writes
//! what was asked: the HTML file, the Markdown comment (and the job summary), GitHub
//! annotations, a GitLab Code Quality file.

use std::path::Path;

use jiff::civil::Date;

use super::counted::CountedRuns;
use super::triage::{reds_in_files, reds_in_history};
use super::verdicts::{Judge, Judged};
use super::{Open, open_store};
use crate::cli::error::CliError;
use crate::cli::output::{Printer, human, sink};
use crate::cli::settings::ReportSettings;
use crate::exit_codes;
use crate::history::{HistoryStore, Location, StoredExecution};
use crate::policy::Config;
use crate::report::annotations::{self, Annotation};
use crate::report::markdown::{self, RedRow};
use crate::triage::VerdictKind;

pub(super) fn run(
    settings: &ReportSettings,
    db: &Location,
    repo_root: &Path,
    today: Date,
    printer: &mut Printer,
) -> Result<u8, CliError> {
    let store = open_store(db, Open::Existing)?;
    let config = Config::load(repo_root)?;
    if let Some(path) = &settings.html {
        let mut scope = settings.scope.clone();
        scope.since = settings.since.map(|since| since.resolve(today));
        // Without --branch, the runs reliability counts (the default branch's), so the
        // report's tiers and counts agree with `candor tests` and `candor reliability`.
        let counted = if scope.branch.is_none() {
            let counted = CountedRuns::read(&*store, &config, settings.default_branch.as_ref())?;
            scope.counted = Some(counted.selection.to_string());
            counted.filter().cloned()
        } else {
            None
        };
        let mut sink = sink(printer, human::Later);
        let html = crate::app::report::html_report(
            &*store,
            &config,
            repo_root,
            (scope, counted.as_ref()),
            today,
            &mut sink,
        );
        sink.finish()?;
        let html = html?;
        write_readable(path, &html)?;
        printer.info(&format!(
            "wrote {} ({} KiB)",
            path.display(),
            html.len().div_ceil(1024)
        ))?;
    }
    if settings.markdown || settings.github_annotations || settings.gitlab_codequality.is_some() {
        // Judged under the merge base's policy, as `candor triage` judges by default.
        let judge = Judge::load(
            repo_root,
            &settings.triage.workspace,
            settings.triage.policy,
            false,
            today,
        )?;
        let reds = if settings.triage.files.is_empty() {
            reds_in_history(&*store, db)?
        } else {
            reds_in_files(&settings.triage)?
        };
        // Judged exactly as `candor triage` judges them, history evidence included.
        let history = judge.history(&*store, &settings.triage.workspace);
        let judged: Vec<Judged> = reds
            .into_iter()
            .map(|red| judge.judge_with(red, &history))
            .collect::<Result<_, _>>()?;
        if settings.markdown {
            let merge_base = settings.triage.workspace.merge_base.as_deref();
            let rows: Vec<RedRow> = judged
                .iter()
                .map(|j| red_row(&*store, j, merge_base))
                .collect::<Result<_, _>>()?;
            printer.line(markdown::render(&rows, markdown::COMMENT_LIMIT).trim_end())?;
            if let Some(path) = &settings.step_summary {
                let summary = markdown::render(&rows, markdown::STEP_SUMMARY_LIMIT);
                append(path, &summary)?;
            }
        }
        // Annotated: every red that keeps the change from merging (all but a known flake
        // and a quarantined test's known shape), as the comment counts them.
        let regressions: Vec<Annotation> = judged
            .iter()
            .filter(|j| {
                !matches!(
                    j.verdict.kind,
                    VerdictKind::KnownFlake { .. } | VerdictKind::NotEvidence { .. }
                )
            })
            .map(annotation)
            .collect();
        if settings.github_annotations {
            let text = annotations::github(&regressions);
            if !text.is_empty() {
                printer.line(text.trim_end())?;
            }
        }
        if let Some(path) = &settings.gitlab_codequality {
            write_readable(path, &annotations::gitlab_codequality(&regressions))?;
            printer.info(&format!(
                "wrote {} ({} regressions)",
                path.display(),
                regressions.len()
            ))?;
        }
    }
    Ok(exit_codes::OK)
}

/// Writes atomically, readable by everyone like any other file a job uploads (the
/// temporary file it is renamed from is private).
fn write_readable(path: &Path, text: &str) -> Result<(), CliError> {
    let error = |source| CliError::Write {
        path: path.to_owned(),
        source,
    };
    crate::reliability::write_atomic(path, text).map_err(error)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        fs_err::set_permissions(path, std::fs::Permissions::from_mode(0o644)).map_err(error)?;
    }
    Ok(())
}

fn append(path: &Path, text: &str) -> Result<(), CliError> {
    use std::io::Write as _;
    let mut file = fs_err::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|source| CliError::Write {
            path: path.to_owned(),
            source,
        })?;
    file.write_all(text.as_bytes())
        .map_err(|source| CliError::Write {
            path: path.to_owned(),
            source,
        })
}

/// The Markdown row of one judged red test.
fn red_row(
    store: &dyn HistoryStore,
    judged: &Judged,
    merge_base: Option<&str>,
) -> Result<RedRow, CliError> {
    let test = &judged.red.test_id;
    let history = store.executions(test, usize::MAX)?;
    let ran: Vec<&StoredExecution> = history
        .iter()
        .filter(|e| e.execution.outcome.is_run())
        .collect();
    let history_rate = (!ran.is_empty()).then(|| {
        let red = ran
            .iter()
            .filter(|e| e.execution.outcome.failed_at_least_once())
            .count();
        format!(
            "{:.0}% of {} runs",
            red as f64 * 100.0 / ran.len() as f64,
            ran.len()
        )
    });
    let on_base = merge_base.and_then(|base| {
        let at_base: Vec<&&StoredExecution> = ran
            .iter()
            .filter(|e| e.commit.as_deref() == Some(base))
            .collect();
        if at_base.is_empty() {
            return None;
        }
        let red = at_base
            .iter()
            .filter(|e| e.execution.outcome.failed_at_least_once())
            .count();
        Some(if red == 0 {
            format!("passed {} of {}", at_base.len(), at_base.len())
        } else {
            format!("also red: failed {red} of {}", at_base.len())
        })
    });
    let next = match &judged.verdict.kind {
        VerdictKind::Regression => "fix the code; do not rerun".to_owned(),
        VerdictKind::Unverified => format!("`candor compare {test}`"),
        VerdictKind::KnownFlake { .. } => {
            format!("`candor rerun {test}` (one rerun, ledger line first)")
        }
        VerdictKind::BudgetExceeded { .. } => "no rerun: fix the flake".to_owned(),
        VerdictKind::NotEvidence { .. } => "none: never change production code for it".to_owned(),
        VerdictKind::Expired { .. } => {
            "treat as a regression; a human renews the fingerprint".to_owned()
        }
    };
    Ok(RedRow {
        test: test.clone(),
        verdict: judged.verdict.kind.as_str().to_owned(),
        fingerprint: judged.verdict.kind.fingerprint().map(str::to_owned),
        tier: judged.tier.map(|t| t.as_str().to_owned()),
        on_base,
        history_rate,
        reason: judged.verdict.reason.clone(),
        next,
        failure: judged.red.failure.as_ref().map(|f| f.text.clone()),
    })
}

fn annotation(judged: &Judged) -> Annotation {
    let failure = judged.red.failure.as_ref();
    let frame = failure.and_then(|f| f.failing_frame.as_ref());
    Annotation {
        test: judged.red.test_id.clone(),
        file: frame.map(|f| f.file.clone()),
        line: frame.and_then(|f| f.line),
        message: failure.map_or_else(
            || judged.verdict.reason.clone(),
            |f| match &f.exception {
                Some(exception) => format!("{exception}: {}", f.message),
                None => f.message.clone(),
            },
        ),
        verdict: judged.verdict.kind.as_str().to_owned(),
    }
}
