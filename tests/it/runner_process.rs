//! The process layer on real child processes: timeouts end in TERM then KILL to the whole
//! group, output is drained concurrently, argv reaches the child untouched.

use std::path::Path;
use std::time::Duration;

use candor::runner::process::{Executor, Exit, Invocation, ProcessError, SystemExecutor};

fn invocation(dir: &Path, argv: &[&str]) -> Invocation {
    Invocation::new(
        argv.iter().map(|s| (*s).to_owned()).collect(),
        dir,
        dir.join("logs/child.log"),
    )
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

#[test]
fn a_child_that_ignores_sigterm_is_killed_after_the_grace_period() {
    let dir = tempfile::tempdir().expect("temp dir");
    // The handler is installed before "ready" is printed; the 2 s timeout leaves python
    // ample time to get there, and the log's "ready" shows that it did.
    let child = invocation(
        dir.path(),
        &[
            "python3",
            "-c",
            "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nprint('ready', flush=True)\ntime.sleep(60)",
        ],
    )
    .timeout(Some(Duration::from_secs(2)), Duration::from_millis(300));
    let outcome = SystemExecutor.execute(&child).expect("the child runs");
    let log = read(&child.log);
    assert!(
        log.contains("ready"),
        "python never got to ignore SIGTERM:\n{log}"
    );
    assert!(outcome.timed_out);
    assert_eq!(outcome.exit, Exit::Signal(9));
    assert_eq!(outcome.exit_code(), 128 + 9);
    assert!(
        outcome.duration < Duration::from_secs(30),
        "{:?}",
        outcome.duration
    );
    assert!(log.contains("killed by signal 9"), "{log}");
    assert!(log.contains("timed out"), "{log}");
}

#[test]
fn a_child_that_honours_sigterm_ends_with_signal_15() {
    let dir = tempfile::tempdir().expect("temp dir");
    let child = invocation(dir.path(), &["sleep", "60"])
        .timeout(Some(Duration::from_millis(200)), Duration::from_secs(20));
    let outcome = SystemExecutor.execute(&child).expect("the child runs");
    assert!(outcome.timed_out);
    assert_eq!(outcome.exit, Exit::Signal(15));
    assert_eq!(outcome.exit_code(), 143);
    // Ended by TERM, long before the grace period would have run out.
    assert!(
        outcome.duration < Duration::from_secs(15),
        "{:?}",
        outcome.duration
    );
}

#[test]
fn the_timeout_reaches_grandchildren_through_the_process_group() {
    let dir = tempfile::tempdir().expect("temp dir");
    // The background sleep holds stdout open; if it survived, draining would wait for it.
    let child = invocation(dir.path(), &["sh", "-c", "sleep 60 & sleep 60"])
        .timeout(Some(Duration::from_millis(300)), Duration::from_secs(20));
    let outcome = SystemExecutor.execute(&child).expect("the child runs");
    assert!(outcome.timed_out);
    assert_eq!(outcome.signal(), Some(15));
    assert!(
        outcome.duration < Duration::from_secs(15),
        "{:?}",
        outcome.duration
    );
    assert!(!read(&child.log).contains("kept the output open"));
}

#[test]
fn descendants_left_behind_after_a_normal_exit_do_not_hang_the_run() {
    let dir = tempfile::tempdir().expect("temp dir");
    let child = invocation(dir.path(), &["sh", "-c", "sleep 60 & echo leader done"]);
    let outcome = SystemExecutor.execute(&child).expect("the child runs");
    assert_eq!(outcome.exit, Exit::Code(0));
    assert!(!outcome.timed_out);
    let log = read(&child.log);
    assert!(log.contains("leader done"), "{log}");
    assert!(log.contains("their process group was killed"), "{log}");
}

#[test]
fn stdout_and_stderr_are_drained_concurrently() {
    let dir = tempfile::tempdir().expect("temp dir");
    // 4 MiB on each stream, alternating in 64 KiB blocks: far beyond a pipe's buffer, so a
    // reader that drained one stream before the other would deadlock (and time out).
    let child = invocation(
        dir.path(),
        &[
            "python3",
            "-c",
            "import sys\nblock = 'o' * 65535 + '\\n'\nfor _ in range(64):\n    sys.stdout.write(block); sys.stdout.flush()\n    sys.stderr.write(block.replace('o', 'e')); sys.stderr.flush()",
        ],
    )
    .timeout(Some(Duration::from_secs(60)), Duration::from_secs(1));
    let outcome = SystemExecutor.execute(&child).expect("the child runs");
    assert!(!outcome.timed_out, "draining deadlocked");
    assert_eq!(outcome.exit, Exit::Code(0));
    let log = read(&child.log);
    let count = |wanted: u8| log.bytes().filter(|b| *b == wanted).count();
    // Every byte of both streams arrived (the header adds a few letters of its own).
    assert!(count(b'o') >= 64 * 65535, "stdout lost output");
    assert!(count(b'e') >= 64 * 65535, "stderr lost output");
}

#[test]
fn stdout_can_go_to_its_own_file_while_stderr_stays_in_the_log() {
    let dir = tempfile::tempdir().expect("temp dir");
    let report = dir.path().join("out/report.jsonl");
    let child = invocation(
        dir.path(),
        &["sh", "-c", "echo '{\"report\":1}'; echo 'to stderr' >&2"],
    )
    .stdout_to(&report);
    let outcome = SystemExecutor.execute(&child).expect("the child runs");
    assert!(outcome.success());
    assert_eq!(read(&report), "{\"report\":1}\n");
    let log = read(&child.log);
    assert!(log.contains("to stderr"), "{log}");
    assert!(!log.contains("{\"report\":1}"), "{log}");
    assert!(
        log.contains(&format!("# stdout: written to {}", report.display())),
        "{log}"
    );
}

#[test]
fn the_log_header_names_argv_cwd_and_start_and_the_footer_the_exit() {
    let dir = tempfile::tempdir().expect("temp dir");
    let child = invocation(dir.path(), &["sh", "-c", "exit 3", "$(touch pwned)"]);
    let outcome = SystemExecutor.execute(&child).expect("the child runs");
    assert_eq!(outcome.exit, Exit::Code(3));
    assert_eq!(outcome.signal(), None);
    let log = read(&child.log);
    assert!(
        log.contains(r#"# argv: ["sh","-c","exit 3","$(touch pwned)"]"#),
        "{log}"
    );
    assert!(
        log.contains(&format!("# cwd: {}", dir.path().display())),
        "{log}"
    );
    assert!(log.contains("# started: "), "{log}");
    assert!(
        log.contains("# env removed: GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE"),
        "{log}"
    );
    assert!(log.contains("# ended: exit code 3"), "{log}");
    assert!(!dir.path().join("pwned").exists());
}

#[test]
fn argv_reaches_the_child_untouched_and_stdin_is_empty() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("argv.json");
    let tricky = ["$(touch pwned)", "a b", "'quoted'", "*", "", "--"];
    let mut argv = vec![
        "python3",
        "-c",
        "import json, sys\nprint(json.dumps({'argv': sys.argv[1:], 'stdin': sys.stdin.read()}))",
    ];
    argv.extend(tricky);
    let child = invocation(dir.path(), &argv).stdout_to(&out);
    let outcome = SystemExecutor.execute(&child).expect("the child runs");
    assert!(outcome.success());
    let seen: serde_json::Value = serde_json::from_str(&read(&out)).expect("json");
    assert_eq!(seen["argv"], serde_json::json!(tricky));
    assert_eq!(seen["stdin"], "");
    assert!(!dir.path().join("pwned").exists());
}

#[test]
fn removed_variables_are_gone_and_set_ones_are_there() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("env.json");
    let child = invocation(
        dir.path(),
        &[
            "python3",
            "-c",
            "import json, os\nprint(json.dumps(dict(os.environ)))",
        ],
    )
    .env_remove("HOME")
    .env("CANDOR_PROBE", "yes")
    .stdout_to(&out);
    SystemExecutor.execute(&child).expect("the child runs");
    let env: serde_json::Value = serde_json::from_str(&read(&out)).expect("json");
    assert!(env.get("HOME").is_none(), "HOME was not removed");
    for name in ["GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"] {
        assert!(env.get(name).is_none(), "{name} reached the child");
    }
    assert_eq!(env["CANDOR_PROBE"], "yes");
}

#[test]
fn a_missing_program_is_a_spawn_error_naming_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let child = invocation(dir.path(), &["candor-no-such-program-anywhere"]);
    let error = SystemExecutor.execute(&child).expect_err("nothing to run");
    assert!(matches!(error, ProcessError::Spawn { .. }));
    assert!(
        error
            .to_string()
            .contains("candor-no-such-program-anywhere"),
        "{error}"
    );
}

/// candor knows what it wrote to a runner's log: a log the child (or anyone) changed after
/// candor wrote it is told apart from one left alone, byte for byte and whatever its
/// length; a log this process never wrote is unknown.
#[test]
fn a_log_changed_after_candor_wrote_it_is_found() {
    use candor::runner::process::log_as_written;
    let dir = tempfile::tempdir().expect("temp dir");
    let child = invocation(
        dir.path(),
        &[
            "python3",
            "-c",
            "print('=== 1 failed, 1 passed in 0.05s ===')",
        ],
    );
    SystemExecutor.execute(&child).expect("the child runs");
    assert_eq!(log_as_written(&child.log), Some(true));
    let text = read(&child.log);
    // The same length: " failed" and " passed" are both seven bytes.
    std::fs::write(&child.log, text.replace(" failed", " passed")).unwrap();
    assert_eq!(log_as_written(&child.log), Some(false));
    std::fs::write(&child.log, &text).unwrap();
    assert_eq!(log_as_written(&child.log), Some(true), "put back as it was");
    assert_eq!(log_as_written(&dir.path().join("logs/other.log")), None);
}

/// A runner whose report is its stdout (go's events) has that file digested too.
#[test]
fn a_stdout_report_changed_after_candor_wrote_it_is_found() {
    use candor::runner::process::log_as_written;
    let dir = tempfile::tempdir().expect("temp dir");
    let events = dir.path().join("logs/events.json");
    let child = invocation(
        dir.path(),
        &[
            "python3",
            "-c",
            "print('{\"Action\":\"fail\",\"Test\":\"TestTotal\"}')",
        ],
    )
    .stdout_to(&events);
    SystemExecutor.execute(&child).expect("the child runs");
    assert_eq!(log_as_written(&events), Some(true));
    assert_eq!(log_as_written(&child.log), Some(true));
    let text = read(&events);
    std::fs::write(&events, text.replace("fail", "pass")).unwrap();
    assert_eq!(log_as_written(&events), Some(false));
    assert_eq!(
        log_as_written(&child.log),
        Some(true),
        "the log is untouched"
    );
}
