//! `candor repro`: a claimed seed reproduction checked on the merge base and the branch,
//! each in its own tree as `compare` runs them; the verdict is
//! [`crate::compare::repro_verdict`].

use super::compare::prepare;
use super::{History, Ports, short};
use crate::cli::error::CliError;
use crate::cli::settings::ReproSettings;
use crate::compare::{ReproVerdict, SideSummary, repro_verdict};
use crate::events::{Event, ReproEvent};
use crate::git::Repository;
use crate::records::Side;
use crate::runner::{RunnerKind, SeedSupport};
use crate::stats::sequential::Tally;

/// `candor repro`, in its own worktree of the merge base as `compare`.
/// Returns the `repro` event, emitted, and the runner that made the runs.
pub fn repro(
    settings: &ReproSettings,
    ports: &mut Ports<'_>,
    git: &dyn Repository,
    history: &mut History,
) -> Result<(ReproEvent, RunnerKind), CliError> {
    let workspace = &settings.workspace;
    let (mut bench, _) = prepare(
        &settings.test_id,
        settings.base.as_deref(),
        (ports.root, ports.executor, git),
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
            records.push(bench.run(side, sequence, seed_applied.then_some(seed))?);
            ports.step(String::new(), u64::from(sequence), total);
        }
    }
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
            short(&base_commit, 12),
            base.failures,
            base.runs,
            short(&head, 12),
            branch.runs - branch.failures,
            branch.runs,
        ),
        ReproVerdict::BaseDidNotFail => format!(
            "repro not confirmed: with seed {seed} the merge base {} passed {} of {} runs; the seed does not reproduce the failure",
            short(&base_commit, 12),
            base.runs - base.failures,
            base.runs
        ),
        ReproVerdict::BranchFailed => format!(
            "repro not confirmed: with seed {seed} the branch {} failed {} of {} runs; the fix does not hold",
            short(&head, 12),
            branch.failures,
            branch.runs
        ),
        ReproVerdict::Neither => format!(
            "repro not confirmed: with seed {seed} the merge base failed {}/{} and the branch failed {}/{}",
            base.failures, base.runs, branch.failures, branch.runs
        ),
    };
    let found = ReproEvent {
        test: settings.test_id.clone(),
        verdict,
        seed,
        seed_applied,
        seed_controls: seed_controls.to_owned(),
        base: SideSummary::of(&records, Side::Base, base),
        branch: SideSummary::of(&records, Side::Branch, branch),
        receipt,
        records: bench.records_dir.clone(),
    };
    ports.emit(Event::Repro(found.clone()));
    Ok((found, bench.adapter.kind()))
}
