//! Fakes of the workflows' ports for their tests: a git whose commits are maps of files
//! and whose worktrees are folders in the test's temporary directory, clocks that move
//! only when told, an executor that answers by a rule over the argv, and notes kept in a
//! list. They stand beside the real-git, real-runner integration tests, not for them.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use jiff::Timestamp;
use sha2::{Digest, Sha256};

use super::Clock;
use crate::events::{Collected, Event};
use crate::git::{GitError, Repository, TreeFile};
use crate::runner::process::{Executor, Invocation, ProcessError, ProcessOutcome, StdoutTo};

/// A commit's files, by repository-relative path.
pub type Tree = BTreeMap<String, Vec<u8>>;

/// A repository of named commits held in memory.
#[derive(Debug, Default)]
pub struct FakeGit {
    /// Commits by name (the names stand for shas).
    pub commits: BTreeMap<String, Tree>,
    /// What `default_branch` answers.
    pub default_branch: Option<String>,
    /// What `merge_base` answers, whatever it is asked.
    pub merge_base: Option<String>,
    /// What `changed_tracked_files` answers.
    pub tracked_changes: Vec<String>,
    /// Worktrees checked out and not removed.
    pub worktrees: Mutex<Vec<PathBuf>>,
}

impl FakeGit {
    fn tree(&self, revision: &str) -> Result<&Tree, GitError> {
        self.commits
            .get(revision)
            .ok_or_else(|| GitError::UnknownRevision {
                revision: revision.to_owned(),
                dir: PathBuf::from("fake"),
            })
    }
}

fn oid(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

impl Repository for FakeGit {
    fn default_branch(&self) -> Result<Option<String>, GitError> {
        Ok(self.default_branch.clone())
    }

    fn merge_base(&self, _left: &str, _right: &str) -> Result<Option<String>, GitError> {
        Ok(self.merge_base.clone())
    }

    fn checkout_worktree(&self, path: &Path, commit: &str) -> Result<(), GitError> {
        let clear = |source| GitError::Clear {
            path: path.to_owned(),
            source,
        };
        for (file, bytes) in self.tree(commit)? {
            let target = path.join(file);
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent).map_err(clear)?;
            }
            std::fs::write(&target, bytes).map_err(clear)?;
        }
        self.worktrees
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(path.to_owned());
        Ok(())
    }

    fn remove_worktree(&self, path: &Path) -> Result<(), GitError> {
        if path.exists() {
            std::fs::remove_dir_all(path).map_err(|source| GitError::Clear {
                path: path.to_owned(),
                source,
            })?;
        }
        self.worktrees
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .retain(|kept| kept != path);
        Ok(())
    }

    fn show(&self, revision: &str, path: &str) -> Result<Option<Vec<u8>>, GitError> {
        Ok(self.tree(revision)?.get(path).cloned())
    }

    fn changed_tracked_files(&self) -> Result<Vec<String>, GitError> {
        Ok(self.tracked_changes.clone())
    }

    /// The change as `git diff --unified=0` prints it, hunks from `similar`.
    fn diff_unified(&self, base: &str, head: &str) -> Result<Vec<u8>, GitError> {
        let (old, new) = (self.tree(base)?, self.tree(head)?);
        let mut paths: Vec<&String> = old.keys().chain(new.keys()).collect();
        paths.sort();
        paths.dedup();
        let mut out = String::new();
        for path in paths {
            let (before, after) = (old.get(path), new.get(path));
            if before == after {
                continue;
            }
            let text = |bytes: Option<&Vec<u8>>| {
                String::from_utf8_lossy(bytes.map_or(&[][..], Vec::as_slice)).into_owned()
            };
            let (before_text, after_text) = (text(before), text(after));
            let _ = writeln!(out, "diff --git a/{path} b/{path}");
            let (from, to) = match (before, after) {
                (None, _) => {
                    out.push_str("new file mode 100644\n");
                    ("/dev/null".to_owned(), format!("b/{path}"))
                }
                (_, None) => {
                    out.push_str("deleted file mode 100644\n");
                    (format!("a/{path}"), "/dev/null".to_owned())
                }
                _ => (format!("a/{path}"), format!("b/{path}")),
            };
            let diff = similar::TextDiff::from_lines(&before_text, &after_text);
            out.push_str(
                &diff
                    .unified_diff()
                    .context_radius(0)
                    .header(&from, &to)
                    .to_string(),
            );
        }
        Ok(out.into_bytes())
    }

    fn tree_files(&self, revision: &str, folder: &str) -> Result<Vec<TreeFile>, GitError> {
        Ok(self
            .tree(revision)?
            .iter()
            .filter(|(path, _)| {
                folder.is_empty()
                    || path
                        .strip_prefix(folder)
                        .is_some_and(|rest| rest.starts_with('/'))
            })
            .map(|(path, bytes)| TreeFile {
                path: path.clone(),
                mode: "100644".to_owned(),
                oid: oid(bytes),
            })
            .collect())
    }

    fn read_blobs(
        &self,
        oids: &[String],
        each: &mut dyn FnMut(usize, &[u8]),
    ) -> Result<(), GitError> {
        let blobs: BTreeMap<String, &Vec<u8>> = self
            .commits
            .values()
            .flat_map(Tree::values)
            .map(|bytes| (oid(bytes), bytes))
            .collect();
        for (index, wanted) in oids.iter().enumerate() {
            let bytes = blobs.get(wanted).ok_or_else(|| GitError::Failed {
                args: "cat-file --batch".to_owned(),
                dir: PathBuf::from("fake"),
                stderr: format!("no blob {wanted}"),
            })?;
            each(index, bytes);
        }
        Ok(())
    }
}

/// A clock that moves `step` further each time it is read, on 2026-12-01: a workflow
/// that looks at it before every run sees time pass run by run.
pub struct TickingClock {
    now: Cell<Duration>,
    step: Duration,
}

impl TickingClock {
    /// Starts at the epoch.
    pub fn new(step: Duration) -> TickingClock {
        TickingClock {
            now: Cell::new(Duration::ZERO),
            step,
        }
    }
}

impl Clock for TickingClock {
    fn now(&self) -> Timestamp {
        let now = self.now.get();
        self.now.set(now + self.step);
        Timestamp::UNIX_EPOCH + now
    }

    fn today(&self) -> jiff::civil::Date {
        jiff::civil::Date::constant(2026, 12, 1)
    }
}

/// What a rule answers for one invocation: exit code, stdout, report.
pub struct Answer {
    /// The exit code.
    pub code: i32,
    /// Written to the invocation's stdout (its log, or its stdout file).
    pub stdout: String,
    /// Written to the invocation's report path, when it has one.
    pub report: Option<String>,
}

/// An executor whose answer is a function of the argv: for workflows whose run count
/// and order depend on what earlier runs showed (`order`'s bisection).
pub struct RuleExecutor<F> {
    rule: F,
    /// Every argv executed, in order.
    pub seen: Mutex<Vec<Vec<String>>>,
}

impl<F: Fn(&[String]) -> Answer + Send + Sync> RuleExecutor<F> {
    /// Answers with `rule`.
    pub fn new(rule: F) -> Self {
        RuleExecutor {
            rule,
            seen: Mutex::new(Vec::new()),
        }
    }

    /// The argvs executed so far.
    pub fn argvs(&self) -> Vec<Vec<String>> {
        self.seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

impl<F: Fn(&[String]) -> Answer + Send + Sync> Executor for RuleExecutor<F> {
    fn execute(&self, invocation: &Invocation) -> Result<ProcessOutcome, ProcessError> {
        self.seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(invocation.argv.clone());
        let answer = (self.rule)(&invocation.argv);
        let write = |path: &Path, text: &str| {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(|source| ProcessError::Io {
                    what: "write",
                    path: path.to_owned(),
                    source,
                })?;
            }
            std::fs::write(path, text).map_err(|source| ProcessError::Io {
                what: "write",
                path: path.to_owned(),
                source,
            })
        };
        match &invocation.stdout {
            StdoutTo::Log => write(&invocation.log, &answer.stdout)?,
            StdoutTo::File(path) => {
                write(path, &answer.stdout)?;
                write(&invocation.log, "")?;
            }
        }
        if let (Some(path), Some(report)) = (&invocation.report, &answer.report) {
            write(path, report)?;
        }
        Ok(ProcessOutcome {
            started_at: Timestamp::UNIX_EPOCH,
            duration: Duration::from_millis(10),
            exit: crate::runner::process::Exit::Code(answer.code),
            timed_out: false,
        })
    }
}

/// The progress lines, notes and warnings among `events`, as `(kind, message)`.
pub fn said(events: &Collected) -> Vec<(&'static str, String)> {
    events
        .events
        .iter()
        .filter_map(|event| match event {
            Event::Progress(p) if p.step.is_none() => Some(("progress", p.message.clone())),
            Event::Warning(w) => Some(("warning", w.message.clone())),
            Event::Note(n) => Some(("note", n.message.clone())),
            _ => None,
        })
        .collect()
}

/// The counted steps among `events`, as `(done, total)`.
pub fn steps(events: &Collected) -> Vec<(u64, u64)> {
    events
        .events
        .iter()
        .filter_map(|event| match event {
            Event::Progress(p) => p.step.map(|s| (s.done, s.total)),
            _ => None,
        })
        .collect()
}

/// A pytest JUnit report of `cases`: `(id, "pass" | "fail" | "skip")`, ids as
/// `path/file.py::name`.
pub fn junit(cases: &[(&str, &str)]) -> String {
    let mut xml = String::from(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<testsuites><testsuite name=\"pytest\">\n",
    );
    for (id, outcome) in cases {
        let (file, name) = id.split_once("::").unwrap_or(("tests/test_x.py", id));
        let classname = file.trim_end_matches(".py").replace('/', ".");
        let _ = write!(
            xml,
            "<testcase classname=\"{classname}\" name=\"{name}\" file=\"{file}\" time=\"0.01\">"
        );
        match *outcome {
            "fail" => {
                let _ = write!(
                    xml,
                    "<failure message=\"AssertionError: boom\">{file}:3: in {name}\n    assert False\nE   AssertionError: boom</failure>"
                );
            }
            "skip" => xml.push_str("<skipped message=\"not today\"/>"),
            _ => {}
        }
        xml.push_str("</testcase>\n");
    }
    xml.push_str("</testsuite></testsuites>\n");
    xml
}

/// A repository root in a temporary folder holding `files`, and the history beside it.
pub struct Scene {
    /// Keeps the folder.
    pub temp: tempfile::TempDir,
    /// The work tree.
    pub root: PathBuf,
}

impl Scene {
    /// A work tree with `files` written.
    pub fn new(files: &Tree) -> Scene {
        let temp = tempfile::tempdir().expect("a temporary folder");
        let root = temp.path().join("repo");
        for (path, bytes) in files {
            let target = root.join(path);
            std::fs::create_dir_all(target.parent().expect("a parent")).expect("a folder");
            std::fs::write(target, bytes).expect("a file");
        }
        std::fs::create_dir_all(&root).expect("the root");
        Scene { temp, root }
    }

    /// The history, a SQLite file beside the work tree.
    pub fn history(&self) -> super::History {
        super::History::at(crate::history::Location::Sqlite(
            self.temp.path().join("history.db"),
        ))
    }
}

/// A commit's files from `(path, text)` pairs.
pub fn tree(files: &[(&str, &str)]) -> Tree {
    files
        .iter()
        .map(|(path, text)| ((*path).to_owned(), text.as_bytes().to_vec()))
        .collect()
}

/// The working copy at `head`, as settings resolve it outside CI.
pub fn workspace(head: &str) -> crate::cli::settings::Workspace {
    crate::cli::settings::Workspace {
        ci: crate::ci_env::CiEnv::default(),
        commit: Some(head.to_owned()),
        branch: Some("agent/change".to_owned()),
        merge_base: None,
        default_branch: None,
        change: Err("not needed".to_owned()),
        parse: crate::results::ParseOptions::default(),
    }
}
