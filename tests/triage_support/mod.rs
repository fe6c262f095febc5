//! Helpers shared by the triage, rerun and `candor test` tests: a fresh copy of a fixture
//! suite per test (optionally a git repository), the candor binary run in it with a clean
//! environment, and its JSON lines read back.

#![allow(dead_code, reason = "each test crate uses a different subset")]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use candor::env_vars::EnvVars;

/// The variable the fixture suites read to decide how their webhook test fails.
pub const MODE: &str = "TRIAGE_FIXTURE_MODE";

/// A temporary directory holding a copy of `tests/fixtures/triage/<name>` at
/// `<temp>/repo`.
pub struct Suite {
    pub temp: tempfile::TempDir,
    pub repo: PathBuf,
}

/// What one candor invocation did.
#[derive(Debug)]
pub struct Ran {
    pub exit: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Ran {
    /// Every stdout line as JSON.
    pub fn json(&self) -> Vec<serde_json::Value> {
        self.stdout
            .lines()
            .map(|line| {
                serde_json::from_str(line)
                    .unwrap_or_else(|e| panic!("not JSON ({e}): {line}\n{self:?}"))
            })
            .collect()
    }

    /// The JSON lines of one type.
    pub fn lines_of(&self, kind: &str) -> Vec<serde_json::Value> {
        self.json()
            .into_iter()
            .filter(|line| line["type"] == kind)
            .collect()
    }
}

pub fn suite(name: &str) -> Suite {
    let temp = tempfile::tempdir().expect("a temp dir");
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/triage")
        .join(name);
    let repo = temp.path().join("repo");
    copy_dir(&source, &repo);
    Suite { temp, repo }
}

/// An empty repository folder, not a git repository.
pub fn empty() -> Suite {
    let temp = tempfile::tempdir().expect("a temp dir");
    let repo = temp.path().join("repo");
    std::fs::create_dir_all(&repo).expect("the repository folder");
    Suite { temp, repo }
}

pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create the copy");
    for entry in std::fs::read_dir(from).expect("read the fixture") {
        let entry = entry.expect("a fixture entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("a file type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy a fixture file");
        }
    }
}

impl Suite {
    /// Writes `content` to `name` in the repository.
    pub fn write(&self, name: &str, content: &str) {
        let path = self.repo.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(&path, content).expect("write");
    }

    /// Lists `test` in the reliability file with `tier`.
    pub fn tier(&self, test: &str, tier: &str) {
        self.write(
            ".ci/test-reliability.yaml",
            &format!("tests:\n  - id: {test}\n    tier: {tier}\n"),
        );
    }

    /// Makes the copy a git repository on `main` with everything committed, then a branch
    /// `change` with one more commit; returns (merge base, HEAD).
    pub fn git_with_change(&self) -> (String, String) {
        git(&self.repo, &["init", "--quiet", "-b", "main"]);
        self.write(".gitignore", "target/\n.candor/\n");
        git(&self.repo, &["add", "-A"]);
        git(&self.repo, &["commit", "--quiet", "-m", "the suite"]);
        let base = git(&self.repo, &["rev-parse", "HEAD"]);
        git(&self.repo, &["checkout", "--quiet", "-b", "change"]);
        git(
            &self.repo,
            &["commit", "--quiet", "--allow-empty", "-m", "a change"],
        );
        (base, git(&self.repo, &["rev-parse", "HEAD"]))
    }

    /// candor in the repository, with a clean environment and `vars` on top.
    pub fn candor(&self, args: &[&str], vars: &[(&str, &str)]) -> Ran {
        let mut command = Command::new(env!("CARGO_BIN_EXE_candor"));
        command
            .args(args)
            .current_dir(&self.repo)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", std::env::var_os("HOME").unwrap_or_default())
            .env("TZ", "UTC")
            .env(EnvVars::CANDOR_DB, self.temp.path().join("history.db"))
            .envs(vars.iter().copied())
            .stdin(Stdio::null());
        // Toolchains and caches the runners need, when the host has them.
        for name in [
            "CARGO_HOME",
            "RUSTUP_HOME",
            "RUSTUP_TOOLCHAIN",
            "GOPATH",
            "GOCACHE",
            "GOROOT",
            "PYENV_ROOT",
            "PYENV_VERSION",
            "VIRTUAL_ENV",
        ] {
            if let Some(value) = std::env::var_os(name) {
                command.env(name, value);
            }
        }
        let output = command.output().expect("candor runs");
        let ran = Ran {
            exit: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8(output.stdout).expect("utf-8 stdout"),
            stderr: String::from_utf8(output.stderr).expect("utf-8 stderr"),
        };
        if args.windows(2).any(|pair| pair == ["--format", "json"]) {
            validate_json_lines(&ran.stdout);
        }
        ran
    }
}

/// Issue #13 item 2 (a): every line a command prints with `--format json` validates
/// against the committed `docs/events.schema.json`.
pub fn validate_json_lines(stdout: &str) {
    static SCHEMA: std::sync::OnceLock<jsonschema::Validator> = std::sync::OnceLock::new();
    let validator = SCHEMA.get_or_init(|| {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/events.schema.json");
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let schema: serde_json::Value = serde_json::from_str(&text).expect("the schema is JSON");
        jsonschema::validator_for(&schema).expect("the schema is a valid JSON Schema")
    });
    for line in stdout.lines() {
        let value: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        let errors: Vec<String> = validator
            .iter_errors(&value)
            .map(|e| format!("{e} at {}", e.instance_path()))
            .collect();
        assert!(
            errors.is_empty(),
            "a line does not match docs/events.schema.json: {line}\n{}",
            errors.join("\n")
        );
    }
}

impl Ran {
    /// Exit code, stdout and stderr as one text, the temporary directory shown as
    /// `[TEMP]` and full shas and sha256s as placeholders, for snapshots.
    pub fn redacted(&self, suite: &Suite) -> String {
        let mut text = format!(
            "exit: {}\n--- stdout\n{}--- stderr\n{}",
            self.exit, self.stdout, self.stderr
        );
        for temp in [
            suite.temp.path().to_path_buf(),
            suite
                .temp
                .path()
                .canonicalize()
                .expect("the temp dir exists"),
        ] {
            text = text.replace(&temp.display().to_string(), "[TEMP]");
        }
        let hashes = regex::Regex::new(r"\b[0-9a-f]{64}\b").expect("a regex");
        let text = hashes.replace_all(&text, "[SHA256]");
        let shas = regex::Regex::new(r"\b[0-9a-f]{40}\b").expect("a regex");
        shas.replace_all(&text, "[SHA]").into_owned()
    }
}

pub fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
        .output()
        .expect("git runs");
    assert!(output.status.success(), "git {args:?}: {output:?}");
    String::from_utf8(output.stdout)
        .expect("utf-8")
        .trim()
        .to_owned()
}

/// A `[[fingerprint]]` table.
pub fn fingerprint(
    id: &str,
    test: &str,
    exception: &str,
    message_regex: &str,
    frame: &str,
    runner: &str,
) -> String {
    format!(
        "[[fingerprint]]\nid = \"{id}\"\ntest = \"{test}\"\nexception = \"{exception}\"\nmessage_regex = '{message_regex}'\nframe = \"{frame}\"\nconditions = {{ runner = \"{runner}\" }}\nlast_seen = 2026-10-01\nowner = \"@payments-oncall\"\n"
    )
}

/// The date the tests take as today: six days after the fixtures' `last_seen`.
pub const TODAY: &str = "2026-10-07";
