//! Which runs `reliability`, `tests` and `show` count: the branch selection of
//! `crate::reliability::branches` applied to the stored runs, and how each command says
//! what it counted.

use std::collections::HashSet;

use super::AppError;
use crate::cli::settings::DefaultBranch;
use crate::history::HistoryStore;
use crate::policy::Config;
use crate::reliability::{BranchSelection, Counted};

/// The selection and the runs it counts.
pub struct CountedRuns {
    /// The branches counted.
    pub selection: BranchSelection,
    /// The runs counted and left out.
    pub counted: Counted,
}

impl CountedRuns {
    /// Reads the stored runs and splits them by `[reliability] branches` or the default
    /// branch.
    pub fn read(
        store: &dyn HistoryStore,
        config: &Config,
        default_branch: Option<&DefaultBranch>,
    ) -> Result<CountedRuns, AppError> {
        let selection = DefaultBranch::selection(default_branch, config);
        let counted = selection.split(&store.runs(usize::MAX)?);
        Ok(CountedRuns { selection, counted })
    }

    /// The runs to count, `None` when every run counts.
    pub fn filter(&self) -> Option<&HashSet<i64>> {
        (!self.selection.is_every_branch()).then_some(&self.counted.runs)
    }

    /// For people: `counted 40 runs on main (the default branch, from origin/HEAD); 12 runs
    /// on other branches not counted`.
    pub fn human(&self) -> String {
        let runs = self.counted.runs.len();
        let runs = if runs == 1 {
            "1 run".to_owned()
        } else {
            format!("{runs} runs")
        };
        let mut text = format!("counted {runs} on {}", self.selection);
        if let Some(left_out) = self.counted.left_out() {
            text.push_str("; ");
            text.push_str(&left_out);
        }
        text
    }

    /// For machines.
    pub fn event(&self) -> crate::events::Counted {
        crate::events::Counted {
            branches: self.selection.patterns(),
            every_branch: self.selection.is_every_branch(),
            runs: self.counted.runs.len(),
            other_branch_runs: self.counted.other_branches,
            unknown_branch_runs: self.counted.unknown_branch,
        }
    }
}
