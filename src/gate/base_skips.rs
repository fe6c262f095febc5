//! Whether a touched test skipped in every replay was skipped by the merge base's own
//! checkout too, for the same reason: a skip the change did not cause (an optional
//! dependency the lane's machine lacks, a platform condition). Pure: the two runs' outcomes
//! and skip reasons in, the lane's judgement out (docs/gate.md, step 10).
//!
//! Why a run of the whole merge base, not the base's version of the test: the base's test
//! against the head's code skips too when the change deletes what the test guards with
//! `importorskip` or `skipif(feature is None)`. Only the base's code, tests and settings
//! together say what the base skipped.

use crate::results::Outcome;
use crate::results::signature::normalize;

/// How one skipped touched test fared in the merge base's checkout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AtMergeBase {
    /// Skipped there, with the runner's reason when it gave one.
    Skipped(Option<String>),
    /// Run there, to this outcome: the skip is the change's.
    Ran(Outcome),
    /// The base's run does not hold the test: the change added it, or renamed it.
    Missing,
    /// The base could not be run (a build error, the lane's time, code from the head's
    /// tree): nothing excuses the skip.
    NotRun(String),
}

/// The judgement of one skipped touched test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SkipJudgement {
    /// Skipped at the merge base for the same reason: reported, not refused.
    AsAtBase,
    /// Refused, with what the merge base showed.
    Refused(String),
}

/// Judges a touched test skipped in every replay at the head (`head_reason`, its skip
/// reason in the first replay) by its run at the merge base. Reasons are compared with the
/// digits normalized (line numbers, versions) and with each tree's own path taken out
/// (`head_root`, `base_root`), so `tests/x.py:12` and a worktree's absolute path do not
/// make two skips differ; a reason on one side only is a different reason.
pub fn judge(
    head_reason: Option<&str>,
    at_base: &AtMergeBase,
    head_root: &str,
    base_root: &str,
) -> SkipJudgement {
    match at_base {
        AtMergeBase::Skipped(base_reason) => {
            let comparable = |reason: Option<&str>, root: &str| {
                reason.map(|text| normalize(&without_root(text, root)))
            };
            if comparable(head_reason, head_root) == comparable(base_reason.as_deref(), base_root) {
                SkipJudgement::AsAtBase
            } else {
                SkipJudgement::Refused(format!(
                    "the merge base skips it for another reason: {}",
                    base_reason.as_deref().unwrap_or("(none given)")
                ))
            }
        }
        AtMergeBase::Ran(outcome) => SkipJudgement::Refused(format!(
            "the merge base runs it ({}): the change made it skip",
            outcome.as_str()
        )),
        AtMergeBase::Missing => {
            SkipJudgement::Refused("the merge base has no such test".to_owned())
        }
        AtMergeBase::NotRun(why) => {
            SkipJudgement::Refused(format!("it could not be run at the merge base: {why}"))
        }
    }
}

/// `text` with every occurrence of the tree's path (and the path's trailing separator)
/// removed.
fn without_root(text: &str, root: &str) -> String {
    if root.is_empty() {
        return text.to_owned();
    }
    let with_separator = format!("{}/", root.trim_end_matches('/'));
    text.replace(&with_separator, "")
        .replace(root.trim_end_matches('/'), "")
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = "/work/repo";
    const BASE: &str = "/tmp/candor-merge-base-x/tree";

    fn skipped(reason: &str) -> AtMergeBase {
        AtMergeBase::Skipped(Some(reason.to_owned()))
    }

    #[test]
    fn the_same_reason_in_both_trees_is_the_base_s_skip() {
        let reason = "could not import 'greenlet': No module named 'greenlet'";
        assert_eq!(
            judge(Some(reason), &skipped(reason), HEAD, BASE),
            SkipJudgement::AsAtBase
        );
        // Line numbers and the trees' paths are not the reason.
        assert_eq!(
            judge(
                Some("/work/repo/tests/test_a.py:12: needs greenlet"),
                &skipped("/tmp/candor-merge-base-x/tree/tests/test_a.py:9: needs greenlet"),
                HEAD,
                BASE
            ),
            SkipJudgement::AsAtBase
        );
        assert_eq!(
            judge(None, &AtMergeBase::Skipped(None), HEAD, BASE),
            SkipJudgement::AsAtBase
        );
    }

    #[test]
    fn a_skip_the_base_does_not_make_is_refused() {
        let refused = |at_base: AtMergeBase| {
            matches!(
                judge(Some("needs greenlet"), &at_base, HEAD, BASE),
                SkipJudgement::Refused(_)
            )
        };
        assert!(refused(AtMergeBase::Ran(Outcome::Pass)));
        assert!(refused(AtMergeBase::Ran(Outcome::Fail)));
        assert!(refused(AtMergeBase::Missing));
        assert!(refused(AtMergeBase::NotRun("time ran out".to_owned())));
        assert!(refused(skipped("requires Windows")));
        assert!(refused(AtMergeBase::Skipped(None)));
        assert_eq!(
            judge(None, &skipped("needs greenlet"), HEAD, BASE),
            SkipJudgement::Refused(
                "the merge base skips it for another reason: needs greenlet".to_owned()
            )
        );
    }
}
