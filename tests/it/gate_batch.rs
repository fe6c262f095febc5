//! Batched replays in the merge lane (issue #15 items 1–2), end to end on real git
//! repositories holding real pytest suites: each round replays every touched test in one
//! pytest process, forward then reversed; ids that need care on a command line
//! (parametrize ids with `[`, `-`, spaces, non-ASCII) survive the batch; a test that
//! passes only after another touched test ran before it is not accepted; a test another
//! touched test breaks is order-dependent in its batch and judged alone. With `jobs = 2`
//! (item 3) the rounds run side by side and the last one alone: a test green only beside
//! another pytest process is rejected, one red only beside another is judged alone and
//! does not reject a good change. Every test builds its own repository.

use crate::triage_support;

use triage_support::{Suite, empty, git};

const POLICY_TOUCHED: &str = "[lane]\nreplay = \"touched\"\n";

/// A base on `main` with `tests/test_base.py` and `policy` as candor.toml, then a
/// `change` branch that adds `tests/test_change.py` holding `tests`.
fn change_adding(policy: &str, tests: &str) -> Suite {
    let suite = empty();
    suite.write(
        "pyproject.toml",
        "[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\n",
    );
    suite.write("candor.toml", policy);
    suite.write("tests/test_base.py", "def test_base():\n    assert True\n");
    suite.write(".gitignore", ".candor/\n__pycache__/\nscore-report.json\n");
    git(&suite.repo, &["init", "--quiet", "-b", "main"]);
    git(&suite.repo, &["add", "-A"]);
    git(&suite.repo, &["commit", "--quiet", "-m", "base"]);
    git(&suite.repo, &["checkout", "--quiet", "-b", "change"]);
    suite.write("tests/test_change.py", tests);
    git(&suite.repo, &["add", "-A"]);
    git(&suite.repo, &["commit", "--quiet", "-m", "the change"]);
    suite
}

/// `candor gate --format json` and the score report it wrote.
pub(crate) fn gate_report(suite: &Suite) -> (triage_support::Ran, serde_json::Value) {
    gate_report_with(suite, &[])
}

/// As [`gate_report`], with `vars` set for candor (`CI=1`, as a CI service sets it).
pub(crate) fn gate_report_with(
    suite: &Suite,
    vars: &[(&str, &str)],
) -> (triage_support::Ran, serde_json::Value) {
    let ran = suite.candor(&["gate", "--format", "json"], vars);
    let text = std::fs::read_to_string(suite.repo.join("score-report.json"))
        .unwrap_or_else(|e| panic!("no report ({e}): {ran:?}"));
    (
        ran,
        serde_json::from_str(&text).expect("the report is JSON"),
    )
}

/// The kinds of the report's reasons, in order.
pub(crate) fn reason_kinds(report: &serde_json::Value) -> Vec<&str> {
    report["reasons"]
        .as_array()
        .expect("reasons")
        .iter()
        .map(|r| r["kind"].as_str().expect("a kind"))
        .collect()
}

/// The report's one reason, `test-infrastructure-changed`, and the one file it names.
pub(crate) fn only_infrastructure_change(report: &serde_json::Value) -> &serde_json::Value {
    assert_eq!(
        reason_kinds(report),
        ["test-infrastructure-changed"],
        "{report:#}"
    );
    let found = report["test_infrastructure"]
        .as_array()
        .expect("test_infrastructure");
    assert_eq!(found.len(), 1, "{report:#}");
    &found[0]
}

/// A JSON array of strings.
pub(crate) fn strings(value: &serde_json::Value) -> Vec<String> {
    value
        .as_array()
        .unwrap_or_else(|| panic!("an array: {value}"))
        .iter()
        .map(|v| v.as_str().expect("a string").to_owned())
        .collect()
}

/// Every run of `test` in the report had `outcome`.
pub(crate) fn assert_every_run(report: &serde_json::Value, test: &str, outcome: &str) {
    let runs: Vec<&serde_json::Value> = report["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .filter(|r| r["test"] == test)
        .collect();
    assert!(!runs.is_empty(), "no run of {test}: {report:#}");
    assert!(runs.iter().all(|r| r["outcome"] == outcome), "{report:#}");
}

/// The lane rejected the change for `test` with `replay-failed`.
pub(crate) fn assert_rejected_for(report: &serde_json::Value, test: &str) {
    assert!(
        report["reasons"]
            .as_array()
            .expect("reasons")
            .iter()
            .any(|r| r["kind"] == "replay-failed" && r["test"] == test),
        "{report:#}"
    );
}

/// `test`, alone of the touched tests, was red in a batch and replayed alone, red there
/// too (not merely order-dependent), and the change is rejected for it.
pub(crate) fn assert_red_alone_and_rejected(report: &serde_json::Value, test: &str) {
    assert_eq!(
        strings(&report["batching"]["replayed_alone"]),
        [test],
        "{report:#}"
    );
    assert!(
        report["batching"]["order_dependent"]
            .as_array()
            .is_some_and(Vec::is_empty),
        "red alone: not merely order-dependent\n{report:#}"
    );
    assert_rejected_for(report, test);
}

/// #15 item 1: six touched tests, parametrize ids among them, three rounds of one
/// process each, forward, reversed, forward; every test replayed three times from the
/// batches' reports.
#[test]
fn every_touched_test_replays_in_one_pytest_process_per_round() {
    let tests = concat!(
        "import pytest\n\n\n",
        "@pytest.mark.parametrize(\"word\", [\"a-b\", \"x y\", \"ünï\", \"1.5\"])\n",
        "def test_words(word):\n    assert word\n\n\n",
        "def test_first():\n    assert 1 + 1 == 2\n\n\n",
        "def test_second():\n    assert 'a' < 'b'\n",
    );
    let suite = change_adding(POLICY_TOUCHED, tests);
    let (ran, report) = gate_report(&suite);
    assert_eq!(ran.exit, 0, "{ran:?}\n{report:#}");
    let touched: Vec<String> = report["touched"]
        .as_array()
        .expect("touched")
        .iter()
        .map(|t| t["id"].as_str().expect("an id").to_owned())
        .collect();
    assert_eq!(touched.len(), 6, "{touched:?}");
    assert!(touched.iter().any(|t| t.contains("[a-b]")), "{touched:?}");
    let rounds = report["batching"]["rounds"].as_array().expect("rounds");
    assert_eq!(rounds.len(), 3, "{report:#}");
    let orders: Vec<&str> = rounds
        .iter()
        .map(|r| r["order"].as_str().expect("an order"))
        .collect();
    assert_eq!(orders, ["forward", "reversed", "forward"]);
    let forward = strings(&rounds[0]["batches"][0]["tests"]);
    let mut reversed = strings(&rounds[1]["batches"][0]["tests"]);
    reversed.reverse();
    assert_eq!(forward, reversed);
    assert_eq!(forward, touched);
    for round in rounds {
        assert_eq!(round["batches"].as_array().map(Vec::len), Some(1));
        assert_eq!(round["batches"][0]["exit_code"], 0, "{report:#}");
        assert_eq!(round["batches"][0]["workers"], 1, "{report:#}");
    }
    let runs = report["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 18, "{report:#}");
    for id in &touched {
        let mine: Vec<&serde_json::Value> = runs.iter().filter(|r| r["test"] == *id).collect();
        assert_eq!(mine.len(), 3, "{id}: {report:#}");
        assert!(
            mine.iter()
                .all(|r| r["outcome"] == "pass" && r["batch"] == 1)
        );
    }
    assert!(report["unaccounted"].as_array().is_some_and(Vec::is_empty));
    let human = suite.candor(&["gate"], &[]);
    assert!(
        human.stdout.contains(
            "  batched: 3 round(s) in 3 runner process(es) (6 test(s) per process; order forward, reversed, forward; workers 1)"
        ),
        "{human:?}"
    );
}

/// #15 item 2, the adversary's diff: `test_reads` passes only when `test_sets` ran
/// before it in the same process. One process per round in a fixed order would accept
/// it; the reversed round runs it first, it goes red, and alone it is red: rejected.
#[test]
fn a_test_that_passes_only_after_another_touched_test_is_not_accepted() {
    let tests = concat!(
        "STATE = {}\n\n\n",
        "def test_sets():\n    STATE['ready'] = True\n\n\n",
        "def test_reads():\n    assert STATE.get('ready')\n",
    );
    let suite = change_adding(POLICY_TOUCHED, tests);
    let (ran, report) = gate_report(&suite);
    assert_eq!(ran.exit, 1, "{ran:?}\n{report:#}");
    assert_eq!(report["pass"], false);
    let reads = "tests/test_change.py::test_reads";
    let alone: Vec<&serde_json::Value> = report["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .filter(|r| r["test"] == reads)
        .collect();
    assert_eq!(alone.len(), 3);
    assert!(
        alone
            .iter()
            .all(|r| r["outcome"] == "fail" && r["batch"].is_null()),
        "{report:#}"
    );
    assert_red_alone_and_rejected(&report, reads);
}

/// #15 item 2: `test_clean` fails after `test_pollutes` ran in its process and passes
/// alone: order-dependent in its batch, with the batch's order and `candor order` as
/// evidence, and judged by its replays alone.
#[test]
fn a_test_red_only_after_another_in_its_batch_is_order_dependent_and_judged_alone() {
    let tests = concat!(
        "import os\n\n\n",
        "def test_pollutes():\n    os.environ['CANDOR_BATCH_POLLUTED'] = '1'\n\n\n",
        "def test_clean():\n    assert 'CANDOR_BATCH_POLLUTED' not in os.environ\n",
    );
    let suite = change_adding(POLICY_TOUCHED, tests);
    let (ran, report) = gate_report(&suite);
    let clean = "tests/test_change.py::test_clean";
    let pollutes = "tests/test_change.py::test_pollutes";
    assert_eq!(ran.exit, 0, "{ran:?}\n{report:#}");
    let dependent = &report["batching"]["order_dependent"];
    assert_eq!(dependent.as_array().map(Vec::len), Some(1), "{report:#}");
    assert_eq!(dependent[0]["test"], clean);
    assert_eq!(dependent[0]["batched"], "fail");
    assert_eq!(
        strings(&dependent[0]["alone"]),
        ["pass", "pass", "pass"],
        "{report:#}"
    );
    let order = strings(&dependent[0]["batch_order"]);
    let at = |id: &str| order.iter().position(|t| t == id);
    assert!(at(pollutes) < at(clean), "{order:?}");
    assert!(
        dependent[0]["next"]
            .as_str()
            .is_some_and(|n| n.starts_with("candor order ") && n.contains("test_clean")),
        "{report:#}"
    );
    assert!(
        ran.stderr.contains("order-dependent in its batch"),
        "{ran:?}"
    );
}

const POLICY_TWO_JOBS: &str = "[lane]\nreplay = \"touched\"\njobs = 2\n";

/// Python for a test module whose tests meet other runner processes in `meet/` beside the
/// module: `arrive()` leaves this process's mark, `partner(seconds)` says whether a mark
/// of another process still running appeared within that time (the subject's own wait,
/// not this suite's).
const MEET: &str = concat!(
    "import os\nimport pathlib\nimport time\n\n",
    "MEET = pathlib.Path(__file__).parent / 'meet'\n\n\n",
    "def arrive():\n    MEET.mkdir(exist_ok=True)\n    (MEET / str(os.getpid())).touch()\n\n\n",
    "def alive(pid):\n    try:\n        os.kill(pid, 0)\n    except OSError:\n        return False\n    return True\n\n\n",
    "def partner(seconds):\n",
    "    deadline = time.monotonic() + seconds\n",
    "    while time.monotonic() < deadline:\n",
    "        others = [int(p.name) for p in MEET.iterdir() if p.name != str(os.getpid())]\n",
    "        if any(alive(pid) for pid in others):\n",
    "            return True\n",
    "        time.sleep(0.05)\n",
    "    return False\n\n\n",
);

/// #15 item 3, the adversary's diff: `test_needs_company` passes only while another
/// pytest process runs beside it. Rounds side by side could all be green; the last round
/// runs with nothing beside it, it is red there and red alone: rejected.
#[test]
fn a_test_green_only_beside_another_process_is_not_accepted() {
    let tests = format!(
        "{MEET}def test_needs_company():\n    arrive()\n    assert partner(3)\n\n\ndef test_plain():\n    assert True\n"
    );
    let suite = change_adding(POLICY_TWO_JOBS, &tests);
    let (ran, report) = gate_report(&suite);
    let needy = "tests/test_change.py::test_needs_company";
    assert_eq!(ran.exit, 1, "{ran:?}\n{report:#}");
    let batching = &report["batching"];
    assert_eq!(batching["jobs"], 2, "{report:#}");
    assert_eq!(batching["parallel"], "rounds", "{report:#}");
    assert_eq!(batching["solo_round"], 3, "{report:#}");
    let third = &batching["rounds"][2];
    assert_eq!(third["round"], 3);
    assert_eq!(third["batches"][0]["beside_others"], false, "{report:#}");
    assert_eq!(
        third["batches"][0]["exit_code"], 1,
        "red with nothing beside it"
    );
    assert_eq!(strings(&batching["replayed_alone"]), [needy], "{report:#}");
    let alone: Vec<&serde_json::Value> = report["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .filter(|r| r["test"] == needy)
        .collect();
    assert_eq!(alone.len(), 3);
    assert!(
        alone
            .iter()
            .all(|r| r["outcome"] == "fail" && r["batch"].is_null()),
        "{report:#}"
    );
}

/// #15 item 3: `test_fixed_path` holds a fixed path (created exclusively) while it looks
/// for company: two processes side by side collide on it and one goes red. A good change
/// must not be rejected for the lane's own parallelism: red beside another process, it is
/// replayed alone, green there, and the change is accepted.
#[test]
fn a_test_red_only_beside_another_process_does_not_reject_a_good_change() {
    let tests = format!(
        concat!(
            "{}",
            "def test_fixed_path():\n",
            "    lock = MEET.parent / 'fixed.lock'\n",
            "    fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY)\n",
            "    try:\n        arrive()\n        partner(2)\n",
            "    finally:\n        os.close(fd)\n        lock.unlink()\n\n\n",
            "def test_plain():\n    assert True\n",
        ),
        MEET
    );
    let suite = change_adding(POLICY_TWO_JOBS, &tests);
    let (ran, report) = gate_report(&suite);
    let fixed = "tests/test_change.py::test_fixed_path";
    assert_eq!(ran.exit, 0, "{ran:?}\n{report:#}");
    assert_eq!(report["batching"]["parallel"], "rounds", "{report:#}");
    let red_beside = report["batching"]["rounds"]
        .as_array()
        .expect("rounds")
        .iter()
        .any(|round| round["batches"][0]["exit_code"] == 1);
    // When the rounds side by side collided (the usual case), the test went alone.
    if red_beside {
        assert_eq!(
            strings(&report["batching"]["replayed_alone"]),
            [fixed],
            "{report:#}"
        );
        assert_eq!(
            report["batching"]["order_dependent"][0]["beside_others"], true,
            "{report:#}"
        );
    }
    let judged: Vec<&serde_json::Value> = report["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .filter(|r| r["test"] == fixed)
        .collect();
    assert_eq!(judged.len(), 3);
    assert!(judged.iter().all(|r| r["outcome"] == "pass"), "{report:#}");
}
