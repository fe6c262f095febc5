//! Output safety (#14 item 9): the commands in triage's `next:` advice are POSIX-quoted,
//! so a test id holding `$(touch pwned)` pasted into `sh -c` runs nothing; invisible
//! format characters (the bidi override U+202E) in a test's name are shown escaped to
//! people and kept exact in JSON.

#![cfg(unix)]

use crate::triage_support;

use std::os::unix::fs::PermissionsExt as _;
use std::process::Command;

use triage_support::{TODAY, empty, fingerprint};

const PWNED: &str = "tests/x.py::test_h[$(touch pwned)]";

/// One failing case of `tests/x.py`, as pytest's JUnit XML (xunit1) writes it.
fn junit(name: &str) -> String {
    let name = name.replace('&', "&amp;").replace('<', "&lt;");
    format!(
        r#"<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" tests="1" failures="1" errors="0" skipped="0">
<testcase classname="tests.x" name="{name}" file="tests/x.py" line="4">
<failure message="TimeoutError: Timed out after 2.5s">def test_h():
&gt;       raise TimeoutError("Timed out after 2.5s")
E       TimeoutError: Timed out after 2.5s

tests/x.py:7: TimeoutError</failure>
</testcase></testsuite></testsuites>
"#
    )
}

/// The command inside the backticks of the advice line starting with `prefix`.
fn advised(stdout: &str, prefix: &str) -> String {
    let line = stdout
        .lines()
        .find(|line| line.trim_start().starts_with(prefix))
        .unwrap_or_else(|| panic!("no `{prefix}` advice in:\n{stdout}"));
    let start = line.find('`').expect("a command in backticks") + 1;
    let end = start + line[start..].find('`').expect("its closing backtick");
    line[start..end].to_owned()
}

#[test]
fn advice_pasted_into_a_shell_runs_no_substitution() {
    let suite = empty();
    suite.write("red.xml", &junit("test_h[$(touch pwned)]"));
    // A stand-in `candor` on PATH that records the words the shell gave it.
    let bin = suite.temp.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let stub = bin.join("candor");
    std::fs::write(&stub, "#!/bin/sh\nprintf '%s\\n' \"$@\" > \"$ARGS_FILE\"\n").unwrap();
    std::fs::set_permissions(&stub, std::fs::Permissions::from_mode(0o755)).unwrap();
    let paste = |command: &str| {
        let args_file = suite.temp.path().join("args.txt");
        let status = Command::new("sh")
            .arg("-c")
            .arg(command)
            .current_dir(&suite.repo)
            .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
            .env("ARGS_FILE", &args_file)
            .status()
            .expect("sh runs");
        assert!(status.success(), "{command}");
        assert!(
            !suite.repo.join("pwned").exists(),
            "the advice ran a substitution: {command}"
        );
        std::fs::read_to_string(&args_file).expect("the stub ran")
    };

    let cases = [
        ("trusted", None, "regression:", "show"),
        ("probation", None, "unverified:", "compare"),
        (
            "probation",
            Some(fingerprint(
                "FP-001",
                PWNED,
                "TimeoutError",
                r"Timed out after \d+(\.\d+)?s",
                "tests/x.py:7",
                "pytest",
            )),
            "known-flake:",
            "rerun",
        ),
    ];
    for (tier, policy, prefix, subcommand) in cases {
        suite.write(
            ".ci/test-reliability.yaml",
            &format!("tests:\n  - id: {PWNED:?}\n    tier: {tier}\n"),
        );
        suite.write("candor.toml", &policy.unwrap_or_default());
        let ran = suite.candor(&["triage", "red.xml"], &[("CANDOR_TODAY", TODAY)]);
        let command = advised(&ran.stdout, prefix);
        assert_eq!(
            command,
            format!("candor {subcommand} '{PWNED}'"),
            "#14 item 9: {ran:?}"
        );
        assert_eq!(paste(&command), format!("{subcommand}\n{PWNED}\n"));
    }
}

#[test]
fn bidi_controls_are_escaped_for_people_and_exact_in_json() {
    let suite = empty();
    let name = "test_\u{202E}gnp.exe";
    suite.write("red.xml", &junit(name));
    let human = suite.candor(&["triage", "red.xml"], &[("CANDOR_TODAY", TODAY)]);
    assert!(
        !human.stdout.contains('\u{202E}'),
        "U+202E reached the terminal: {human:?}"
    );
    assert!(
        human
            .stdout
            .contains("tests/x.py::test_\\u{202E}gnp.exe  [unlisted]"),
        "{human:?}"
    );
    let json = suite.candor(
        &["triage", "red.xml", "--format", "json"],
        &[("CANDOR_TODAY", TODAY)],
    );
    assert_eq!(
        json.lines_of("verdict")[0]["test"],
        format!("tests/x.py::{name}")
    );
}
