//! Which runs reliability counts: the branches whose runs are evidence about the code
//! everyone shares. Pure: the default branch's name and `[reliability] branches` come in.
//!
//! A failing agent branch must not quarantine a test that never flaked on the default
//! branch, so by default only the default branch's runs count. A run whose branch is
//! unknown is not counted either: nothing says it tested shared code, and counting it
//! would let any run stored without a branch (`candor ingest --commit` of an arbitrary
//! commit) move a tier. When no default branch can be found at all (no git repository,
//! no CI variable, no `[reliability] branches`), every run counts, and the commands say
//! so.

use std::collections::HashSet;
use std::fmt;

use crate::history::RunRecord;

/// A `[reliability] branches` entry: a branch name or a glob (`release/*`; `*` does not
/// cross `/`, `**` does).
#[derive(Debug, Clone)]
pub struct BranchPattern {
    text: String,
    pattern: glob::Pattern,
}

impl BranchPattern {
    /// Compiles `text`.
    pub fn new(text: &str) -> Result<BranchPattern, glob::PatternError> {
        Ok(BranchPattern {
            text: text.to_owned(),
            pattern: glob::Pattern::new(text)?,
        })
    }

    /// As written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether `branch` is one this pattern names.
    pub fn matches(&self, branch: &str) -> bool {
        self.pattern.matches_with(
            branch,
            glob::MatchOptions {
                case_sensitive: true,
                require_literal_separator: true,
                require_literal_leading_dot: false,
            },
        )
    }
}

impl PartialEq for BranchPattern {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

/// The default branch as `Git::base_branch` chose it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DefaultOrigin {
    /// Its name, as runs record their branch: `main`.
    pub name: String,
    /// What merge bases are taken with: `origin/main`, or `main`.
    pub reference: String,
    /// How it was found (`origin/HEAD`, `CI_DEFAULT_BRANCH`, …).
    pub how: String,
    /// Local commits on `name` that `reference` lacks: a run there is on the branch by
    /// name but not on the history CI sees, and a merge base taken with `reference` makes
    /// it part of the change, so it is not counted as the default branch's.
    pub ahead: HashSet<String>,
}

/// Where the counted branches came from.
#[derive(Debug, Clone, PartialEq)]
enum Origin {
    /// `[reliability] branches`.
    Configured(Vec<BranchPattern>),
    /// The default branch.
    Default(DefaultOrigin),
    /// Nothing says which branch is the default: every run counts.
    Unknown,
}

/// The branches whose runs reliability counts.
#[derive(Debug, Clone, PartialEq)]
pub struct BranchSelection {
    origin: Origin,
}

impl BranchSelection {
    /// `[reliability] branches` when given, else the default branch (found by `how`),
    /// else every branch.
    pub fn new(
        configured: Option<&[BranchPattern]>,
        default_branch: Option<DefaultOrigin>,
    ) -> BranchSelection {
        let origin = match (configured, default_branch) {
            (Some(patterns), _) => Origin::Configured(patterns.to_vec()),
            (None, Some(default)) => Origin::Default(default),
            (None, None) => Origin::Unknown,
        };
        BranchSelection { origin }
    }

    /// Every run counts (no default branch known).
    pub fn every_branch() -> BranchSelection {
        BranchSelection {
            origin: Origin::Unknown,
        }
    }

    /// Whether a run on `branch` (`None`: unknown) counts.
    pub fn counts(&self, branch: Option<&str>) -> bool {
        match (&self.origin, branch) {
            (Origin::Unknown, _) => true,
            (_, None) => false,
            (Origin::Configured(patterns), Some(branch)) => {
                patterns.iter().any(|pattern| pattern.matches(branch))
            }
            (Origin::Default(default), Some(branch)) => branch == default.name,
        }
    }

    /// Whether a run on `branch` at `commit` counts: [`BranchSelection::counts`], less a
    /// default branch's local commits that its reference lacks.
    pub fn counts_run(&self, branch: Option<&str>, commit: Option<&str>) -> bool {
        self.counts(branch) && !self.is_ahead(commit)
    }

    fn is_ahead(&self, commit: Option<&str>) -> bool {
        match (&self.origin, commit) {
            (Origin::Default(default), Some(commit)) => default
                .ahead
                .iter()
                .any(|ahead| ahead == commit || (commit.len() >= 7 && ahead.starts_with(commit))),
            _ => false,
        }
    }

    /// Whether every run counts because no default branch is known.
    pub fn is_every_branch(&self) -> bool {
        self.origin == Origin::Unknown
    }

    /// The counted branches as a list for JSON: names and globs; empty for every branch.
    pub fn patterns(&self) -> Vec<String> {
        match &self.origin {
            Origin::Configured(patterns) => {
                patterns.iter().map(|p| p.as_str().to_owned()).collect()
            }
            Origin::Default(default) => vec![default.name.clone()],
            Origin::Unknown => Vec::new(),
        }
    }

    /// The ids of the runs that count, and how many did not.
    pub fn split(&self, runs: &[RunRecord]) -> Counted {
        let mut counted = Counted::default();
        for run in runs {
            let branch = run.run.branch.as_deref();
            if self.counts(branch) && self.is_ahead(run.run.commit.as_deref()) {
                counted.ahead_of_reference += 1;
            } else if self.counts(branch) {
                counted.runs.insert(run.id);
            } else if branch.is_none() {
                counted.unknown_branch += 1;
            } else {
                counted.other_branches += 1;
            }
        }
        counted
    }
}

/// `main (the default branch, from origin/HEAD)`, `main, release/* ([reliability]
/// branches)` or `every branch (no default branch found)`.
impl fmt::Display for BranchSelection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.origin {
            Origin::Configured(patterns) => {
                let names: Vec<&str> = patterns.iter().map(BranchPattern::as_str).collect();
                write!(f, "{} ([reliability] branches)", names.join(", "))
            }
            Origin::Default(DefaultOrigin {
                name,
                reference,
                how,
                ..
            }) if reference != name => {
                write!(f, "{name} (the default branch: {reference}, from {how})")
            }
            Origin::Default(DefaultOrigin { name, how, .. }) => {
                write!(f, "{name} (the default branch, from {how})")
            }
            Origin::Unknown => f.write_str(
                "every branch (no default branch found: no origin/HEAD, init.defaultBranch, main or master, no CI variable, no [reliability] branches)",
            ),
        }
    }
}

/// The runs a selection counts, and the others by reason.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counted {
    /// The ids of the runs that count.
    pub runs: HashSet<i64>,
    /// Runs on a branch the selection does not name.
    pub other_branches: usize,
    /// Runs whose branch is unknown.
    pub unknown_branch: usize,
    /// Runs on the default branch's name at local commits its reference lacks.
    pub ahead_of_reference: usize,
}

impl Counted {
    /// For people: `12 runs on other branches and 3 runs with no branch are not counted`,
    /// or `None` when every run counts.
    pub fn left_out(&self) -> Option<String> {
        let runs = |n: usize| {
            if n == 1 {
                "1 run".to_owned()
            } else {
                format!("{n} runs")
            }
        };
        let ahead = (self.ahead_of_reference > 0).then(|| {
            format!(
                "{} on local commits of the default branch that origin lacks not counted",
                runs(self.ahead_of_reference)
            )
        });
        let others = match (self.other_branches, self.unknown_branch) {
            (0, 0) => None,
            (other, 0) => Some(format!("{} on other branches not counted", runs(other))),
            (0, unknown) => Some(format!(
                "{} with no recorded branch not counted (`candor ingest --branch` records one)",
                runs(unknown)
            )),
            (other, unknown) => Some(format!(
                "{} on other branches and {} with no recorded branch not counted",
                runs(other),
                runs(unknown)
            )),
        };
        match (others, ahead) {
            (Some(others), Some(ahead)) => Some(format!("{others}; {ahead}")),
            (others, ahead) => others.or(ahead),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn default(name: &str, reference: &str, how: &str) -> DefaultOrigin {
        DefaultOrigin {
            name: name.to_owned(),
            reference: reference.to_owned(),
            how: how.to_owned(),
            ahead: HashSet::new(),
        }
    }

    #[test]
    fn runs_at_local_commits_origin_lacks_are_not_the_default_branch_s() {
        let mut origin = default("main", "origin/main", "origin/HEAD");
        origin.ahead.insert("c2c2c2c2c2c2c2c2".to_owned());
        let selection = BranchSelection::new(None, Some(origin));
        assert!(selection.counts_run(Some("main"), Some("c1c1c1c1c1")));
        assert!(!selection.counts_run(Some("main"), Some("c2c2c2c2c2c2c2c2")));
        assert!(
            !selection.counts_run(Some("main"), Some("c2c2c2c")),
            "a short sha"
        );
        assert_eq!(
            selection.to_string(),
            "main (the default branch: origin/main, from origin/HEAD)"
        );
    }

    fn patterns(texts: &[&str]) -> Vec<BranchPattern> {
        texts
            .iter()
            .map(|t| BranchPattern::new(t).unwrap())
            .collect()
    }

    #[test]
    fn the_default_branch_counts_alone_and_unknown_branches_do_not() {
        let selection = BranchSelection::new(None, Some(default("main", "main", "origin/HEAD")));
        assert!(selection.counts(Some("main")));
        assert!(!selection.counts(Some("agent/fix")));
        assert!(!selection.counts(Some("mainline")));
        assert!(!selection.counts(None));
        assert_eq!(
            selection.to_string(),
            "main (the default branch, from origin/HEAD)"
        );
    }

    #[test]
    fn configured_globs_do_not_cross_slashes_unless_asked() {
        let configured = patterns(&["main", "release/*", "hotfix/**"]);
        let selection = BranchSelection::new(
            Some(&configured),
            Some(default("trunk", "trunk", "origin/HEAD")),
        );
        assert!(selection.counts(Some("release/1.2")));
        assert!(!selection.counts(Some("release/1.2/agent")));
        assert!(selection.counts(Some("hotfix/a/b")));
        assert!(
            !selection.counts(Some("trunk")),
            "configured replaces detected"
        );
        assert!(!selection.counts(None));
        assert_eq!(selection.patterns(), ["main", "release/*", "hotfix/**"]);
    }

    #[test]
    fn no_default_branch_counts_every_run_and_says_so() {
        let selection = BranchSelection::new(None, None);
        assert!(selection.counts(None) && selection.counts(Some("anything")));
        assert!(selection.is_every_branch());
        assert!(selection.to_string().starts_with("every branch"));
    }

    #[test]
    fn left_out_names_both_reasons() {
        let counted = Counted {
            runs: HashSet::new(),
            other_branches: 4,
            unknown_branch: 1,
            ahead_of_reference: 0,
        };
        assert_eq!(
            counted.left_out().as_deref(),
            Some("4 runs on other branches and 1 run with no recorded branch not counted")
        );
        let ahead = Counted {
            ahead_of_reference: 2,
            ..counted
        };
        assert_eq!(
            ahead.left_out().as_deref(),
            Some(
                "4 runs on other branches and 1 run with no recorded branch not counted; 2 runs on local commits of the default branch that origin lacks not counted"
            )
        );
        assert_eq!(Counted::default().left_out(), None);
    }
}
