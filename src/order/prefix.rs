//! The order a results file recorded: the tests that ran before a test in its process.
//!
//! Parsers hand executions over in file order, and each format writes them in the order
//! they finished: pytest's JUnit `testcase`s, `go test -json`'s `pass`/`fail` events,
//! libtest's `ok`/`failed` events. With one test at a time per process (pytest without
//! xdist, go's tests without `t.Parallel`, libtest with one thread) that is the order they
//! ran. A file written by pytest-xdist interleaves its workers and says nothing of which
//! worker ran what; its order is only a guess.

use std::sync::LazyLock;

use regex::Regex;

use crate::results::Execution;

/// The tests before `test` in `executions` (file order) that share its process, each
/// once, in order; `None` when `test` is not in the file. The test's own repetitions
/// (pytest-repeat's `[1-2]`) are not tests before it.
///
/// Each id is counted as the unit a run can select (`unit`, the adapter's
/// [`crate::runner::Adapter::selection_unit`]): a go subtest `TestA/sub` only ever runs
/// inside `TestA`, so it is `TestA`, counted once, and never a candidate polluter apart
/// from its parent. The test's own unit (the parent of a subtest under investigation)
/// is the test itself, not a test before it.
pub fn tests_before(
    executions: &[Execution],
    test: &str,
    shares_process: impl Fn(&str) -> bool,
    unit: impl Fn(&str) -> String,
) -> Option<Vec<String>> {
    let at = executions
        .iter()
        .position(|e| e.test_id == test || is_repetition_of(&e.test_id, test))?;
    let own = unit(test);
    let mut before: Vec<String> = Vec::new();
    for execution in &executions[..at] {
        let id = unit(&execution.test_id);
        if id != own && shares_process(&id) && !before.contains(&id) {
            before.push(id);
        }
    }
    Some(before)
}

/// pytest-repeat's spelling of a repetition: `test[2-3]`, or `test[p-2-3]` for a
/// parametrized `test[p]`.
static REPETITION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(.*?)(\[|-)\d+-\d+\]$").expect("the repetition pattern is valid")
});

/// Whether `id` is one repetition of `test` as pytest-repeat names them.
pub fn is_repetition_of(id: &str, test: &str) -> bool {
    let Some(caps) = REPETITION.captures(id) else {
        return false;
    };
    let (Some(base), Some(joint)) = (caps.get(1), caps.get(2)) else {
        return false;
    };
    if joint.as_str() == "[" {
        base.as_str() == test
    } else {
        // `test[p-2-3]` repeats `test[p]`.
        test.strip_suffix(']') == Some(base.as_str())
    }
}

/// The `-shuffle` seed a `go test -json` stream reports (`-test.shuffle N`), if any.
pub fn go_shuffle_seed(stream: &str) -> Option<u64> {
    static SEED: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"-test\.shuffle (\d+)").expect("the shuffle pattern is valid")
    });
    SEED.captures(stream)?.get(1)?.as_str().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Outcome;

    fn run(ids: &[&str]) -> Vec<Execution> {
        ids.iter()
            .map(|id| Execution::new(*id, Outcome::Pass))
            .collect()
    }

    fn same(id: &str) -> String {
        id.to_owned()
    }

    /// go's unit: the top-level test.
    fn top_level(id: &str) -> String {
        match id.split_once("::") {
            Some((package, test)) => {
                format!("{package}::{}", test.split('/').next().unwrap_or(test))
            }
            None => id.to_owned(),
        }
    }

    #[test]
    fn subtests_are_their_parent_counted_once() {
        // go finishes a parent after its subtests: `TestTable/one` is written before
        // `TestTable`.
        let executions = run(&[
            "m::TestTable/one",
            "m::TestTable/two",
            "m::TestTable",
            "m::TestRaises",
            "m::TestOther/x",
            "m::TestOther",
            "m::TestVictim/a",
            "m::TestVictim/b",
            "m::TestVictim",
        ]);
        let top_levels = Some(vec![
            "m::TestTable".to_owned(),
            "m::TestRaises".to_owned(),
            "m::TestOther".to_owned(),
        ]);
        assert_eq!(
            tests_before(&executions, "m::TestVictim", |_| true, top_level),
            top_levels
        );
        // A subtest under investigation: its siblings run inside its own parent, which is
        // no test before it.
        assert_eq!(
            tests_before(&executions, "m::TestVictim/b", |_| true, top_level),
            top_levels
        );
        // Without the fold (pytest, whose parametrized cases run alone) every id counts.
        assert_eq!(
            tests_before(&executions, "m::TestVictim", |_| true, same).map(|b| b.len()),
            Some(8)
        );
    }

    #[test]
    fn the_tests_before_in_file_order_once_each() {
        let executions = run(&["a::x", "b::y", "a::z", "a::x", "a::victim", "a::after"]);
        assert_eq!(
            tests_before(&executions, "a::victim", |id| id.starts_with("a::"), same),
            Some(vec!["a::x".to_owned(), "a::z".to_owned()])
        );
        assert_eq!(
            tests_before(&executions, "a::missing", |_| true, same),
            None
        );
        assert_eq!(
            tests_before(&executions, "a::x", |_| true, same),
            Some(Vec::new())
        );
    }

    #[test]
    fn repetitions_are_the_test_itself() {
        assert!(is_repetition_of("t.py::test_a[1-2]", "t.py::test_a"));
        assert!(is_repetition_of("t.py::test_a[x-2-2]", "t.py::test_a[x]"));
        assert!(!is_repetition_of("t.py::test_ab[1-2]", "t.py::test_a"));
        assert!(!is_repetition_of("t.py::test_a", "t.py::test_a"));
        let executions = run(&["t.py::other", "t.py::test_a[1-2]", "t.py::test_a[2-2]"]);
        assert_eq!(
            tests_before(&executions, "t.py::test_a", |_| true, same),
            Some(vec!["t.py::other".to_owned()])
        );
    }

    #[test]
    fn go_reports_its_shuffle_seed() {
        let stream =
            "{\"Action\":\"output\",\"Package\":\"m\",\"Output\":\"-test.shuffle 1234\\n\"}\n";
        assert_eq!(go_shuffle_seed(stream), Some(1234));
        assert_eq!(go_shuffle_seed("{}"), None);
    }
}
