//! `candor repro`: a claimed seed reproduction checked on the merge base and the branch,
//! each in its own tree as `compare` runs them; the verdict is
//! [`crate::compare::repro_verdict`].

use std::path::PathBuf;

use serde::Serialize;

use super::compare::prepare;
use super::{History, Note, Ports, short};
use crate::cli::error::CliError;
use crate::cli::settings::ReproSettings;
use crate::compare::{ReproVerdict, SideSummary, repro_verdict};
use crate::records::Side;
use crate::runner::{RunnerKind, SeedSupport};
use crate::stats::sequential::Tally;

/// What the check found: the `repro` line of docs/json-output.md.
#[derive(Debug, Clone, Serialize)]
pub struct Reproduction {
    /// The test.
    pub test: String,
    /// The verdict.
    pub verdict: ReproVerdict,
    /// The claimed seed.
    pub seed: u64,
    /// Whether the runner took it.
    pub seed_applied: bool,
    /// What the seed fixes, or why the runner takes none.
    pub seed_controls: &'static str,
    /// The merge base's runs.
    pub base: SideSummary,
    /// The branch's runs.
    pub branch: SideSummary,
    /// The sentence to quote.
    pub receipt: String,
    /// The run records' folder.
    pub records: PathBuf,
    /// The runner.
    #[serde(skip)]
    pub runner: RunnerKind,
}

/// `candor repro`, in its own worktree of the merge base as `compare`.
pub fn repro(
    settings: &ReproSettings,
    ports: &mut Ports<'_>,
    history: &mut History,
) -> Result<Reproduction, CliError> {
    let workspace = &settings.workspace;
    let (mut bench, _) = prepare(
        &settings.test_id,
        settings.base.as_deref(),
        (ports.repo_root, ports.executor, ports.git),
        history,
        workspace,
        "repro",
    )?;
    let (base_commit, head) = (bench.base.commit.clone(), bench.branch.commit.clone());
    let (seed_applied, seed_controls) = match bench.adapter.seed_support() {
        SeedSupport::Controls(what) => (true, what),
        SeedSupport::None(why) => (false, why),
    };
    let seed = settings.seed;
    let total = u64::from(settings.runs) * 2;
    let mut records = Vec::new();
    let mut sequence = 0;
    for _ in 0..settings.runs {
        for side in [Side::Base, Side::Branch] {
            sequence += 1;
            let record = bench.run(side, sequence, seed_applied.then_some(seed));
            if record.is_err() {
                ports.notes.note(Note::StepsDone)?;
            }
            records.push(record?);
            ports.step(u64::from(sequence), total, String::new())?;
        }
    }
    ports.notes.note(Note::StepsDone)?;
    let tally = |side| {
        let mine = records.iter().filter(|r| r.side == side);
        Tally {
            runs: u32::try_from(mine.clone().count()).unwrap_or(u32::MAX),
            failures: u32::try_from(mine.filter(|r| r.failed()).count()).unwrap_or(u32::MAX),
        }
    };
    let (base, branch) = (tally(Side::Base), tally(Side::Branch));
    let verdict = repro_verdict(base, branch);
    let receipt = match verdict {
        ReproVerdict::Confirmed => format!(
            "repro confirmed: `{}` with seed {seed} fails on the merge base {} ({}/{} runs) and passes on the branch {} ({}/{} runs) [candor repro]",
            settings.test_id,
            short(&base_commit),
            base.failures,
            base.runs,
            short(&head),
            branch.runs - branch.failures,
            branch.runs,
        ),
        ReproVerdict::BaseDidNotFail => format!(
            "repro not confirmed: with seed {seed} the merge base {} passed {} of {} runs; the seed does not reproduce the failure",
            short(&base_commit),
            base.runs - base.failures,
            base.runs
        ),
        ReproVerdict::BranchFailed => format!(
            "repro not confirmed: with seed {seed} the branch {} failed {} of {} runs; the fix does not hold",
            short(&head),
            branch.failures,
            branch.runs
        ),
        ReproVerdict::Neither => format!(
            "repro not confirmed: with seed {seed} the merge base failed {}/{} and the branch failed {}/{}",
            base.failures, base.runs, branch.failures, branch.runs
        ),
    };
    Ok(Reproduction {
        test: settings.test_id.clone(),
        verdict,
        seed,
        seed_applied,
        seed_controls,
        base: SideSummary::of(&records, Side::Base, base),
        branch: SideSummary::of(&records, Side::Branch, branch),
        receipt,
        records: bench.records_dir.clone(),
        runner: bench.adapter.kind(),
    })
}
