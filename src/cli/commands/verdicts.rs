//! What `triage`, `test` and `rerun` share: the policy a red test is judged under
//! (candor.toml, the reliability file, the ledger, the change and today), the conditions
//! of the run that produced it, and how verdicts are printed. The verdict itself is
//! `crate::triage`'s.

use std::io;
use std::path::{Path, PathBuf};

use jiff::civil::Date;
use serde::Serialize;

use crate::cli::error::CliError;
use crate::cli::output::{Printer, Style, short, terminal_safe};
use crate::exit_codes;
use crate::history::NewRun;
use crate::ledger::Ledger;
use crate::policy::{Config, RunConditions};
use crate::reliability::ReliabilityFile;
use crate::results::{Failure, Outcome};
use crate::stats::tiers::Tier;
use crate::triage::{TriageInput, Verdict, VerdictKind, tier_of, verdict};

/// Everything a verdict depends on besides the red test itself.
pub(super) struct Judge {
    /// `candor.toml`.
    pub config: Config,
    reliability: ReliabilityFile,
    ledger: Ledger,
    change: Vec<String>,
    today: Date,
}

impl Judge {
    /// Reads candor.toml, the reliability file and the ledger at `repo_root`.
    pub fn load(repo_root: &Path, change: &[String], today: Date) -> Result<Judge, CliError> {
        let config = Config::load(repo_root)?;
        let reliability = ReliabilityFile::load(&repo_root.join(&config.reliability.file))?;
        let ledger = Ledger::load(&repo_root.join(&config.rerun.ledger))?;
        Ok(Judge {
            config,
            reliability,
            ledger,
            change: change.to_vec(),
            today,
        })
    }

    /// The verdict for `red` with the ledger as read.
    pub fn judge(&self, red: Red) -> Judged {
        self.judge_against(&self.ledger, red)
    }

    /// The verdict for `red` against `ledger` (a fresher read, under the ledger's lock).
    pub fn judge_against(&self, ledger: &Ledger, red: Red) -> Judged {
        let tier = tier_of(&self.reliability, &red.test_id);
        let budget = ledger.budget(&red.test_id, self.today, &self.change, &self.config.rerun);
        let verdict = verdict(&TriageInput {
            test_id: &red.test_id,
            tier,
            failure: red.failure.as_ref(),
            run: &red.conditions,
            fingerprints: &self.config.fingerprints,
            budget,
            rerun: &self.config.rerun,
            today: self.today,
        });
        Judged { red, tier, verdict }
    }
}

/// A red test to judge.
#[derive(Debug, Clone)]
pub(super) struct Red {
    /// Canonical id.
    pub test_id: String,
    /// Fail or error.
    pub outcome: Outcome,
    /// What the runner said, when it did.
    pub failure: Option<Failure>,
    /// The run it went red in.
    pub conditions: RunConditions,
    /// Where it was read.
    pub origin: Origin,
}

/// Where a red test was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Origin {
    /// A result file, not stored.
    File(PathBuf),
    /// A run in the history.
    Run(i64),
}

/// A red test and its verdict.
#[derive(Debug, Clone)]
pub(super) struct Judged {
    /// The test.
    pub red: Red,
    /// Its tier; `None` when the reliability file does not list it.
    pub tier: Option<Tier>,
    /// The verdict.
    pub verdict: Verdict,
}

/// The conditions fingerprints see for a stored run. A run stored by `candor ingest`
/// names no runner; the tool that wrote its file stands in for it.
pub(super) fn run_conditions(run: &NewRun) -> RunConditions {
    let mut conditions = RunConditions::from(run);
    if conditions.runner.is_none() {
        conditions.runner = run.producer.as_deref().map(runner_name);
    }
    conditions
}

/// The `runner` condition's spelling for the tool that wrote a result file: candor's own
/// runner names where one fits (`pytest`, `cargo`, `nextest`, `go`), else the tool's name.
pub(super) fn runner_name(producer: &str) -> String {
    match producer {
        "libtest" | "cargo2junit" => "cargo",
        "go test" | "go-junit-report" | "gotestsum" => "go",
        other => other,
    }
    .to_owned()
}

/// Exit 1 when any verdict is regression, expired or budget-exceeded, else 0.
pub(super) fn exit_code(judged: &[Judged]) -> u8 {
    if judged.iter().any(|j| j.verdict.is_negative()) {
        exit_codes::NEGATIVE
    } else {
        exit_codes::OK
    }
}

/// `{"type":"verdict"}`: see docs/json-output.md.
#[derive(Serialize)]
struct VerdictLine<'a> {
    test: &'a str,
    verdict: &'static str,
    tier: Option<Tier>,
    fingerprint: Option<&'a str>,
    signature: Option<String>,
    reason: &'a str,
    outcome: Outcome,
    file: Option<String>,
    run_id: Option<i64>,
    rerun_allowed: bool,
    label: Option<&'static str>,
    failure: Option<FailureBody<'a>>,
}

#[derive(Serialize)]
struct FailureBody<'a> {
    exception: Option<&'a str>,
    message: &'a str,
    failing_frame: Option<String>,
    text: &'a str,
}

/// `{"type":"triage-summary"}`: see docs/json-output.md.
#[derive(Serialize, Default)]
pub(super) struct SummaryLine {
    red: usize,
    regression: usize,
    unverified: usize,
    known_flake: usize,
    budget_exceeded: usize,
    not_evidence: usize,
    expired: usize,
}

impl SummaryLine {
    pub fn of(judged: &[Judged]) -> SummaryLine {
        let mut summary = SummaryLine {
            red: judged.len(),
            ..SummaryLine::default()
        };
        for j in judged {
            let count = match j.verdict.kind {
                VerdictKind::Regression => &mut summary.regression,
                VerdictKind::Unverified => &mut summary.unverified,
                VerdictKind::KnownFlake { .. } => &mut summary.known_flake,
                VerdictKind::BudgetExceeded { .. } => &mut summary.budget_exceeded,
                VerdictKind::NotEvidence { .. } => &mut summary.not_evidence,
                VerdictKind::Expired { .. } => &mut summary.expired,
            };
            *count += 1;
        }
        summary
    }

    /// `3 red tests: 1 regression, 2 known-flake`.
    fn human(&self) -> String {
        if self.red == 0 {
            return "no red tests".to_owned();
        }
        let parts: Vec<String> = [
            (self.regression, "regression"),
            (self.expired, "expired"),
            (self.budget_exceeded, "budget-exceeded"),
            (self.unverified, "unverified"),
            (self.known_flake, "known-flake"),
            (self.not_evidence, "not-evidence"),
        ]
        .iter()
        .filter(|(count, _)| *count > 0)
        .map(|(count, name)| format!("{count} {name}"))
        .collect();
        let tests = if self.red == 1 { "test" } else { "tests" };
        format!("{} red {tests}: {}", self.red, parts.join(", "))
    }
}

fn style(kind: &VerdictKind) -> Style {
    match kind {
        VerdictKind::Regression
        | VerdictKind::Expired { .. }
        | VerdictKind::BudgetExceeded { .. } => Style::Red,
        VerdictKind::Unverified | VerdictKind::KnownFlake { .. } => Style::Yellow,
        VerdictKind::NotEvidence { .. } => Style::Dim,
    }
}

/// One verdict: a JSON line, or for people a heading line, the reason, and for a
/// regression or an expired fingerprint the whole failure.
pub(super) fn print_verdict(printer: &mut Printer, judged: &Judged) -> io::Result<()> {
    let red = &judged.red;
    let verdict = &judged.verdict;
    let failure = red.failure.as_ref();
    if printer.is_json() {
        let (file, run_id) = match &red.origin {
            Origin::File(path) => (Some(path.display().to_string()), None),
            Origin::Run(id) => (None, Some(*id)),
        };
        return printer.json(
            "verdict",
            &VerdictLine {
                test: &red.test_id,
                verdict: verdict.kind.as_str(),
                tier: judged.tier,
                fingerprint: verdict.kind.fingerprint(),
                signature: failure.map(Failure::signature),
                reason: &verdict.reason,
                outcome: red.outcome,
                file,
                run_id,
                rerun_allowed: verdict.rerun_allowed(),
                label: verdict.label(),
                failure: failure.map(|f| FailureBody {
                    exception: f.exception.as_deref(),
                    message: &f.message,
                    failing_frame: f
                        .failing_frame
                        .as_ref()
                        .map(crate::results::Frame::location),
                    text: &f.text,
                }),
            },
        );
    }
    let color = printer.color_stdout();
    let name = match verdict.kind.fingerprint() {
        Some(id) => format!("{} {id}", verdict.kind.as_str()),
        None => verdict.kind.as_str().to_owned(),
    };
    let tier = judged.tier.map_or("unlisted", Tier::as_str);
    printer.line(&format!(
        "{}  {}  [{tier}]",
        style(&verdict.kind).paint(&name, color),
        terminal_safe(&red.test_id)
    ))?;
    printer.line(&format!("  why: {}", terminal_safe(&verdict.reason)))?;
    if let Some(label) = verdict.label() {
        printer.line(&format!("  label: {label}"))?;
    }
    let full = matches!(
        verdict.kind,
        VerdictKind::Regression | VerdictKind::Expired { .. }
    );
    if let (true, Some(failure)) = (full, failure) {
        print_failure(printer, failure)?;
    } else if full {
        printer.line("  failure: the runner gave no details")?;
    }
    Ok(())
}

/// Lines of a failure's text a terminal shows (the rest is counted; `--full` shows all).
const FAILURE_LINES: usize = 24;

fn print_failure(printer: &mut Printer, failure: &Failure) -> io::Result<()> {
    let head = match &failure.exception {
        Some(exception) => format!("{exception}: {}", failure.message),
        None => failure.message.clone(),
    };
    printer.line(&format!("  failure: {}", terminal_safe(&head)))?;
    let at = failure.failing_frame.as_ref().map_or_else(
        || "no frame inside the repository".to_owned(),
        ToString::to_string,
    );
    printer.line(&format!("  at: {}", terminal_safe(&at)))?;
    let signature = failure.signature();
    printer.line(&format!("  signature: {}", short(&signature, 16)))?;
    if !printer.first_showing(&format!("{signature}\n{}", failure.text)) {
        return printer.line("  | (the same failure text as above; --full prints it every time)");
    }
    let lines: Vec<String> = failure
        .text
        .lines()
        .map(|line| format!("  | {}", terminal_safe(line)).trim_end().to_owned())
        .collect();
    printer.listing_of(&lines, "lines of the failure text", FAILURE_LINES)
}

/// The count of each verdict, as a JSON line or one line for people.
pub(super) fn print_summary(printer: &mut Printer, judged: &[Judged]) -> io::Result<()> {
    let summary = SummaryLine::of(judged);
    if printer.is_json() {
        printer.json("triage-summary", &summary)
    } else {
        printer.info(&summary.human())
    }
}

/// For people: what to do about each verdict present, one line each.
pub(super) fn print_next_steps(printer: &mut Printer, judged: &[Judged]) -> io::Result<()> {
    if printer.is_json() || judged.is_empty() {
        return Ok(());
    }
    let first = |wanted: fn(&VerdictKind) -> bool| {
        judged
            .iter()
            .find(|j| wanted(&j.verdict.kind))
            .map(|j| terminal_safe(&j.red.test_id))
    };
    let mut steps = Vec::new();
    if let Some(test) = first(|k| matches!(k, VerdictKind::Regression)) {
        steps.push(format!(
            "regression: do not rerun; read the failure above and fix the code (`candor show {test}` lists its history)"
        ));
    }
    if first(|k| matches!(k, VerdictKind::Expired { .. })).is_some() {
        steps.push(
            "expired: treat as a regression; the fingerprint's owner renews `last_seen` in candor.toml only after confirming the shape".to_owned(),
        );
    }
    if first(|k| matches!(k, VerdictKind::BudgetExceeded { .. })).is_some() {
        steps.push(format!(
            "budget-exceeded: no more reruns; label the change {} and fix the flake",
            crate::triage::BUDGET_EXCEEDED_LABEL
        ));
    }
    if first(|k| matches!(k, VerdictKind::Unverified)).is_some() {
        steps.push(
            "unverified: measure before you reason: compare its failure rate on the branch and on the merge base"
                .to_owned(),
        );
    }
    if let Some(test) = first(|k| matches!(k, VerdictKind::KnownFlake { .. })) {
        steps.push(format!(
            "known-flake: `candor rerun {test}` reruns it once, after writing its ledger line"
        ));
    }
    if first(|k| matches!(k, VerdictKind::NotEvidence { .. })).is_some() {
        steps.push(
            "not-evidence: a quarantined test's known shape; never change production code to make it pass"
                .to_owned(),
        );
    }
    printer.info("next:")?;
    for step in steps {
        printer.info(&format!("  {step}"))?;
    }
    Ok(())
}
