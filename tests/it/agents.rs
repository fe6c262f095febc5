//! `candor agents` (issue #18 item 1): the rules block rendered from the merge base's
//! candor.toml into AGENTS.md and CLAUDE.md in a real git repository, text outside the
//! markers kept byte for byte, a second run changing nothing, `--check` failing with the
//! diff once the base's policy moves on.

use crate::triage_support;

use triage_support::{Suite, empty, git};

const POLICY: &str = r#"[rerun]
max_attempts_per_change = 3
budget_entries = 4
budget_days = 10
fingerprint_expiry_days = 30

[triage]
summary_phrases = ["passed on rerun", "known flake"]

[[fingerprint]]
id = "FP-001"
test = "tests/test_webhook.py::test_payment_webhook"
exception = "TimeoutError"
message_regex = 'Timed out after \d+s waiting for `stub`'
frame = "tests/test_webhook.py:7"
conditions = { ci = true, min_workers = 2, runner = "pytest" }
last_seen = 2026-10-01
owner = "@payments-oncall"

[[ban]]
id = "no-live-prices"
paths = ["tests/**"]
pattern = 'requests\.get\('
message = "Read prices from tests/fixtures/prices.json"
source = "INC-42, 2026-09"
"#;

const SECOND_FINGERPRINT: &str = r#"
[[fingerprint]]
id = "FP-002"
test = "tests/test_cart.py::test_total"
exception = "ConnectionResetError"
message_regex = 'Connection reset by peer'
frame = "tests/test_cart.py:12"
conditions = {}
last_seen = 2026-11-01
owner = "@cart"
"#;

const NOTES: &str = "# Notes for agents\n\nRun `make lint` before pushing.\n";

/// A repository on `main` whose committed candor.toml is [`POLICY`], with hand-written
/// AGENTS.md notes.
fn repo() -> Suite {
    let suite = empty();
    git(&suite.repo, &["init", "--quiet", "-b", "main"]);
    suite.write("candor.toml", POLICY);
    suite.write(".gitignore", ".candor/\n");
    suite.write("AGENTS.md", NOTES);
    commit(&suite, "policy");
    suite
}

fn commit(suite: &Suite, message: &str) {
    git(&suite.repo, &["add", "-A"]);
    git(&suite.repo, &["commit", "--quiet", "-m", message]);
}

fn read(suite: &Suite, name: &str) -> String {
    std::fs::read_to_string(suite.repo.join(name)).expect("the file exists")
}

#[test]
fn the_block_names_every_number_fingerprint_and_ban_and_keeps_the_notes() {
    let suite = repo();
    let ran = suite.candor(&["agents"], &[]);
    assert_eq!(ran.exit, 0, "{ran:?}");
    assert!(ran.stdout.contains("AGENTS.md: updated"), "{ran:?}");
    assert!(ran.stdout.contains("CLAUDE.md: created"), "{ran:?}");
    let agents = read(&suite, "AGENTS.md");
    assert!(agents.starts_with(NOTES), "the notes stay first, untouched");
    let block = &agents[NOTES.len()..];
    assert_eq!(read(&suite, "CLAUDE.md"), block.trim_start_matches('\n'));
    insta::assert_snapshot!("agents_block", block);
}

#[test]
fn a_second_run_changes_nothing_and_check_passes() {
    let suite = repo();
    assert_eq!(suite.candor(&["agents"], &[]).exit, 0);
    let first = (read(&suite, "AGENTS.md"), read(&suite, "CLAUDE.md"));
    let again = suite.candor(&["agents"], &[]);
    assert_eq!(again.exit, 0, "{again:?}");
    assert!(again.stdout.contains("AGENTS.md: current"), "{again:?}");
    assert_eq!(
        (read(&suite, "AGENTS.md"), read(&suite, "CLAUDE.md")),
        first
    );
    let check = suite.candor(&["agents", "--check"], &[]);
    assert_eq!(check.exit, 0, "{check:?}");
}

/// Issue #18 item 1: `--check` fails, printing the diff, after a fingerprint is added to
/// the base's candor.toml; it writes nothing.
#[test]
fn check_fails_with_the_diff_after_a_fingerprint_is_added() {
    let suite = repo();
    assert_eq!(suite.candor(&["agents"], &[]).exit, 0);
    commit(&suite, "the rules block");
    let written = read(&suite, "AGENTS.md");
    suite.write("candor.toml", &format!("{POLICY}{SECOND_FINGERPRINT}"));
    commit(&suite, "FP-002");

    let check = suite.candor(&["agents", "--check"], &[]);
    assert_eq!(check.exit, 1, "{check:?}");
    assert_eq!(read(&suite, "AGENTS.md"), written, "--check writes nothing");
    insta::assert_snapshot!("check_after_a_new_fingerprint", check.stdout);
    assert!(
        check.stderr.contains("the candor block is stale"),
        "{check:?}"
    );

    assert_eq!(suite.candor(&["agents"], &[]).exit, 0);
    assert_eq!(suite.candor(&["agents", "--check"], &[]).exit, 0);
}

/// The policy is the merge base's: a branch that edits candor.toml (a fingerprint of its
/// own) does not get it into the block.
#[test]
fn a_branch_cannot_write_its_own_policy_into_the_block() {
    let suite = repo();
    git(&suite.repo, &["checkout", "--quiet", "-b", "change"]);
    suite.write("candor.toml", &format!("{POLICY}{SECOND_FINGERPRINT}"));
    commit(&suite, "pardon my own failure");
    let ran = suite.candor(&["agents"], &[]);
    assert_eq!(ran.exit, 0, "{ran:?}");
    let agents = read(&suite, "AGENTS.md");
    assert!(agents.contains("FP-001"), "{agents}");
    assert!(!agents.contains("FP-002"), "{agents}");
}

#[test]
fn a_named_file_is_kept_around_its_block_and_bad_markers_write_nothing() {
    let suite = repo();
    let around = "intro\n<!-- candor:begin -->\nold rules\n<!-- candor:end -->\noutro\n";
    suite.write("docs/AGENT_RULES.md", around);
    let ran = suite.candor(&["agents", "--file", "docs/AGENT_RULES.md"], &[]);
    assert_eq!(ran.exit, 0, "{ran:?}");
    let text = read(&suite, "docs/AGENT_RULES.md");
    assert!(text.starts_with("intro\n<!-- candor:begin -->\n"), "{text}");
    assert!(text.ends_with("<!-- candor:end -->\noutro\n"), "{text}");
    assert!(!text.contains("old rules"));
    assert!(
        !suite.repo.join("CLAUDE.md").exists(),
        "only the named file"
    );

    let broken = "a\n<!-- candor:begin -->\nb\n";
    suite.write("CLAUDE.md", broken);
    let ran = suite.candor(&["agents"], &[]);
    assert_eq!(ran.exit, 2, "{ran:?}");
    assert!(ran.stderr.contains("CLAUDE.md:line 2"), "{ran:?}");
    assert!(ran.stderr.contains("hint:"), "{ran:?}");
    assert_eq!(read(&suite, "CLAUDE.md"), broken);
    assert_eq!(
        read(&suite, "AGENTS.md"),
        NOTES,
        "no file is written when one is bad"
    );
}

#[test]
fn print_shows_the_block_and_touches_nothing() {
    let suite = repo();
    let ran = suite.candor(&["agents", "--print", "--format", "json"], &[]);
    assert_eq!(ran.exit, 0, "{ran:?}");
    let lines = ran.lines_of("agents-block");
    assert_eq!(lines.len(), 1, "{ran:?}");
    assert!(
        lines[0]["text"]
            .as_str()
            .unwrap()
            .starts_with("<!-- candor:begin -->")
    );
    assert_eq!(read(&suite, "AGENTS.md"), NOTES);
    assert!(!suite.repo.join("CLAUDE.md").exists());
}
