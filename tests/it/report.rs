//! `candor report` end to end (#19): the HTML report from a generated history in a real
//! SQLite file, checked as text and in a real headless Chromium; the Markdown comment,
//! the job summary and the annotations from a real red run.

use crate::history_gen;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use regex::Regex;

const SEED: u64 = 20_261_201;

fn candor(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_candor"))
        .args(args)
        .current_dir(dir)
        .env_remove("GITHUB_STEP_SUMMARY")
        .env("CANDOR_TODAY", "2026-12-01")
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

fn ok(output: &Output) -> String {
    assert!(
        output.status.success(),
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone()).unwrap()
}

/// A git repository (so candor finds its root) holding a generated history.
fn repository(tests: usize, runs: usize) -> tempfile::TempDir {
    eprintln!("history seed {SEED}");
    let dir = tempfile::tempdir().unwrap();
    let status = Command::new("git")
        .args(["init", "-q", "-b", "main"])
        .current_dir(dir.path())
        .status()
        .unwrap();
    assert!(status.success());
    history_gen::generate(
        dir.path(),
        &history_gen::Shape {
            tests,
            runs,
            seed: SEED,
        },
    );
    dir
}

/// `(test id, runs, failures, tier)` for every row of the flakiest-tests table.
fn table_rows(html: &str) -> Vec<(String, u64, u64, String)> {
    let row = Regex::new(
        r#"<tr data-test="([^"]+)">.*?<td class="num runs">(\d+)</td><td class="num failures">(\d+)</td>.*?<td class="tier"><span[^>]*>([a-z]+)</span>"#,
    )
    .unwrap();
    row.captures_iter(html)
        .map(|c| {
            (
                c[1].to_owned(),
                c[2].parse().unwrap(),
                c[3].parse().unwrap(),
                c[4].to_owned(),
            )
        })
        .collect()
}

/// Every chart's declared points and counted marks.
fn charts(html: &str) -> Vec<(String, usize, usize)> {
    let svg = Regex::new(r#"(?s)<svg class="([a-z]+)"[^>]*data-points="(\d+)"[^>]*>(.*?)</svg>"#)
        .unwrap();
    svg.captures_iter(html)
        .map(|c| {
            (
                c[1].to_owned(),
                c[2].parse().unwrap(),
                c[3].matches(r#"class="mark"#).count(),
            )
        })
        .collect()
}

fn tests_json(dir: &Path) -> HashMap<String, serde_json::Value> {
    ok(&candor(dir, &["tests", "--format", "json"]))
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .filter(|value| value["type"] == "test")
        .map(|value| (value["id"].as_str().unwrap().to_owned(), value))
        .collect()
}

#[test]
fn html_report_is_self_contained_deterministic_and_agrees_with_candor_tests() {
    let dir = repository(60, 39);
    let out = dir.path().join("report.html");
    ok(&candor(dir.path(), &["report", "--html", "report.html"]));
    let html = std::fs::read_to_string(&out).unwrap();
    ok(&candor(dir.path(), &["report", "--html", "again.html"]));
    assert_eq!(
        html,
        std::fs::read_to_string(dir.path().join("again.html")).unwrap(),
        "the same history gives the same report"
    );

    for forbidden in [
        "<script", "http://", "https://", "<link", " src=", "@import", "url(",
    ] {
        assert!(
            !html.contains(forbidden),
            "the report must not load anything: {forbidden}"
        );
    }

    let rows = table_rows(&html);
    assert!(
        rows.len() >= 20,
        "every failing test is ranked: {}",
        rows.len()
    );
    let tests = tests_json(dir.path());
    for (id, runs, failures, tier) in &rows {
        let listed = &tests[id];
        assert_eq!(listed["runs"].as_u64(), Some(*runs), "{id} runs");
        assert_eq!(
            listed["failures"].as_u64(),
            Some(*failures),
            "{id} failures"
        );
        assert_eq!(listed["tier"].as_str(), Some(tier.as_str()), "{id} tier");
    }
    // A test that fails every run is broken, not flaky: it ranks below every flaky one.
    let broken = history_gen::test_id(9);
    let position = rows.iter().position(|(id, ..)| *id == broken).unwrap();
    assert!(
        rows[..position]
            .iter()
            .all(|(_, runs, failures, _)| failures < runs)
    );

    let charts = charts(&html);
    let strips = charts.iter().filter(|(kind, ..)| kind == "strip").count();
    assert_eq!(strips, rows.len(), "one outcome strip per ranked test");
    assert!(charts.iter().any(|(kind, ..)| kind == "heatmap"));
    assert!(charts.iter().any(|(kind, ..)| kind == "trend"));
    for (kind, points, marks) in &charts {
        assert_eq!(points, marks, "{kind}: as many marks as points");
    }
    for (id, runs, ..) in &rows {
        let strip = Regex::new(&format!(
            r#"<svg class="strip" role="img" aria-label="{}: (\d+) runs"#,
            regex::escape(id)
        ))
        .unwrap();
        let shown: u64 = strip.captures(&html).unwrap()[1].parse().unwrap();
        assert_eq!(
            shown, *runs,
            "{id}: the strip shows every run of its window"
        );
    }
    assert!(html.contains("FP-001"), "the fingerprint is named");
    assert!(html.contains("no fingerprint"), "unmatched shapes are said");
    assert!(
        html.contains(&history_gen::test_id(7)),
        "the ledger's test is listed"
    );
}

#[test]
fn filters_narrow_the_report_and_bad_ones_are_refused() {
    let dir = repository(30, 30);
    ok(&candor(
        dir.path(),
        &[
            "report",
            "--html",
            "one.html",
            "--tests",
            "tests/test_mod007.py::*",
        ],
    ));
    let html = std::fs::read_to_string(dir.path().join("one.html")).unwrap();
    let rows = table_rows(&html);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].0, history_gen::test_id(7));
    assert!(html.contains("tests matching tests/test_mod007.py::*"));

    ok(&candor(
        dir.path(),
        &["report", "--html", "feature.html", "--branch", "feature"],
    ));
    let feature = std::fs::read_to_string(dir.path().join("feature.html")).unwrap();
    // Runs 9, 19 and 29 are the feature branch's.
    assert!(feature.contains("<b>3</b>runs"), "three feature runs");

    ok(&candor(
        dir.path(),
        &[
            "report",
            "--html",
            "late.html",
            "--since",
            "2026-05-29T00:00:00Z",
        ],
    ));
    let late = std::fs::read_to_string(dir.path().join("late.html")).unwrap();
    assert!(late.contains("runs since 2026-05-29 00:00 UTC"));

    let bad = candor(
        dir.path(),
        &["report", "--html", "x.html", "--since", "yesterday"],
    );
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("is not a date"));
    let none = candor(dir.path(), &["report"]);
    assert_eq!(none.status.code(), Some(2), "an output must be asked for");
    assert!(!dir.path().join("x.html").exists(), "nothing half-written");
}

const JUNIT: &str = r#"<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" tests="3" failures="2" errors="0" skipped="0">
<testcase classname="tests.test_pay" name="test_refund" file="tests/test_pay.py" line="30" time="0.01">
<failure message="KeyError: 'currency'">def test_refund():
&gt;       wait()

tests/test_pay.py:31: KeyError</failure></testcase>
<testcase classname="tests.test_pay" name="test_webhook" file="tests/test_pay.py" line="10" time="0.02">
<failure message="TimeoutError: Timed out after 5s">def test_webhook():
&gt;       raise TimeoutError("Timed out after 5s")
E       TimeoutError: Timed out after 5s

tests/test_pay.py:14: TimeoutError</failure></testcase>
<testcase classname="tests.test_pay" name="test_ok" file="tests/test_pay.py" line="40" time="0.01"/>
</testsuite></testsuites>
"#;

#[test]
fn markdown_comment_summary_and_annotations_for_a_red_run() {
    let dir = repository(5, 3);
    std::fs::write(
        dir.path().join("candor.toml"),
        r#"[[fingerprint]]
id = "FP-007"
test = "tests/test_pay.py::test_webhook"
exception = "TimeoutError"
message_regex = 'Timed out after \d+s'
frame = "tests/test_pay.py:14"
conditions = {}
last_seen = 2026-11-20
owner = "@payments"
"#,
    )
    .unwrap();
    std::fs::write(dir.path().join("junit.xml"), JUNIT).unwrap();
    let summary = dir.path().join("summary.md");
    let output = Command::new(env!("CARGO_BIN_EXE_candor"))
        .args([
            "report",
            "--markdown",
            "--github-annotations",
            "--gitlab-codequality",
            "cq.json",
            "junit.xml",
        ])
        .current_dir(dir.path())
        .env("GITHUB_STEP_SUMMARY", &summary)
        .env("CANDOR_TODAY", "2026-12-01")
        .output()
        .unwrap();
    let text = ok(&output);
    assert!(
        text.contains("2 red tests: 1 keeps this change from merging."),
        "{text}"
    );
    assert!(
        text.contains("| `tests/test_pay.py::test_refund` |"),
        "{text}"
    );
    assert!(text.contains("known flake FP-007"), "{text}");
    assert!(text.contains("<details><summary><code>tests/test_pay.py::test_refund</code>"));
    let annotations: Vec<&str> = text.lines().filter(|l| l.starts_with("::error ")).collect();
    assert_eq!(
        annotations.len(),
        1,
        "only the regression is annotated: {annotations:?}"
    );
    assert!(
        annotations[0].starts_with("::error file=tests/test_pay.py,line=31,"),
        "{}",
        annotations[0]
    );
    let written = std::fs::read_to_string(&summary).unwrap();
    assert!(written.contains("### candor: red tests"));
    let cq: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("cq.json")).unwrap())
            .unwrap();
    assert_eq!(cq.as_array().unwrap().len(), 1);
    assert_eq!(cq[0]["location"]["path"], "tests/test_pay.py");
}

/// Whether the browser check can run here: Debian's chromium and Python's playwright.
fn browser() -> Option<PathBuf> {
    let chromium = PathBuf::from("/usr/bin/chromium");
    let playwright = Command::new("python3")
        .args(["-c", "import playwright.sync_api"])
        .output()
        .is_ok_and(|o| o.status.success());
    if chromium.exists() && playwright {
        return Some(chromium);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "CI must run the browser test: install Debian's chromium and `pip install playwright` (.ci/run does)"
    );
    eprintln!("skipped: the browser test needs /usr/bin/chromium and python3's playwright");
    None
}

#[test]
fn html_report_opens_in_chromium_offline_with_every_mark() {
    let Some(chromium) = browser() else { return };
    for (tests, runs, name) in [(60, 39, "small"), (2_000, 199, "2000x200")] {
        let dir = repository(tests, runs);
        ok(&candor(dir.path(), &["report", "--html", "report.html"]));
        let listing = dir.path().join("tests.jsonl");
        std::fs::write(
            &listing,
            ok(&candor(dir.path(), &["tests", "--format", "json"])),
        )
        .unwrap();
        let artifacts = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-screenshots");
        std::fs::create_dir_all(&artifacts).unwrap();
        let screenshot = artifacts.join(format!("report-{name}.png"));
        let output = Command::new("python3")
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser/check_report.py"))
            .arg(&chromium)
            .arg(dir.path().join("report.html"))
            .arg(&listing)
            .arg(&screenshot)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "browser check failed for {name}\nstdout:\n{stdout}\nstderr:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(stdout.contains("charts checked:"), "{stdout}");
        eprintln!("{name}: {stdout}screenshot: {}", screenshot.display());
    }
}
