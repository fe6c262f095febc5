//! `candor lint diff [--base REF] [--head REF]`: the lane's diff rules on the lines the
//! change adds, with the policy (bans, presets, oracle) of the base. The rules are
//! `gate::rules`' and `gate::oracle`'s.

use super::{AppError, Ports};
use crate::cli::settings::LintDiffSettings;
use crate::events::{Event, LintDiffEvent};
use crate::exit_codes;
use crate::gate;
use crate::git::Git;

/// One `finding` event per finding, for people what it means, then `lint-diff`; `git`
/// reads the commits.
pub fn run(settings: &LintDiffSettings, git: &Git, ports: &mut Ports<'_>) -> Result<u8, AppError> {
    let head = settings.head.clone().map_err(AppError::NoChange)?;
    let base = settings.base.clone().map_err(AppError::NoChange)?;
    let policy = gate::base_policy(git, &base)?;
    let diff = gate::read_change(git, &base, &head)?;
    let test_files = gate::python_test_files(git, &base)?;
    let findings = gate::lint(git, &base, &head, &diff, &policy, &test_files)?;
    for finding in &findings {
        ports.emit(Event::Finding(finding.clone()));
    }
    let short = |sha: &str| sha.get(..12).unwrap_or(sha).to_owned();
    if findings.is_empty() {
        ports.tell(format!(
            "no findings in {} changed {} ({}..{}, policy from {}:candor.toml)",
            diff.files.len(),
            if diff.files.len() == 1 {
                "file"
            } else {
                "files"
            },
            short(&base),
            short(&head),
            short(&base)
        ));
    } else {
        ports.tell(format!(
            "{} {} in {}..{} (policy from {}:candor.toml): the merge lane refuses these lines",
            findings.len(),
            if findings.len() == 1 {
                "finding"
            } else {
                "findings"
            },
            short(&base),
            short(&head),
            short(&base)
        ));
    }
    ports.emit(Event::LintDiff(LintDiffEvent {
        files: diff.files.len(),
        findings: findings.len(),
        base,
        head,
    }));
    Ok(if findings.is_empty() {
        exit_codes::OK
    } else {
        exit_codes::NEGATIVE
    })
}
