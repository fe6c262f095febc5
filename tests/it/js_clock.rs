//! A JavaScript runner stopped by candor's clock. jest writes its report when it ends, so
//! a run killed by the lane's time limit has none: found on dayjs, where the lane's last
//! replay timed out and `candor gate` exited 2 with "failed to open file …jest.json"
//! instead of rejecting the change as out of time (#20, and #15's lane budget).

use crate::js_support::{commit, project};
use crate::triage_support;

#[test]
fn a_jest_run_stopped_by_the_lane_s_clock_is_out_of_time_not_an_error() {
    let suite = project("jest");
    for file in ["__tests__/basic.test.js", "__tests__/hostile.test.js"] {
        std::fs::remove_file(suite.repo.join(file)).expect("remove a fixture test");
    }
    suite.write(
        "__tests__/cart.test.js",
        "test('totals', () => { expect(1 + 2).toBe(3); });\n",
    );
    suite.write(
        "candor.toml",
        "[lane]\nmin_replays = 3\nmax_wall_seconds = 20\n",
    );
    triage_support::git(&suite.repo, &["checkout", "--quiet", "main"]);
    commit(&suite, "a clean suite");
    triage_support::git(&suite.repo, &["checkout", "--quiet", "-B", "change"]);
    // The touched test never ends (jest's own limit raised far above the lane's 20 s), so
    // whatever the machine's load, the lane's clock stops one of its replays.
    suite.write(
        "__tests__/cart.test.js",
        "test('totals', () => { expect(1 + 2).toBe(3); });\n\ntest('waits for a reply', () => new Promise(() => {}), 600000);\n",
    );
    commit(&suite, "a test that never ends");
    let ran = suite.candor(&["gate", "--format", "json"], &[]);
    assert_eq!(ran.exit, 1, "rejected, not an error: {ran:?}");
    let line = &ran.lines_of("gate")[0];
    assert_eq!(line["pass"], false, "{line:#}");
    let reasons = line["reasons"].to_string();
    assert!(
        reasons.contains("\"replays_left\""),
        "the rejection is the lane's time: {line:#}"
    );
    // A jest run was reached and killed by the clock, not skipped because the listing
    // used the time.
    let killed = logs_under(&suite.repo.join(".candor/runs"))
        .iter()
        .any(|log| log.contains("timed out"));
    assert!(killed, "no jest run was stopped by the lane's clock");
}

/// The text of every runner log under `folder`.
fn logs_under(folder: &std::path::Path) -> Vec<String> {
    let mut logs = Vec::new();
    for entry in std::fs::read_dir(folder).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            logs.extend(logs_under(&path));
        } else if path.extension().is_some_and(|e| e == "log") {
            logs.push(std::fs::read_to_string(&path).unwrap_or_default());
        }
    }
    logs
}
