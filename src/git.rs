//! git through the `git` program, never a shell: argv only, stdin closed, and the
//! variables that would point git at another repository removed from its environment.
//! Answers only what candor needs (repository root, HEAD, branch, merge base) and keeps
//! the one worktree `compare` measures the merge base in.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;

use crate::env_vars::EnvVars;

/// Failures of a `git` child. A question git answers with "there is none" (not a
/// repository, no commit yet, detached HEAD) is `Ok(None)`, not an error.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// The `git` program could not be started.
    #[error("could not run `git`")]
    Spawn(#[source] std::io::Error),
    /// git ran and failed.
    #[error("`git {args}` failed in {dir}: {stderr}")]
    Failed {
        /// The arguments, space-separated, for the message.
        args: String,
        /// Where it ran.
        dir: PathBuf,
        /// The first line of what git wrote on stderr.
        stderr: String,
    },
    /// A folder candor keeps for git could not be cleared.
    #[error("could not remove {}: {source}", path.display())]
    Clear {
        /// The folder.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The lock that keeps two candor processes' worktree changes apart could not be taken.
    #[error("could not lock {}: {source}; check that the folder is writable", path.display())]
    WorktreeLock {
        /// The lock file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// git printed something that is not UTF-8 where a path or name was expected.
    #[error("`git {args}` printed a non-UTF-8 answer")]
    NotUtf8 {
        /// The arguments, space-separated, for the message.
        args: String,
    },
    /// A revision the caller needs names no commit here.
    #[error("`{revision}` names no commit in {}", dir.display())]
    UnknownRevision {
        /// The revision as given.
        revision: String,
        /// Where git ran.
        dir: PathBuf,
    },
}

impl GitError {
    /// Whether git is simply not installed: callers treat that like "not a repository".
    pub fn is_missing_program(&self) -> bool {
        matches!(self, GitError::Spawn(e) if e.kind() == std::io::ErrorKind::NotFound)
    }
}

/// A directory in which git commands run.
#[derive(Debug, Clone)]
pub struct Git {
    dir: PathBuf,
}

impl Git {
    /// Runs git in `dir` (git itself finds the repository that contains it).
    pub fn new(dir: impl Into<PathBuf>) -> Git {
        Git { dir: dir.into() }
    }

    /// The repository's top-level folder, `None` when `dir` is not inside a work tree.
    pub fn repo_root(&self) -> Result<Option<PathBuf>, GitError> {
        Ok(self
            .answer(&["rev-parse", "--show-toplevel"])?
            .map(PathBuf::from))
    }

    /// The full sha of HEAD, `None` outside a repository or before the first commit.
    pub fn head_sha(&self) -> Result<Option<String>, GitError> {
        self.commit("HEAD")
    }

    /// The checked-out branch's short name, `None` when HEAD is detached or outside a
    /// repository.
    pub fn branch(&self) -> Result<Option<String>, GitError> {
        self.answer(&["symbolic-ref", "--quiet", "--short", "HEAD"])
    }

    /// The best common ancestor of two commits, `None` when they share none or either is
    /// unknown here (a shallow clone, a sha from elsewhere).
    pub fn merge_base(&self, left: &str, right: &str) -> Result<Option<String>, GitError> {
        let (Some(left), Some(right)) = (self.commit(left)?, self.commit(right)?) else {
            return Ok(None);
        };
        let base = self.answer(&["merge-base", &left, &right])?;
        if let Some(base) = &base {
            self.known_commit(base);
        }
        Ok(base)
    }

    /// The commits reachable from `head` but not from `base` (`git rev-list base..head`),
    /// newest first; `None` when either names no commit here.
    pub fn commits_between(&self, base: &str, head: &str) -> Result<Option<Vec<String>>, GitError> {
        let (Some(base), Some(head)) = (self.commit(base)?, self.commit(head)?) else {
            return Ok(None);
        };
        let listed = self.answer(&["rev-list", &format!("{base}..{head}")])?;
        Ok(Some(
            listed
                .map(|text| text.lines().map(str::to_owned).collect())
                .unwrap_or_default(),
        ))
    }

    /// When the commit `revision` names was committed (its committer date), `None` when
    /// it names none here.
    pub fn commit_time(&self, revision: &str) -> Result<Option<jiff::Timestamp>, GitError> {
        let Some(commit) = self.commit(revision)? else {
            return Ok(None);
        };
        let seconds = self.answer_about_object(&["show", "-s", "--format=%ct", &commit])?;
        Ok(seconds
            .and_then(|s| s.parse::<i64>().ok())
            .and_then(|s| jiff::Timestamp::from_second(s).ok()))
    }

    /// The full sha of the commit `revision` names, `None` when it names none here.
    pub fn commit(&self, revision: &str) -> Result<Option<String>, GitError> {
        if revision.starts_with('-') {
            return Ok(None);
        }
        let args = [
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{revision}^{{commit}}"),
        ];
        // A full object id names the same object for good; a ref may move at any time.
        if is_object_id(revision) {
            self.answer_about_object(&args)
        } else {
            let commit = self.answer(&args)?;
            if let Some(commit) = &commit {
                self.known_commit(commit);
            }
            Ok(commit)
        }
    }

    /// Keeps that `commit`, a full id git just gave as a commit's, names a commit: the
    /// lane asks it again by that id (HEAD's sha for the merge base, the merge base's for
    /// every file it reads) and the answer cannot change. The ref that led to it is not
    /// kept.
    fn known_commit(&self, commit: &str) {
        if is_object_id(commit) {
            let question = format!("{commit}^{{commit}}");
            OBJECT_ANSWERS.keep(
                &self.dir,
                &["rev-parse", "--verify", "--quiet", &question],
                commit.as_bytes(),
            );
        }
    }

    /// The branch merge bases are taken against, as [`Git::base_branch`] chooses it
    /// without a CI variable: its reference (`origin/main`, else a local `main`).
    pub fn default_branch(&self) -> Result<Option<String>, GitError> {
        Ok(self.base_branch(None)?.map(|base| base.reference))
    }

    /// The one rule for the branch a change is measured against, shared by every command
    /// that takes a merge base (`triage`, `test`, `rerun`, `compare`, `gate`, `lint diff`,
    /// `ingest`) and every one that counts the default branch's runs (`tests`,
    /// `reliability`, `show`), so that they describe one history:
    ///
    /// - its **name** (as runs record their branch): `ci_default` (the CI service's
    ///   variable, with the variable's name), else `origin/HEAD`'s target, else
    ///   `init.defaultBranch`, `main` or `master`, the first that exists as a
    ///   remote-tracking branch of `origin` or as a local branch;
    /// - its **reference**: `origin/NAME` when that remote-tracking branch exists, since it
    ///   is what CI sees, whatever a local `NAME` holds that was never pushed; else the
    ///   local `NAME`.
    ///
    /// Local commits on `NAME` that `origin/NAME` lacks are listed (`ahead`): they are
    /// not the default branch's history, so `tests` does not count runs made there as the
    /// default branch's, as the merge base taken with `origin/NAME` makes them part of a
    /// change to triage.
    pub fn base_branch(
        &self,
        ci_default: Option<(&str, &str)>,
    ) -> Result<Option<BaseBranch>, GitError> {
        let exists = |reference: &str| -> Result<bool, GitError> {
            Ok(self
                .answer(&["rev-parse", "--verify", "--quiet", reference])?
                .is_some())
        };
        let either = |name: &str| -> Result<bool, GitError> {
            Ok(exists(&format!("refs/remotes/origin/{name}"))?
                || exists(&format!("refs/heads/{name}"))?)
        };
        let mut found: Option<(String, String)> =
            ci_default.map(|(name, variable)| (name.to_owned(), variable.to_owned()));
        if found.is_none()
            && let Some(target) =
                self.answer(&["symbolic-ref", "--quiet", "refs/remotes/origin/HEAD"])?
            && let Some(name) = target.strip_prefix("refs/remotes/origin/")
            && !name.is_empty()
        {
            found = Some((name.to_owned(), "origin/HEAD".to_owned()));
        }
        if found.is_none()
            && let Some(configured) = self.answer(&["config", "--get", "init.defaultBranch"])?
            && !configured.starts_with('-')
            && either(&configured)?
        {
            found = Some((configured, "init.defaultBranch".to_owned()));
        }
        if found.is_none() {
            for candidate in ["main", "master"] {
                if exists(&format!("refs/heads/{candidate}"))? {
                    found = Some((candidate.to_owned(), "a local branch".to_owned()));
                    break;
                }
                if exists(&format!("refs/remotes/origin/{candidate}"))? {
                    found = Some((candidate.to_owned(), "a branch of origin".to_owned()));
                    break;
                }
            }
        }
        let Some((name, found_by)) = found else {
            return Ok(None);
        };
        let remote = format!("refs/remotes/origin/{name}");
        let local = format!("refs/heads/{name}");
        let (reference, ahead) = if exists(&remote)? {
            let ahead = if exists(&local)? {
                self.answer(&[
                    "rev-list",
                    "--max-count=10000",
                    &local,
                    &format!("^{remote}"),
                ])?
                .map(|listed| listed.lines().map(str::to_owned).collect())
                .unwrap_or_default()
            } else {
                Vec::new()
            };
            (format!("origin/{name}"), ahead)
        } else {
            (name.clone(), Vec::new())
        };
        Ok(Some(BaseBranch {
            name,
            reference,
            found_by,
            ahead,
        }))
    }

    /// Checks `commit` out, detached, in a worktree at `path` that candor owns: created on
    /// first use, reused afterwards (its untracked files removed, ignored build output
    /// kept, so a second comparison does not rebuild from nothing). The user's own work
    /// tree is never touched.
    pub fn checkout_worktree(&self, path: &Path, commit: &str) -> Result<(), GitError> {
        let path_text = path.to_string_lossy();
        if path.join(".git").exists() {
            let worktree = Git::new(path);
            worktree.succeed(&["checkout", "--quiet", "--detach", "--force", commit])?;
            worktree.succeed(&["clean", "--quiet", "-ffd"])?;
            return Ok(());
        }
        let _held = self.worktree_lock()?;
        // A folder left by a crash, or a worktree git still lists after its folder went.
        if path.exists() {
            std::fs::remove_dir_all(path).map_err(|source| GitError::Clear {
                path: path.to_owned(),
                source,
            })?;
        }
        self.succeed(&["worktree", "prune"])?;
        self.succeed(&[
            "worktree", "add", "--quiet", "--detach", "--force", &path_text, commit,
        ])
    }

    /// Removes a worktree made by [`Git::checkout_worktree`], folder and registration.
    pub fn remove_worktree(&self, path: &Path) -> Result<(), GitError> {
        let _held = self.worktree_lock()?;
        if path.exists() {
            self.succeed(&["worktree", "remove", "--force", &path.to_string_lossy()])?;
        }
        self.succeed(&["worktree", "prune"])
    }

    /// An exclusive lock, held until dropped, on `candor-worktrees.lock` in the repository's
    /// git folder: git removes `.git/worktrees` when a `worktree remove` or `prune` leaves
    /// it empty, and another candor's `worktree add` in that instant fails ("could not
    /// create directory of '.git/worktrees/…'"), so candor processes change their
    /// worktrees one at a time. Never held while a test runs.
    fn worktree_lock(&self) -> Result<std::fs::File, GitError> {
        let common = self
            .answer(&["rev-parse", "--git-common-dir"])?
            .unwrap_or_else(|| ".git".to_owned());
        let lock_path = self.dir.join(common).join("candor-worktrees.lock");
        let failed = |source| GitError::WorktreeLock {
            path: lock_path.clone(),
            source,
        };
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(failed)?;
        file.lock().map_err(failed)?;
        Ok(file)
    }

    /// Runs git for its effect; any non-zero exit is an error with git's first line.
    fn succeed(&self, args: &[&str]) -> Result<(), GitError> {
        let output = self.command(args).output().map_err(GitError::Spawn)?;
        if output.status.success() {
            return Ok(());
        }
        let stderr = String::from_utf8_lossy(&output.stderr);
        Err(GitError::Failed {
            args: args.join(" "),
            dir: self.dir.clone(),
            stderr: stderr.lines().next().unwrap_or("").trim().to_owned(),
        })
    }

    /// Runs git and returns its trimmed stdout; `None` when git exits non-zero without an
    /// error message (how `--quiet` says "no such thing") or says this is not a repository.
    fn answer(&self, args: &[&str]) -> Result<Option<String>, GitError> {
        let output = self.command(args).output().map_err(GitError::Spawn)?;
        self.understand(args, output)
    }

    /// [`Git::answer`]'s reading of what git said.
    fn understand(
        &self,
        args: &[&str],
        output: std::process::Output,
    ) -> Result<Option<String>, GitError> {
        let joined = || args.join(" ");
        if output.status.success() {
            let text = String::from_utf8(output.stdout)
                .map_err(|_| GitError::NotUtf8 { args: joined() })?;
            let text = text.trim();
            return Ok((!text.is_empty()).then(|| text.to_owned()));
        }
        let stderr = String::from_utf8_lossy(&output.stderr);
        let first_line = stderr.lines().next().unwrap_or("").trim();
        if first_line.is_empty() || first_line.contains("not a git repository") {
            Ok(None)
        } else {
            Err(GitError::Failed {
                args: joined(),
                dir: self.dir.clone(),
                stderr: first_line.to_owned(),
            })
        }
    }

    fn command<S: AsRef<OsStr>>(&self, args: &[S]) -> Command {
        let mut command = Command::new("git");
        command
            .args(args)
            .current_dir(&self.dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Messages are matched above; keep them in English whatever the user's locale.
            .env("LC_ALL", "C");
        for name in EnvVars::GIT_LOCATION_OVERRIDES {
            command.env_remove(name);
        }
        command
    }
}

// What the merge lane asks git: files at a revision, the change between two commits.

/// A file in a commit's tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeFile {
    /// Repository-relative, `/`-separated (bytes that are not UTF-8 replaced).
    pub path: String,
    /// git's mode: `100644`, `100755`, `120000` (a symlink: the blob is its target).
    pub mode: String,
    /// The blob's object id.
    pub oid: String,
}

impl Git {
    /// The content of `path` (repository-relative) at `revision`, as `git show REV:path`
    /// prints it but without any textconv; `None` when no file is there (a missing path
    /// or a folder). A revision that names no commit is an error.
    pub fn show(&self, revision: &str, path: &str) -> Result<Option<Vec<u8>>, GitError> {
        let commit = self.require_commit(revision)?;
        let entries = self.ls_tree(&["-z", "--full-tree", &commit, "--", path])?;
        let Some(file) = entries.into_iter().find(|file| file.path == path) else {
            return Ok(None);
        };
        self.bytes_about_object(&["cat-file", "blob", &file.oid])
            .map(Some)
    }

    /// As [`Git::show`] for each of `paths`, in their order, in two git processes (one
    /// `ls-tree` with every path, one `cat-file --batch`) rather than two a path.
    pub fn show_many(
        &self,
        revision: &str,
        paths: &[&str],
    ) -> Result<Vec<Option<Vec<u8>>>, GitError> {
        // Bounded so that a change touching thousands of files stays under argv's limit.
        const PATHS_A_CALL: usize = 512;
        if paths.is_empty() {
            return Ok(Vec::new());
        }
        let commit = self.require_commit(revision)?;
        let mut entries: std::collections::HashMap<String, String> =
            std::collections::HashMap::new();
        for chunk in paths.chunks(PATHS_A_CALL) {
            let mut args = vec!["-z", "--full-tree", commit.as_str(), "--"];
            args.extend_from_slice(chunk);
            for file in self.ls_tree(&args)? {
                entries.insert(file.path, file.oid);
            }
        }
        // Which blob each path reads, `None` where no file is there (as `show`: a missing
        // path, a folder, a submodule).
        let wanted: Vec<Option<&String>> = paths.iter().map(|path| entries.get(*path)).collect();
        let oids: Vec<String> = wanted.iter().flatten().map(|oid| (*oid).clone()).collect();
        let mut blobs: Vec<Option<Vec<u8>>> = vec![None; oids.len()];
        self.read_blobs(&oids, |index, bytes| blobs[index] = Some(bytes.to_vec()))?;
        let mut blobs = blobs.into_iter();
        Ok(wanted
            .iter()
            .map(|oid| oid.and_then(|_| blobs.next().flatten()))
            .collect())
    }

    /// The entry at `path` (repository-relative) in `revision`'s tree, whose mode tells a
    /// symlink (`120000`) from a file; `None` when nothing is there.
    pub fn tree_entry(&self, revision: &str, path: &str) -> Result<Option<TreeFile>, GitError> {
        let commit = self.require_commit(revision)?;
        Ok(self
            .ls_tree(&["-z", "--full-tree", &commit, "--", path])?
            .into_iter()
            .find(|file| file.path == path))
    }

    /// The git operation the repository is in the middle of, if any: a rebase, `git am`,
    /// a merge, or a cherry-pick or revert (one commit or a sequence). Read
    /// from the files git keeps while one is unfinished, found with `git rev-parse
    /// --git-path` (a linked worktree has its own git directory, and these files are the
    /// worktree's own).
    pub fn unfinished_operation(&self) -> Result<Option<Operation>, GitError> {
        // Order matters: `git rebase` (apply backend) and `git am` share `rebase-apply`,
        // and a cherry-pick's `sequencer` outlives its `CHERRY_PICK_HEAD` once the
        // conflict is committed.
        // A bisection is not one: its checkout is a finished commit, and `git bisect run
        // candor repro …` is how a flaky test's first commit is found.
        const MARKERS: [(&str, Operation); 7] = [
            ("rebase-merge", Operation::Rebase),
            ("rebase-apply/applying", Operation::Am),
            ("rebase-apply", Operation::Rebase),
            ("MERGE_HEAD", Operation::Merge),
            ("CHERRY_PICK_HEAD", Operation::CherryPick),
            ("REVERT_HEAD", Operation::Revert),
            ("sequencer", Operation::Sequence),
        ];
        let mut args = vec!["rev-parse"];
        for (marker, _) in MARKERS {
            args.extend(["--git-path", marker]);
        }
        let Some(paths) = self.answer(&args)? else {
            return Ok(None);
        };
        for ((_, operation), path) in MARKERS.iter().zip(paths.lines()) {
            if self.dir.join(path).exists() {
                return Ok(Some(*operation));
            }
        }
        Ok(None)
    }

    /// The tracked files whose content in the work tree differs from HEAD's, sorted
    /// (untracked files do not count: candor's own `.candor/` folder is one when a
    /// repository does not ignore it).
    pub fn changed_tracked_files(&self) -> Result<Vec<String>, GitError> {
        let listed = self.bytes(&[
            "diff",
            "--name-only",
            "-z",
            "--no-renames",
            "--no-ext-diff",
            "--no-textconv",
            "--no-relative",
            "HEAD",
            "--",
        ])?;
        let mut paths: Vec<String> = listed
            .split(|byte| *byte == 0)
            .filter(|path| !path.is_empty())
            .map(|path| String::from_utf8_lossy(path).into_owned())
            .collect();
        for path in self.hidden_changes()? {
            if !paths.contains(&path) {
                paths.push(path);
            }
        }
        paths.sort();
        Ok(paths)
    }

    /// The tracked files git was told not to look at (`update-index --skip-worktree` or
    /// `--assume-unchanged`) whose work-tree content differs from the index's: `git diff`
    /// lists none of them. A regression committed, then the old code written back under
    /// `--skip-worktree`, ran the replays on the old code while the lane judged HEAD, and
    /// said nothing. A flagged file absent from the work tree (a sparse checkout) is
    /// not one: nothing of it runs.
    fn hidden_changes(&self) -> Result<Vec<String>, GitError> {
        let Some(root) = self.repo_root()? else {
            return Ok(Vec::new());
        };
        let listed = self.bytes(&["ls-files", "-v", "-s", "-z", "--full-name", "--", ":/"])?;
        // `TAG MODE OBJECT STAGE\tPATH`: `S` skip-worktree, a lower-case tag assume-unchanged.
        let flagged: Vec<(String, String)> = listed
            .split(|byte| *byte == 0)
            .filter_map(|entry| {
                let entry = String::from_utf8_lossy(entry);
                let (head, path) = entry.split_once('\t')?;
                let mut fields = head.split(' ');
                let tag = fields.next()?;
                let object = fields.nth(1)?;
                let hidden = tag == "S" || tag.chars().all(|c| c.is_ascii_lowercase());
                (hidden && root.join(path).is_file()).then(|| (path.to_owned(), object.to_owned()))
            })
            .collect();
        if flagged.is_empty() {
            return Ok(Vec::new());
        }
        // In chunks: a repository can flag every file (`core.ignoreStat`), more paths than
        // one command line holds.
        let mut hashed = Vec::with_capacity(flagged.len());
        for chunk in flagged.chunks(512) {
            let mut args = vec!["hash-object".to_owned(), "--".to_owned()];
            args.extend(
                chunk
                    .iter()
                    .map(|(path, _)| root.join(path).to_string_lossy().into_owned()),
            );
            let answer = self.bytes(&args)?;
            hashed.extend(String::from_utf8_lossy(&answer).lines().map(str::to_owned));
        }
        Ok(flagged
            .into_iter()
            .zip(hashed)
            .filter(|((_, object), now)| object != now)
            .map(|((path, _), _)| path)
            .collect())
    }

    /// `git diff --unified=0 --no-color --no-renames BASE HEAD` with everything a user's
    /// configuration could change pinned (prefixes, external diff drivers, textconv,
    /// relative paths, path quoting), ready for [`crate::gate::diff::parse`].
    pub fn diff_unified(&self, base: &str, head: &str) -> Result<Vec<u8>, GitError> {
        self.diff_unified_of(base, head, false, &[])
    }

    /// [`Git::diff_unified`] of `paths` only, every file read as text (`--text`): what
    /// the repository's `.gitattributes` (`-diff`, `binary`, a diff driver) or a NUL byte
    /// made git call binary and show no line of.
    pub fn diff_unified_text(
        &self,
        base: &str,
        head: &str,
        paths: &[&str],
    ) -> Result<Vec<u8>, GitError> {
        // Bounded so that a change touching thousands of files stays under argv's limit.
        const PATHS_A_CALL: usize = 512;
        let mut out = Vec::new();
        for chunk in paths.chunks(PATHS_A_CALL) {
            out.extend(self.diff_unified_of(base, head, true, chunk)?);
        }
        Ok(out)
    }

    fn diff_unified_of(
        &self,
        base: &str,
        head: &str,
        text: bool,
        paths: &[&str],
    ) -> Result<Vec<u8>, GitError> {
        let base = self.require_commit(base)?;
        let head = self.require_commit(head)?;
        let mut args = vec![
            "-c",
            "core.quotePath=true",
            "--literal-pathspecs",
            "diff",
            "--unified=0",
            "--no-color",
            "--no-renames",
            "--no-ext-diff",
            "--no-textconv",
            "--no-relative",
            "--src-prefix=a/",
            "--dst-prefix=b/",
            "--ignore-submodules=none",
        ];
        if text {
            args.push("--text");
        }
        args.extend([base.as_str(), head.as_str(), "--"]);
        args.extend_from_slice(paths);
        self.bytes(&args)
    }

    /// Every file under `folder` (repository-relative; empty for the whole tree) at
    /// `revision`, sorted by path. Submodules are left out: they have no content here.
    pub fn tree_files(&self, revision: &str, folder: &str) -> Result<Vec<TreeFile>, GitError> {
        let commit = self.require_commit(revision)?;
        let mut args = vec!["-r", "-z", "--full-tree", commit.as_str()];
        if !folder.is_empty() {
            args.extend(["--", folder]);
        }
        let mut files = self.ls_tree(&args)?;
        // ls-tree matches a folder's name as a prefix of its files' paths, and also a file
        // of the same name: keep what lies under the folder.
        files.retain(|file| {
            folder.is_empty()
                || file
                    .path
                    .strip_prefix(folder)
                    .is_some_and(|r| r.starts_with('/'))
        });
        files.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(files)
    }

    /// Every file at or under each of `paths` (repository-relative files and folders; an
    /// empty one is the whole tree) at `revision`, sorted by path, each once: one `ls-tree
    /// -r` for them all (one per 512 paths), where [`Git::show`] and [`Git::tree_files`]
    /// list one path each. A path is a file of that name or the files under a folder of
    /// that name, never a prefix of other names (`fixtures` is not `fixtures.json`).
    /// Submodules are left out, and a symlink is its blob (mode `120000`), as there.
    pub fn tree_paths(&self, revision: &str, paths: &[&str]) -> Result<Vec<TreeFile>, GitError> {
        const PATHS_A_CALL: usize = 512;
        if paths.is_empty() {
            return Ok(Vec::new());
        }
        let commit = self.require_commit(revision)?;
        let mut files = Vec::new();
        if paths.iter().any(|path| path.is_empty()) {
            files = self.ls_tree(&["-r", "-z", "--full-tree", &commit])?;
        } else {
            for chunk in paths.chunks(PATHS_A_CALL) {
                let mut args = vec!["-r", "-z", "--full-tree", commit.as_str(), "--"];
                args.extend_from_slice(chunk);
                files.extend(self.ls_tree(&args)?);
            }
        }
        files.retain(|file| paths.iter().any(|path| at_or_under(&file.path, path)));
        files.sort_by(|a, b| a.path.cmp(&b.path));
        files.dedup_by(|a, b| a.path == b.path);
        Ok(files)
    }

    /// Streams the blobs `oids` names through `each` (index into `oids`, content), one at
    /// a time, through a single `git cat-file --batch`.
    pub fn read_blobs(
        &self,
        oids: &[String],
        mut each: impl FnMut(usize, &[u8]),
    ) -> Result<(), GitError> {
        use std::io::{BufRead, BufReader, Read, Write};
        if oids.is_empty() {
            return Ok(());
        }
        let failed = |stderr: String| GitError::Failed {
            args: "cat-file --batch".to_owned(),
            dir: self.dir.clone(),
            stderr,
        };
        let mut child = self
            .command(&["cat-file", "--batch"])
            .stdin(Stdio::piped())
            // Nothing reads it while the batch runs; a missing object is said on stdout.
            .stderr(Stdio::null())
            .spawn()
            .map_err(GitError::Spawn)?;
        let mut stdin = child
            .stdin
            .take()
            .ok_or_else(|| failed("no stdin".into()))?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| failed("no stdout".into()))?;
        let requests = oids.iter().fold(String::new(), |mut text, oid| {
            text.push_str(oid);
            text.push('\n');
            text
        });
        // Written from another thread: git answers while it reads, and a full pipe either
        // way would otherwise stop both.
        let writer = std::thread::spawn(move || stdin.write_all(requests.as_bytes()));
        let mut reader = BufReader::new(stdout);
        let mut outcome = Ok(());
        for (index, oid) in oids.iter().enumerate() {
            let mut header = String::new();
            if let Err(error) = reader.read_line(&mut header) {
                outcome = Err(failed(format!("reading {oid}: {error}")));
                break;
            }
            let size = match header.trim_end().split(' ').collect::<Vec<_>>().as_slice() {
                [_, "blob", size] => size.parse::<u64>().ok(),
                _ => None,
            };
            let Some(size) = size else {
                outcome = Err(failed(format!("no blob {oid}: {}", header.trim_end())));
                break;
            };
            let mut content = Vec::new();
            let read = (&mut reader).take(size).read_to_end(&mut content);
            let mut newline = [0u8; 1];
            if read.is_err()
                || content.len() as u64 != size
                || reader.read_exact(&mut newline).is_err()
            {
                outcome = Err(failed(format!("blob {oid} was cut short")));
                break;
            }
            each(index, &content);
        }
        drop(reader);
        let _ = writer.join();
        let status = child.wait().map_err(GitError::Spawn)?;
        if outcome.is_ok() && !status.success() {
            outcome = Err(failed(format!("exited with {status}")));
        }
        outcome
    }

    /// The files under `folder` (relative to the repository root, which `self` must run
    /// in) that a commit would hold: tracked ones and untracked ones git does not ignore,
    /// repository-relative, sorted, each once.
    pub fn work_tree_files(&self, folder: &str) -> Result<Vec<String>, GitError> {
        let listing = self.bytes(&[
            "--literal-pathspecs",
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
            "--full-name",
            "--",
            folder,
        ])?;
        let mut files: Vec<String> = listing
            .split(|&b| b == 0)
            .filter(|path| !path.is_empty())
            .map(|path| String::from_utf8_lossy(path).into_owned())
            .collect();
        files.sort();
        files.dedup();
        Ok(files)
    }

    /// The blobs `git ls-tree ARGS` lists (with `-z`), pathspecs taken literally. `args`
    /// name the tree by a resolved commit's full id.
    fn ls_tree(&self, args: &[&str]) -> Result<Vec<TreeFile>, GitError> {
        let mut full = vec!["--literal-pathspecs", "ls-tree"];
        full.extend_from_slice(args);
        let listing = if args.iter().any(|arg| is_object_id(arg)) {
            self.bytes_about_object(&full)?
        } else {
            self.bytes(&full)?
        };
        let malformed = || GitError::Failed {
            args: full.join(" "),
            dir: self.dir.clone(),
            stderr: "a line candor cannot read".to_owned(),
        };
        let mut files = Vec::new();
        for record in listing.split(|&b| b == 0).filter(|r| !r.is_empty()) {
            let tab = record
                .iter()
                .position(|&b| b == b'\t')
                .ok_or_else(malformed)?;
            let (info, path) = record.split_at(tab);
            let path = path.get(1..).unwrap_or_default();
            let info = std::str::from_utf8(info).map_err(|_| malformed())?;
            let mut fields = info.split(' ');
            let (Some(mode), Some(kind), Some(oid)) = (fields.next(), fields.next(), fields.next())
            else {
                return Err(malformed());
            };
            // Trees (without -r) and submodules' commits have no content here.
            if kind == "blob" {
                files.push(TreeFile {
                    path: String::from_utf8_lossy(path).into_owned(),
                    mode: mode.to_owned(),
                    oid: oid.to_owned(),
                });
            }
        }
        Ok(files)
    }

    /// The full sha of `revision`, or an error naming it when it names no commit.
    fn require_commit(&self, revision: &str) -> Result<String, GitError> {
        self.commit(revision)?
            .ok_or_else(|| GitError::UnknownRevision {
                revision: revision.to_owned(),
                dir: self.dir.clone(),
            })
    }

    /// As [`Git::answer`] for a question about objects named by their full ids, whose
    /// answer cannot change: a "yes" is remembered ([`ObjectAnswers`]).
    fn answer_about_object(&self, args: &[&str]) -> Result<Option<String>, GitError> {
        if let Some(known) = OBJECT_ANSWERS.get(&self.dir, args) {
            return Ok(String::from_utf8(known).ok());
        }
        let answer = self.answer(args)?;
        if let Some(text) = &answer {
            OBJECT_ANSWERS.keep(&self.dir, args, text.as_bytes());
        }
        Ok(answer)
    }

    /// As [`Git::bytes`] for a question about objects named by their full ids, whose
    /// answer cannot change: it is remembered ([`ObjectAnswers`]).
    fn bytes_about_object(&self, args: &[&str]) -> Result<Vec<u8>, GitError> {
        if let Some(known) = OBJECT_ANSWERS.get(&self.dir, args) {
            return Ok(known);
        }
        let bytes = self.bytes(args)?;
        OBJECT_ANSWERS.keep(&self.dir, args, &bytes);
        Ok(bytes)
    }

    /// Runs git and returns its stdout as bytes; any failure is an error.
    fn bytes<S: AsRef<OsStr>>(&self, args: &[S]) -> Result<Vec<u8>, GitError> {
        let output = self.command(args).output().map_err(GitError::Spawn)?;
        if output.status.success() {
            return Ok(output.stdout);
        }
        let stderr = String::from_utf8_lossy(&output.stderr);
        Err(GitError::Failed {
            args: args
                .iter()
                .map(|arg| arg.as_ref().to_string_lossy())
                .collect::<Vec<_>>()
                .join(" "),
            dir: self.dir.clone(),
            stderr: stderr.lines().next().unwrap_or("").trim().to_owned(),
        })
    }
}

/// Whether `file` is `path` itself or lies under the folder `path` (every file when `path`
/// is empty).
fn at_or_under(file: &str, path: &str) -> bool {
    path.is_empty()
        || file
            .strip_prefix(path)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// Whether `text` is a full object id (SHA-1 or SHA-256, lowercase hex as git prints it).
pub fn is_object_id(text: &str) -> bool {
    matches!(text.len(), 40 | 64) && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// git's answers about objects named by their full ids (a commit's type, a tree's listing,
/// a blob's bytes, a commit's date), kept for the life of the process: they cannot change,
/// and the policy read from the merge base asks the same ones several times in one command
/// and again in every call `candor mcp` serves. Only answers git gave are kept (an object
/// missing now may be fetched later); refs, merge bases and walks are always asked anew.
/// Keyed by the folder git ran in as well, since whether an object is there depends on
/// the repository. Bounded: an answer over [`ObjectAnswers::LARGEST`] is not kept, and
/// the whole is dropped when it would pass [`ObjectAnswers::BUDGET`].
struct ObjectAnswers {
    /// The bytes kept, and the answers by (folder, arguments).
    answers: Mutex<(usize, Answers)>,
}

type Answers = std::collections::BTreeMap<(PathBuf, Vec<String>), Vec<u8>>;

static OBJECT_ANSWERS: ObjectAnswers = ObjectAnswers::new();

impl ObjectAnswers {
    const LARGEST: usize = 1 << 20;
    const BUDGET: usize = 8 << 20;

    const fn new() -> ObjectAnswers {
        ObjectAnswers {
            answers: Mutex::new((0, Answers::new())),
        }
    }

    fn key(dir: &Path, args: &[&str]) -> (PathBuf, Vec<String>) {
        (
            dir.to_owned(),
            args.iter().map(|arg| (*arg).to_owned()).collect(),
        )
    }

    fn get(&self, dir: &Path, args: &[&str]) -> Option<Vec<u8>> {
        let answers = self
            .answers
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        answers.1.get(&Self::key(dir, args)).cloned()
    }

    fn keep(&self, dir: &Path, args: &[&str], answer: &[u8]) {
        if answer.len() > Self::LARGEST {
            return;
        }
        let mut answers = self
            .answers
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let (size, map) = &mut *answers;
        if *size + answer.len() > Self::BUDGET {
            map.clear();
            *size = 0;
        }
        if map
            .insert(Self::key(dir, args), answer.to_owned())
            .is_none()
        {
            *size += answer.len();
        }
    }
}

/// The branch a change is measured against ([`Git::base_branch`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaseBranch {
    /// Its own name, as runs record their branch: `main`, not `origin/main`.
    pub name: String,
    /// What merge bases are taken with: `origin/main`, or `main` without a
    /// remote-tracking branch.
    pub reference: String,
    /// How the name was found: `origin/HEAD`, `init.defaultBranch`, `a local branch` or
    /// `a branch of origin` (a `main` or `master`), or the CI variable's name.
    pub found_by: String,
    /// Commits on the local branch that the remote-tracking one lacks (at most 10,000).
    pub ahead: Vec<String>,
}

/// A git operation that stops with HEAD on a commit that is not yet the change: until it
/// is finished or aborted, HEAD is a commit being replayed (rebase, am), the work tree
/// holds a half-done merge, cherry-pick or revert.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    /// `git rebase` (either backend).
    Rebase,
    /// `git am`.
    Am,
    /// `git merge` (`MERGE_HEAD`).
    Merge,
    /// `git cherry-pick` (`CHERRY_PICK_HEAD`).
    CherryPick,
    /// `git revert` (`REVERT_HEAD`).
    Revert,
    /// A cherry-pick or revert of several commits, stopped between them.
    Sequence,
}

impl Operation {
    /// What git is in the middle of, for a sentence: "a rebase".
    pub fn described(self) -> &'static str {
        match self {
            Operation::Rebase => "a rebase",
            Operation::Am => "a `git am`",
            Operation::Merge => "a merge",
            Operation::CherryPick => "a cherry-pick",
            Operation::Revert => "a revert",
            Operation::Sequence => "a cherry-pick or revert of several commits",
        }
    }

    /// The commands that finish or abort it.
    pub fn way_out(self) -> &'static str {
        match self {
            Operation::Rebase => {
                "finish or abort the rebase: `git rebase --continue` or `git rebase --abort`"
            }
            Operation::Am => "finish or abort it: `git am --continue` or `git am --abort`",
            Operation::Merge => {
                "finish or abort the merge: commit the resolution (`git merge --continue`) or `git merge --abort`"
            }
            Operation::CherryPick => {
                "finish or abort the cherry-pick: `git cherry-pick --continue` or `git cherry-pick --abort`"
            }
            Operation::Revert => {
                "finish or abort the revert: `git revert --continue` or `git revert --abort`"
            }
            Operation::Sequence => {
                "finish or abort it: `git cherry-pick --continue` or `--abort` (`git revert …` for a revert)"
            }
        }
    }
}

/// What the workflows (`crate::app`) ask of a repository, so that a test can hand them a
/// fake that keeps its commits in memory: the merge base, the worktree of another commit,
/// and files and changes at a revision. [`Git`] answers through the `git` program.
pub trait Repository {
    /// As [`Git::default_branch`].
    fn default_branch(&self) -> Result<Option<String>, GitError>;
    /// As [`Git::merge_base`].
    fn merge_base(&self, left: &str, right: &str) -> Result<Option<String>, GitError>;
    /// As [`Git::checkout_worktree`].
    fn checkout_worktree(&self, path: &Path, commit: &str) -> Result<(), GitError>;
    /// As [`Git::remove_worktree`].
    fn remove_worktree(&self, path: &Path) -> Result<(), GitError>;
    /// As [`Git::show`].
    fn show(&self, revision: &str, path: &str) -> Result<Option<Vec<u8>>, GitError>;
    /// As [`Git::show_many`]; by default one [`Repository::show`] a path.
    fn show_many(&self, revision: &str, paths: &[&str]) -> Result<Vec<Option<Vec<u8>>>, GitError> {
        paths.iter().map(|path| self.show(revision, path)).collect()
    }
    /// As [`Git::changed_tracked_files`].
    fn changed_tracked_files(&self) -> Result<Vec<String>, GitError>;
    /// As [`Git::unfinished_operation`]; by default none (a repository kept in memory is
    /// never in the middle of one).
    fn unfinished_operation(&self) -> Result<Option<Operation>, GitError> {
        Ok(None)
    }
    /// As [`Git::diff_unified`].
    fn diff_unified(&self, base: &str, head: &str) -> Result<Vec<u8>, GitError>;
    /// As [`Git::diff_unified_text`]; by default the whole diff (a repository without
    /// binary files).
    fn diff_unified_text(
        &self,
        base: &str,
        head: &str,
        _paths: &[&str],
    ) -> Result<Vec<u8>, GitError> {
        self.diff_unified(base, head)
    }
    /// As [`Git::tree_files`].
    fn tree_files(&self, revision: &str, folder: &str) -> Result<Vec<TreeFile>, GitError>;
    /// As [`Git::tree_paths`]; by default the whole tree, kept to `paths`.
    fn tree_paths(&self, revision: &str, paths: &[&str]) -> Result<Vec<TreeFile>, GitError> {
        if paths.is_empty() {
            return Ok(Vec::new());
        }
        let mut files = self.tree_files(revision, "")?;
        files.retain(|file| paths.iter().any(|path| at_or_under(&file.path, path)));
        Ok(files)
    }
    /// As [`Git::read_blobs`].
    fn read_blobs(
        &self,
        oids: &[String],
        each: &mut dyn FnMut(usize, &[u8]),
    ) -> Result<(), GitError>;
}

impl Repository for Git {
    fn default_branch(&self) -> Result<Option<String>, GitError> {
        Git::default_branch(self)
    }
    fn merge_base(&self, left: &str, right: &str) -> Result<Option<String>, GitError> {
        Git::merge_base(self, left, right)
    }
    fn checkout_worktree(&self, path: &Path, commit: &str) -> Result<(), GitError> {
        Git::checkout_worktree(self, path, commit)
    }
    fn remove_worktree(&self, path: &Path) -> Result<(), GitError> {
        Git::remove_worktree(self, path)
    }
    fn show(&self, revision: &str, path: &str) -> Result<Option<Vec<u8>>, GitError> {
        Git::show(self, revision, path)
    }
    fn show_many(&self, revision: &str, paths: &[&str]) -> Result<Vec<Option<Vec<u8>>>, GitError> {
        Git::show_many(self, revision, paths)
    }
    fn changed_tracked_files(&self) -> Result<Vec<String>, GitError> {
        Git::changed_tracked_files(self)
    }
    fn unfinished_operation(&self) -> Result<Option<Operation>, GitError> {
        Git::unfinished_operation(self)
    }
    fn diff_unified(&self, base: &str, head: &str) -> Result<Vec<u8>, GitError> {
        Git::diff_unified(self, base, head)
    }
    fn diff_unified_text(
        &self,
        base: &str,
        head: &str,
        paths: &[&str],
    ) -> Result<Vec<u8>, GitError> {
        Git::diff_unified_text(self, base, head, paths)
    }
    fn tree_files(&self, revision: &str, folder: &str) -> Result<Vec<TreeFile>, GitError> {
        Git::tree_files(self, revision, folder)
    }
    fn tree_paths(&self, revision: &str, paths: &[&str]) -> Result<Vec<TreeFile>, GitError> {
        Git::tree_paths(self, revision, paths)
    }
    fn read_blobs(
        &self,
        oids: &[String],
        each: &mut dyn FnMut(usize, &[u8]),
    ) -> Result<(), GitError> {
        Git::read_blobs(self, oids, each)
    }
}

/// The directory's repository root, or `None` when it is not in one or git is missing.
pub fn repo_root_or_none(dir: &Path) -> Result<Option<PathBuf>, GitError> {
    match Git::new(dir).repo_root() {
        Err(error) if error.is_missing_program() => Ok(None),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// git in `dir` with an author and no editor; whether it succeeded.
    fn git_status(dir: &Path, args: &[&str]) -> bool {
        Git::new(dir)
            .command(args)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
            .env("GIT_EDITOR", "true")
            .status()
            .expect("git runs")
            .success()
    }

    fn git(dir: &Path, args: &[&str]) {
        assert!(git_status(dir, args), "git {args:?} failed");
    }

    /// git as [`git`], for a command that stops on a conflict and exits non-zero.
    fn git_stops(dir: &Path, args: &[&str]) {
        assert!(
            !git_status(dir, args),
            "git {args:?} was to stop on a conflict"
        );
    }

    #[test]
    fn unfinished_operations_are_named_in_a_repository_and_in_a_linked_worktree() {
        let dir = tempfile::tempdir().expect("temp dir");
        let repo = dir.path().join("repo");
        std::fs::create_dir_all(&repo).expect("mkdir");
        git(&repo, &["init", "--quiet", "-b", "main"]);
        commit_file(&repo, "f.txt", "base\n");
        git(&repo, &["checkout", "--quiet", "-b", "change"]);
        commit_file(&repo, "f.txt", "change\n");
        git(&repo, &["checkout", "--quiet", "main"]);
        commit_file(&repo, "f.txt", "main\n");
        git(&repo, &["checkout", "--quiet", "change"]);
        let here = Git::new(&repo);
        let unfinished = || here.unfinished_operation().expect("git answers");
        assert_eq!(unfinished(), None);

        git_stops(&repo, &["rebase", "--quiet", "main"]);
        assert_eq!(unfinished(), Some(Operation::Rebase));
        git(&repo, &["rebase", "--abort"]);
        git_stops(&repo, &["rebase", "--quiet", "--apply", "main"]);
        assert_eq!(unfinished(), Some(Operation::Rebase));
        git(&repo, &["rebase", "--abort"]);
        git_stops(&repo, &["merge", "--quiet", "main"]);
        assert_eq!(unfinished(), Some(Operation::Merge));
        git(&repo, &["merge", "--abort"]);
        git_stops(&repo, &["cherry-pick", "main"]);
        assert_eq!(unfinished(), Some(Operation::CherryPick));
        git(&repo, &["cherry-pick", "--abort"]);
        git_stops(&repo, &["revert", "--no-edit", "HEAD~1"]);
        assert_eq!(unfinished(), Some(Operation::Revert));
        git(&repo, &["revert", "--abort"]);
        // A bisection's checkout is a finished commit.
        git(&repo, &["bisect", "start", "HEAD", "HEAD~1"]);
        assert_eq!(unfinished(), None);
        git(&repo, &["bisect", "reset"]);
        assert_eq!(unfinished(), None);

        // A linked worktree keeps its own: a merge stopped there is not the main one's.
        let linked = dir.path().join("linked");
        git(
            &repo,
            &[
                "worktree",
                "add",
                "--quiet",
                "-b",
                "other",
                &linked.to_string_lossy(),
                "change",
            ],
        );
        git_stops(&linked, &["merge", "--quiet", "main"]);
        assert_eq!(
            Git::new(&linked)
                .unfinished_operation()
                .expect("git answers"),
            Some(Operation::Merge)
        );
        assert_eq!(unfinished(), None);
    }

    #[test]
    fn outside_a_repository_everything_is_none() {
        let dir = tempfile::tempdir().expect("temp dir");
        let git = Git::new(dir.path());
        assert_eq!(git.repo_root().expect("git runs"), None);
        assert_eq!(git.head_sha().expect("git runs"), None);
        assert_eq!(git.branch().expect("git runs"), None);
    }

    #[test]
    fn a_fresh_repository_has_a_root_and_branch_but_no_head() {
        let dir = tempfile::tempdir().expect("temp dir");
        git(dir.path(), &["init", "--quiet", "-b", "trunk"]);
        let sub = dir.path().join("a/b");
        std::fs::create_dir_all(&sub).expect("mkdir");
        let git_in_sub = Git::new(&sub);
        let root = git_in_sub.repo_root().expect("git runs").expect("a root");
        assert_eq!(
            root.canonicalize().expect("root exists"),
            dir.path().canonicalize().expect("temp exists")
        );
        assert_eq!(git_in_sub.head_sha().expect("git runs"), None);
        assert_eq!(
            git_in_sub.branch().expect("git runs").as_deref(),
            Some("trunk")
        );
    }

    /// Two processes' worktrees made and removed at once in one repository: git alone
    /// fails about one `worktree add` in a hundred here (a `remove` or `prune` took
    /// `.git/worktrees` away); with candor's lock none fails. Threads stand in for the
    /// processes (the lock is a file lock, taken per open file).
    #[test]
    fn worktrees_made_and_removed_at_once_never_fail() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("repo");
        std::fs::create_dir(&path).expect("repo folder");
        git(&path, &["init", "--quiet", "-b", "main"]);
        git(&path, &["commit", "--quiet", "--allow-empty", "-m", "one"]);
        let worktrees = dir.path().join("worktrees");
        std::thread::scope(|scope| {
            let workers: Vec<_> = ["a", "b", "c"]
                .into_iter()
                .map(|name| {
                    let (path, tree) = (&path, worktrees.join(name));
                    scope.spawn(move || {
                        let repo = Git::new(path);
                        for round in 0..40 {
                            repo.checkout_worktree(&tree, "HEAD")
                                .unwrap_or_else(|e| panic!("{name}, round {round}: {e}"));
                            repo.remove_worktree(&tree)
                                .unwrap_or_else(|e| panic!("{name}, round {round}: {e}"));
                        }
                    })
                })
                .collect();
            for worker in workers {
                worker.join().expect("no worker failed");
            }
        });
    }

    /// Files git was told not to look at are listed when their content differs from the
    /// index's, and only then; one a sparse checkout left out is not. `git diff` alone
    /// lists none of them.
    #[test]
    fn files_git_was_told_not_to_look_at_are_listed_when_they_differ() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path();
        git(path, &["init", "--quiet", "-b", "main"]);
        std::fs::create_dir(path.join("app")).expect("a folder");
        for name in [
            "app/cart.py",
            "app/tax.py",
            "app/same.py",
            "app/gone.py",
            "plain.py",
        ] {
            std::fs::write(path.join(name), format!("# {name}\n")).expect("written");
        }
        git(path, &["add", "."]);
        git(path, &["commit", "--quiet", "-m", "one"]);
        git(
            path,
            &[
                "update-index",
                "--skip-worktree",
                "app/cart.py",
                "app/same.py",
                "app/gone.py",
            ],
        );
        git(path, &["update-index", "--assume-unchanged", "app/tax.py"]);
        std::fs::write(path.join("app/cart.py"), "# the old code\n").expect("written");
        std::fs::write(path.join("app/tax.py"), "# the old tax\n").expect("written");
        std::fs::remove_file(path.join("app/gone.py")).expect("removed");
        std::fs::write(path.join("plain.py"), "# edited\n").expect("written");
        // From a folder below the root, as a lane started there would ask.
        let repo = Git::new(path.join("app"));
        assert_eq!(
            repo.changed_tracked_files().expect("git runs"),
            ["app/cart.py", "app/tax.py", "plain.py"]
        );
    }

    /// More flagged files than one `hash-object` is given: each is still hashed, and the
    /// one that differs, past the first chunk, is listed.
    #[test]
    fn every_flagged_file_is_compared_however_many_there_are() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path();
        git(path, &["init", "--quiet", "-b", "main"]);
        let names: Vec<String> = (0..600).map(|n| format!("f{n:03}.txt")).collect();
        for name in &names {
            std::fs::write(path.join(name), format!("{name}\n")).expect("written");
        }
        git(path, &["add", "."]);
        git(path, &["commit", "--quiet", "-m", "many"]);
        let mut flag = vec!["update-index", "--assume-unchanged"];
        flag.extend(names.iter().map(String::as_str));
        git(path, &flag);
        std::fs::write(path.join("f599.txt"), "changed\n").expect("written");
        assert_eq!(
            Git::new(path).changed_tracked_files().expect("git runs"),
            ["f599.txt"]
        );
    }

    #[test]
    fn head_branch_merge_base_and_default_branch_after_commits() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path();
        git(path, &["init", "--quiet", "-b", "main"]);
        git(path, &["commit", "--quiet", "--allow-empty", "-m", "one"]);
        let repo = Git::new(path);
        let base = repo.head_sha().expect("git runs").expect("a head");
        assert_eq!(base.len(), 40);
        git(path, &["checkout", "--quiet", "-b", "feature"]);
        git(path, &["commit", "--quiet", "--allow-empty", "-m", "two"]);
        let tip = repo.head_sha().expect("git runs").expect("a head");
        assert_ne!(tip, base);
        assert_eq!(repo.branch().expect("git runs").as_deref(), Some("feature"));
        assert_eq!(
            repo.default_branch().expect("git runs").as_deref(),
            Some("main")
        );
        assert_eq!(
            repo.base_branch(None).expect("git runs"),
            Some(BaseBranch {
                name: "main".to_owned(),
                reference: "main".to_owned(),
                found_by: "a local branch".to_owned(),
                ahead: Vec::new(),
            })
        );
        assert_eq!(
            repo.merge_base(&tip, "main").expect("git runs").as_deref(),
            Some(base.as_str())
        );
        assert_eq!(repo.merge_base(&tip, "--help").expect("no option"), None);
        assert_eq!(
            repo.commits_between(&base, &tip).expect("git runs"),
            Some(vec![tip.clone()])
        );
        assert_eq!(
            repo.commits_between(&tip, &tip).expect("git runs"),
            Some(vec![])
        );
        assert_eq!(repo.commits_between("-x", &tip).expect("no option"), None);
        assert_eq!(
            repo.merge_base(&tip, "0000000000000000000000000000000000000000")
                .expect("git runs"),
            None
        );
        git(path, &["checkout", "--quiet", "--detach"]);
        assert_eq!(repo.branch().expect("git runs"), None);
    }

    fn commit_file(dir: &Path, name: &str, text: &str) -> String {
        std::fs::write(dir.join(name), text).expect("write");
        git(dir, &["add", name]);
        git(dir, &["commit", "--quiet", "-m", text]);
        Git::new(dir).head_sha().expect("git runs").expect("a head")
    }

    // #18 item 1: answers about objects named by their full ids are kept for the process
    // (the MCP server's calls stop asking them again); refs and absent objects are not.
    #[test]
    fn object_answers_are_kept_and_refs_and_absent_objects_asked_anew() {
        let upstream = tempfile::tempdir().expect("temp dir");
        let up = upstream.path();
        git(up, &["init", "--quiet", "-b", "main"]);
        let first = commit_file(up, "candor.toml", "one");
        let clone = tempfile::tempdir().expect("temp dir");
        let down = clone.path().join("repo");
        git(
            clone.path(),
            &["clone", "--quiet", &up.to_string_lossy(), "repo"],
        );
        let second = commit_file(up, "candor.toml", "two");
        let (up_git, down_git) = (Git::new(up), Git::new(&down));

        assert_eq!(
            up_git.show(&second, "candor.toml").expect("git runs"),
            Some(b"two".to_vec())
        );
        let kept = |git: &Git, args: &[&str]| OBJECT_ANSWERS.get(&git.dir, args);
        assert_eq!(
            kept(
                &up_git,
                &[
                    "rev-parse",
                    "--verify",
                    "--quiet",
                    &format!("{second}^{{commit}}")
                ]
            ),
            Some(second.clone().into_bytes())
        );
        // Where the object is missing, the other repository's answer does not count, and
        // "none" is not kept: the object arrives with a fetch.
        assert_eq!(down_git.commit(&second).expect("git runs"), None);
        git(&down, &["fetch", "--quiet", "origin"]);
        assert_eq!(
            down_git.commit(&second).expect("git runs"),
            Some(second.clone())
        );
        assert_eq!(
            down_git.show(&second, "candor.toml").expect("git runs"),
            Some(b"two".to_vec())
        );
        // A ref is asked anew: `main` moves.
        assert_eq!(
            up_git.commit("main").expect("git runs"),
            Some(second.clone())
        );
        git(up, &["reset", "--quiet", "--hard", &first]);
        assert_eq!(
            up_git.commit("main").expect("git runs"),
            Some(first.clone())
        );
        assert_eq!(
            up_git.show("main", "candor.toml").expect("git runs"),
            Some(b"one".to_vec())
        );
        assert_eq!(
            kept(
                &up_git,
                &["rev-parse", "--verify", "--quiet", "main^{commit}"]
            ),
            None
        );
    }

    // #15 (lanes4 item 2): the gate reads the touched files at each end through
    // `show_many`; it must answer exactly as `show` a path: a file's bytes, a symlink's
    // target, nothing for a folder or a missing path, a pathspec's magic taken literally.
    #[test]
    fn show_many_answers_as_show_does_path_by_path() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path();
        git(path, &["init", "--quiet", "-b", "main"]);
        std::fs::create_dir_all(path.join("tests/sub")).expect("mkdir");
        std::fs::write(path.join("tests/a.py"), "a").expect("write");
        std::fs::write(path.join("tests/sub/b.py"), "b").expect("write");
        std::fs::write(path.join("tests/*.py"), "star").expect("write");
        std::fs::write(path.join("tests/same.py"), "a").expect("write");
        #[cfg(unix)]
        std::os::unix::fs::symlink("a.py", path.join("tests/link.py")).expect("symlink");
        git(path, &["add", "."]);
        git(path, &["commit", "--quiet", "-m", "files"]);
        let repo = Git::new(path);
        let head = repo.head_sha().expect("git runs").expect("a head");
        let paths = [
            "tests/sub/b.py",
            "tests/missing.py",
            "tests/a.py",
            "tests/sub",
            "tests/*.py",
            "tests/link.py",
            "tests/same.py",
            "tests/a.py",
        ];
        let many = repo.show_many(&head, &paths).expect("git runs");
        let one_by_one: Vec<_> = paths
            .iter()
            .map(|p| repo.show(&head, p).expect("git runs"))
            .collect();
        assert_eq!(many, one_by_one);
        assert_eq!(many[0].as_deref(), Some(&b"b"[..]));
        assert_eq!(many[1], None);
        assert_eq!(many[3], None, "a folder has no content");
        assert_eq!(
            many[4].as_deref(),
            Some(&b"star"[..]),
            "no glob: the file named so"
        );
        #[cfg(unix)]
        assert_eq!(many[5].as_deref(), Some(&b"a.py"[..]), "a symlink's target");
        assert_eq!(repo.show_many(&head, &[]).expect("nothing asked"), vec![]);
        assert!(matches!(
            repo.show_many("no-such-ref", &["tests/a.py"]),
            Err(GitError::UnknownRevision { .. })
        ));
    }

    // #15 (lanes5): the lane lists each end's lock files, fixtures, cassettes and touched
    // test files in one `ls-tree -r`; it must find exactly what `show` finds for a file
    // path and what `tree_files` finds under a folder: a symlink as its blob, nothing for
    // a missing path, a folder's name never a prefix of a sibling file's.
    #[test]
    fn tree_paths_finds_what_show_and_tree_files_find_path_by_path() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path();
        git(path, &["init", "--quiet", "-b", "main"]);
        std::fs::create_dir_all(path.join("tests/fixtures/deep")).expect("mkdir");
        std::fs::write(path.join("tests/fixtures/a.json"), "a").expect("write");
        std::fs::write(path.join("tests/fixtures/deep/b.json"), "b").expect("write");
        std::fs::write(path.join("tests/fixtures.json"), "sibling").expect("write");
        std::fs::write(path.join("tests/fixtures.lock.json"), "{}").expect("write");
        std::fs::write(path.join("tests/test_a.py"), "t").expect("write");
        #[cfg(unix)]
        std::os::unix::fs::symlink("fixtures/a.json", path.join("tests/link.json"))
            .expect("symlink");
        git(path, &["add", "."]);
        git(path, &["commit", "--quiet", "-m", "files"]);
        let repo = Git::new(path);
        let head = repo.head_sha().expect("git runs").expect("a head");
        let asked = [
            "tests/fixtures.lock.json",
            "tests/fixtures",
            "tests/cassettes",
            "tests/test_a.py",
            "tests/link.json",
            "tests/missing.py",
        ];
        let listed = repo.tree_paths(&head, &asked).expect("git runs");
        let paths: Vec<&str> = listed.iter().map(|f| f.path.as_str()).collect();
        let mut expected = vec![
            "tests/fixtures.lock.json",
            "tests/fixtures/a.json",
            "tests/fixtures/deep/b.json",
            "tests/test_a.py",
        ];
        if cfg!(unix) {
            expected.push("tests/link.json");
        }
        expected.sort_unstable();
        assert_eq!(
            paths, expected,
            "no sibling `tests/fixtures.json`, nothing missing"
        );
        for file in [
            "tests/fixtures.lock.json",
            "tests/test_a.py",
            "tests/link.json",
        ] {
            let shown = repo.show(&head, file).expect("git runs");
            let entry = listed.iter().find(|f| f.path == file);
            assert_eq!(entry.is_some(), shown.is_some(), "{file}");
        }
        let under = repo.tree_files(&head, "tests/fixtures").expect("git runs");
        let listed_under: Vec<&TreeFile> = listed
            .iter()
            .filter(|f| f.path.starts_with("tests/fixtures/"))
            .collect();
        assert_eq!(listed_under, under.iter().collect::<Vec<_>>());
        #[cfg(unix)]
        assert_eq!(
            listed
                .iter()
                .find(|f| f.path == "tests/link.json")
                .map(|f| f.mode.as_str()),
            Some("120000")
        );
        assert_eq!(repo.tree_paths(&head, &[]).expect("nothing asked"), vec![]);
        // What the trait's default (a fake's) does: the whole tree, kept to the paths.
        let by_default: Vec<TreeFile> = repo
            .tree_files(&head, "")
            .expect("git runs")
            .into_iter()
            .filter(|f| asked.iter().any(|p| at_or_under(&f.path, p)))
            .collect();
        assert_eq!(by_default, listed);
    }

    #[test]
    fn object_answers_stay_within_their_bounds() {
        let answers = ObjectAnswers::new();
        let dir = Path::new("/r");
        answers.keep(
            dir,
            &["cat-file", "blob", "big"],
            &vec![0; ObjectAnswers::LARGEST + 1],
        );
        assert_eq!(answers.get(dir, &["cat-file", "blob", "big"]), None);
        let half = vec![1; ObjectAnswers::LARGEST];
        let count = ObjectAnswers::BUDGET / ObjectAnswers::LARGEST;
        for index in 0..count {
            answers.keep(dir, &["cat-file", "blob", &index.to_string()], &half);
        }
        assert!(answers.get(dir, &["cat-file", "blob", "0"]).is_some());
        // One more passes the budget: what was kept goes, the newest stays.
        answers.keep(dir, &["cat-file", "blob", "last"], &half);
        assert_eq!(answers.get(dir, &["cat-file", "blob", "0"]), None);
        assert_eq!(answers.get(dir, &["cat-file", "blob", "last"]), Some(half));
    }

    #[test]
    fn location_overrides_are_removed_from_the_child() {
        let removed: Vec<_> = Git::new(".")
            .command(&["status"])
            .get_envs()
            .filter(|(_, value)| value.is_none())
            .map(|(name, _)| name.to_owned())
            .collect();
        for name in EnvVars::GIT_LOCATION_OVERRIDES {
            assert!(removed.iter().any(|n| n == name), "{name} not removed");
        }
    }
}
