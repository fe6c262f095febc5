//! `candor mcp` driven by a real MCP client (issue #18 item 3): the official Python SDK's
//! stdio client (tests/mcp/client.py) against temporary git repositories with real pytest
//! suites. The client only records what the server answered; every check is here. Without
//! the Python `mcp` package a test prints one line and passes, except under `CI=true`,
//! where it fails (CI installs the package, see .ci/run).

use crate::triage_support;

use std::path::Path;
use std::process::{Command, Stdio};

use candor::env_vars::EnvVars;
use serde_json::Value;
use triage_support::{MODE, Suite, TODAY, empty, fingerprint, git, suite};

const WEBHOOK: &str = "tests/test_webhook.py::test_payment_webhook";
const SLOW: &str = "tests/test_slow.py::test_slow";

/// Runs one scenario of the client; `None` (after one printed line) when the Python `mcp`
/// package is missing outside CI.
fn client(suite: &Suite, scenario: &str, vars: &[(&str, &str)]) -> Option<Value> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/client.py");
    let mut command = Command::new("python3");
    command
        .arg(&script)
        .arg(scenario)
        .current_dir(&suite.repo)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", std::env::var_os("HOME").unwrap_or_default())
        .env("TZ", "UTC")
        .env(EnvVars::CANDOR_DB, suite.temp.path().join("history.db"))
        .env("CANDOR_TODAY", TODAY)
        .env("CANDOR_MCP_BIN", env!("CARGO_BIN_EXE_candor"))
        .env("CANDOR_MCP_REPO", &suite.repo)
        .envs(vars.iter().copied())
        .stdin(Stdio::null());
    for name in ["PYENV_ROOT", "PYENV_VERSION", "VIRTUAL_ENV", "PYTHONPATH"] {
        if let Some(value) = std::env::var_os(name) {
            command.env(name, value);
        }
    }
    let output = command.output().expect("python3 runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    if output.status.code() == Some(3) {
        let ci = std::env::var(EnvVars::CI).is_ok_and(|value| value == "true");
        assert!(!ci, "CI must run the MCP client tests: {stderr}");
        println!("skipped: {}", stderr.trim());
        return None;
    }
    assert!(
        output.status.success(),
        "client.py {scenario} failed: {stderr}\nstdout: {}",
        String::from_utf8_lossy(&output.stdout)
    );
    Some(
        serde_json::from_slice(&output.stdout).unwrap_or_else(|error| {
            panic!(
                "client.py {scenario} printed no JSON ({error}): {}\nstderr: {stderr}",
                String::from_utf8_lossy(&output.stdout)
            )
        }),
    )
}

/// The webhook suite on a branch, the webhook test trusted with FP-001 fingerprinting its
/// timeout, and a red run of `mode` stored in the history (as tests/rerun.rs builds it).
fn red(mode: &str) -> Suite {
    let suite = suite("pytest");
    suite.write(
        "candor.toml",
        &fingerprint(
            "FP-001",
            WEBHOOK,
            "TimeoutError",
            r"Timed out after \d+(\.\d+)?s waiting for webhook stub on port \d+",
            "tests/test_webhook.py:7",
            "pytest",
        ),
    );
    suite.tier(WEBHOOK, "trusted");
    suite.git_with_change();
    let report = suite.temp.path().join("red.xml");
    let pytest = Command::new("python3")
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider", "-o"])
        .arg("junit_family=xunit1")
        .arg(format!("--junitxml={}", report.display()))
        .current_dir(&suite.repo)
        .env(MODE, mode)
        .stdout(Stdio::null())
        .status()
        .expect("pytest runs");
    assert_eq!(pytest.code(), Some(1), "the webhook test fails");
    let report = report.display().to_string();
    let ingested = suite.candor(
        &["ingest", &report, "--workers", "4"],
        &[("CANDOR_TODAY", TODAY)],
    );
    assert_eq!(ingested.exit, 0, "{ingested:?}");
    suite
}

fn ledger(suite: &Suite) -> Option<Vec<u8>> {
    std::fs::read(suite.repo.join(".flake-ledger.tsv")).ok()
}

fn events<'a>(result: &'a Value, kind: &str) -> Vec<&'a Value> {
    result["structured"]["events"]
        .as_array()
        .unwrap_or_else(|| panic!("no events: {result:#}"))
        .iter()
        .filter(|event| event["type"] == kind)
        .collect()
}

/// Issue #18 item 3: the read-only set without `--allow-run`, all fourteen with it, each
/// with an object schema; an acting tool called anyway is a JSON-RPC error.
#[test]
fn tools_are_read_only_unless_allow_run() {
    let suite = empty();
    let Some(answer) = client(&suite, "tools", &[]) else {
        return;
    };
    let names = |key: &str| -> Vec<String> {
        answer[key]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|name| name.as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(answer["read_only"]["server"], "candor", "{answer:#}");
    assert_eq!(names("read_only"), candor::agents::READ_ONLY_TOOLS);
    let all = names("allow_run");
    let expected: Vec<&str> = candor::agents::READ_ONLY_TOOLS
        .iter()
        .chain(&candor::agents::ACTING_TOOLS)
        .copied()
        .collect();
    assert_eq!(all, expected);
    for (name, schema) in answer["allow_run"]["schemas"].as_object().unwrap() {
        assert_eq!(schema["type"], "object", "{name}: {schema:#}");
    }
    assert_eq!(
        answer["allow_run"]["schemas"]["rerun"]["required"],
        serde_json::json!(["test"])
    );
    let refused = &answer["read_only"]["rerun_without_allow_run"]["jsonrpc_error"];
    assert_eq!(refused["code"], -32602, "{answer:#}");
    assert!(
        refused["message"].as_str().unwrap().contains("--allow-run"),
        "{refused:#}"
    );
}

/// Issue #18 item 3: `triage` on a red run answers with the verdicts; `rerun` of the
/// regression is a tool result with isError and the reason, the ledger untouched;
/// malformed parameters are JSON-RPC errors and the server answers the next call.
#[test]
fn triage_then_a_refused_rerun_then_malformed_parameters() {
    let suite = red("exception");
    let before = ledger(&suite);
    let Some(answer) = client(
        &suite,
        "triage_and_refusal",
        &[("CANDOR_MCP_TEST", WEBHOOK)],
    ) else {
        return;
    };
    let triage = &answer["triage"];
    assert_eq!(triage["is_error"], false, "{triage:#}");
    let verdicts = events(triage, "verdict");
    assert_eq!(verdicts.len(), 1, "{triage:#}");
    assert_eq!(verdicts[0]["test"], WEBHOOK);
    assert_eq!(verdicts[0]["verdict"], "regression", "{triage:#}");
    assert_eq!(verdicts[0]["rerun_allowed"], false);
    assert_eq!(events(triage, "triage-summary")[0]["regression"], 1);

    let rerun = &answer["rerun"];
    assert_eq!(rerun["is_error"], true, "{rerun:#}");
    assert_eq!(events(rerun, "rerun")[0]["status"], "refused", "{rerun:#}");
    let text = rerun["text"][0].as_str().unwrap();
    assert!(text.starts_with("refused:"), "{text}");
    assert!(text.contains("regression"), "{text}");
    assert_eq!(
        ledger(&suite),
        before,
        "a refused rerun writes no ledger line"
    );

    for key in ["malformed", "unknown_field", "out_of_range"] {
        assert_eq!(
            answer[key]["jsonrpc_error"]["code"], -32602,
            "{key}: {answer:#}"
        );
    }
    assert!(
        answer["out_of_range"]["jsonrpc_error"]["message"]
            .as_str()
            .unwrap()
            .contains("--runs"),
        "clap's own message names the option: {answer:#}"
    );
    let after = &answer["after"];
    assert_eq!(
        after["is_error"], false,
        "the server is still alive: {after:#}"
    );
    let executions = events(after, "execution");
    assert_eq!(executions.len(), 1, "{after:#}");
    assert_eq!(executions[0]["test_id"], WEBHOOK);

    let explain = answer["explain"]["text"][0].as_str().unwrap();
    assert!(
        explain.contains("`FP-001`"),
        "the base's fingerprint: {explain}"
    );
    assert!(
        explain.contains("- `regression`:"),
        "the verdict table: {explain}"
    );
    let lint = &answer["lint_summary"];
    assert_eq!(lint["is_error"], false, "{lint:#}");
    assert_eq!(events(lint, "unbacked-claim").len(), 1, "{lint:#}");
}

/// Issue #18 item 3: `rerun` of a known flake returns its receipt, and the ledger holds
/// the pending line and the outcome line the receipt quotes.
#[test]
fn a_known_flake_is_rerun_with_its_receipt() {
    let suite = red("flake");
    let Some(answer) = client(
        &suite,
        "flake_rerun",
        &[("CANDOR_MCP_TEST", WEBHOOK), (MODE, "flake")],
    ) else {
        return;
    };
    let rerun = &answer["rerun"];
    assert_eq!(rerun["is_error"], false, "{rerun:#}");
    let line = events(rerun, "rerun");
    assert_eq!(line.len(), 1, "{rerun:#}");
    assert_eq!(line[0]["status"], "ran");
    assert_eq!(line[0]["fingerprint"], "FP-001");
    let receipt: Vec<&str> = line[0]["ledger"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert_eq!(receipt.len(), 2, "{rerun:#}");
    assert!(receipt[0].ends_with("\tpending"), "{receipt:?}");
    let written = String::from_utf8(ledger(&suite).expect("a ledger")).unwrap();
    for line in receipt {
        assert!(written.contains(line), "{line:?} not in\n{written}");
    }
}

/// A pytest project on a branch whose slow test, when CANDOR_MCP_FIFO is set, starts a
/// grandchild, writes both pids to the FIFO and waits: a runner that only cancellation
/// ends. Without the variable it passes at once.
fn slow_project() -> Suite {
    let suite = empty();
    suite.write(
        "pyproject.toml",
        "[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\n",
    );
    suite.write(
        "tests/test_slow.py",
        r#"import os
import subprocess


def test_slow():
    fifo = os.environ.get("CANDOR_MCP_FIFO")
    if not fifo:
        return
    child = subprocess.Popen(["sleep", "3600"])
    with open(fifo, "w") as out:
        out.write(f"{os.getpid()} {child.pid}\n")
    child.wait()
"#,
    );
    suite.write(".gitignore", ".candor/\n__pycache__/\n");
    git(&suite.repo, &["init", "--quiet", "-b", "main"]);
    git(&suite.repo, &["add", "-A"]);
    git(&suite.repo, &["commit", "--quiet", "-m", "the suite"]);
    git(&suite.repo, &["checkout", "--quiet", "-b", "change"]);
    git(
        &suite.repo,
        &["commit", "--quiet", "--allow-empty", "-m", "a change"],
    );
    suite
}

/// Issue #18 item 3: `compare` sends progress notifications that grow, and answers with
/// the comparison.
#[test]
fn compare_sends_progress_notifications() {
    let suite = slow_project();
    let Some(answer) = client(&suite, "compare_progress", &[("CANDOR_MCP_TEST", SLOW)]) else {
        return;
    };
    let compare = &answer["compare"];
    assert_eq!(compare["is_error"], false, "{compare:#}");
    let line = events(compare, "compare");
    assert_eq!(line.len(), 1, "{compare:#}");
    assert_eq!(line[0]["verdict"], "passes-both", "{compare:#}");
    let progress = answer["progress"].as_array().unwrap();
    assert!(
        progress.len() >= 2,
        "a start line and counted runs: {progress:#?}"
    );
    assert!(
        progress[0]["message"]
            .as_str()
            .unwrap_or("")
            .starts_with("comparing"),
        "{progress:#?}"
    );
    let values: Vec<f64> = progress
        .iter()
        .map(|p| p["progress"].as_f64().unwrap())
        .collect();
    assert!(
        values.windows(2).all(|pair| pair[0] < pair[1]),
        "progress grows: {values:?}"
    );
    assert!(
        progress.iter().any(|p| p["total"].as_f64() == Some(4.0)),
        "the runs are counted against both sides' plan: {progress:#?}"
    );
}

/// Whether a process is alive (a zombie waiting for its reaper is not).
fn alive(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        let state = stat
            .rsplit_once(") ")
            .and_then(|(_, rest)| rest.chars().next());
        state != Some('Z')
    })
}

/// Issue #18 item 3: a `compare` cancelled while its runner runs stops the runner's
/// process group (the test and its grandchild are gone), removes the merge base's
/// worktree, and the next call is answered.
#[test]
fn a_cancelled_compare_leaves_no_process_and_no_worktree() {
    let suite = slow_project();
    let fifo = suite.temp.path().join("pids.fifo");
    let made = Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(made.success(), "a FIFO at {}", fifo.display());
    let fifo = fifo.display().to_string();
    let Some(answer) = client(
        &suite,
        "cancelled_compare",
        &[("CANDOR_MCP_TEST", SLOW), ("CANDOR_MCP_FIFO", &fifo)],
    ) else {
        return;
    };
    assert!(
        answer.get("answer").is_none(),
        "a cancelled call is not answered: {answer:#}"
    );
    let pids: Vec<&str> = answer["pids"].as_str().unwrap().split(' ').collect();
    assert_eq!(pids.len(), 2, "{answer:#}");
    for pid in pids {
        assert!(!alive(pid), "process {pid} outlived the cancellation");
    }
    assert_eq!(answer["after"]["is_error"], false, "{answer:#}");
    let worktrees = suite.repo.join(".candor/worktrees");
    let left: Vec<_> = std::fs::read_dir(&worktrees)
        .map(|dir| dir.map(|e| e.expect("an entry").path()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "worktrees left: {left:?}");
    let listed = git(&suite.repo, &["worktree", "list", "--porcelain"]);
    assert_eq!(
        listed.matches("worktree ").count(),
        1,
        "only the main worktree: {listed}"
    );
}
