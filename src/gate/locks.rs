//! The fixture lock: the sha256 of every file under the fixtures folder, kept in a JSON
//! file humans refresh deliberately (`candor lock fixtures`), and the drift between a lock
//! and the files as they are. Hashes come from a folder on disk (walked in sorted order)
//! or from a commit's tree; the lock is written with sorted keys, atomically.
//!
//! A symlink is hashed as its target's path, as git stores it, so a checkout and the tree
//! it came from hash alike.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::git::{Git, GitError};

/// The `schema` of a fixture lock.
pub const FIXTURE_LOCK_SCHEMA: &str = "fixtures-lock.v1";

/// sha256 (lowercase hex) by repository-relative, `/`-separated path, sorted.
pub type Hashes = BTreeMap<String, String>;

/// A fixture lock file's content.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FixtureLock {
    /// Every locked file's sha256.
    pub files: Hashes,
}

/// A lock file that cannot be read, located in the file.
#[derive(Debug, thiserror::Error)]
#[error("{}:{line}:{column}: {message}", path.display())]
pub struct LockError {
    /// The file.
    pub path: PathBuf,
    /// 1-based line (1 when the whole file is at fault).
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

impl LockError {
    /// What to do about it.
    pub fn hint(&self) -> &'static str {
        "the lock is written by candor (`candor lock fixtures`, `candor lock cassettes`); rewrite it with that command and review the diff"
    }

    pub(crate) fn whole(path: &Path, message: impl Into<String>) -> LockError {
        LockError {
            path: path.to_owned(),
            line: 1,
            column: 1,
            message: message.into(),
        }
    }

    pub(crate) fn json(path: &Path, bytes: &[u8], error: &serde_json::Error) -> LockError {
        let (line, column) = json_error_position(bytes, error);
        LockError {
            path: path.to_owned(),
            line,
            column,
            message: strip_position(&error.to_string()),
        }
    }
}

/// Where a serde_json error belongs. A value refused by its own check (a bad hash, a bad
/// date) is reported by serde_json where reading went on after it, which is the closing
/// bracket's line when the value was last in its object; this points at the value's end
/// instead. Syntax errors and missing fields keep serde_json's position.
pub(crate) fn json_error_position(bytes: &[u8], error: &serde_json::Error) -> (usize, usize) {
    let (line, column) = (error.line().max(1), error.column().max(1));
    if error.classify() != serde_json::error::Category::Data
        || error.to_string().starts_with("missing field")
    {
        return (line, column);
    }
    let line_start = bytes
        .split_inclusive(|&b| b == b'\n')
        .take(line - 1)
        .map(<[u8]>::len)
        .sum::<usize>();
    let mut end = (line_start + column).min(bytes.len());
    while end > 0
        && bytes
            .get(end - 1)
            .is_some_and(|b| b.is_ascii_whitespace() || matches!(b, b'}' | b']' | b','))
    {
        end -= 1;
    }
    let before = bytes.get(..end).unwrap_or_default();
    let value_line = memchr::memchr_iter(b'\n', before).count() + 1;
    let value_column = before.len()
        - before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |at| at + 1)
        + 1;
    (value_line, value_column)
}

/// serde_json's message without the " at line L column C" it appends.
pub(crate) fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(at) => message.get(..at).unwrap_or(message).to_owned(),
        None => message.to_owned(),
    }
}

/// A sha256 in lowercase hex, checked when read.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub(crate) struct Sha256Hex(pub(crate) String);

impl<'de> Deserialize<'de> for Sha256Hex {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        if is_sha256(&text) {
            Ok(Sha256Hex(text))
        } else {
            Err(serde::de::Error::custom(format!(
                "{text:?} is not a sha256: 64 lowercase hexadecimal digits"
            )))
        }
    }
}

/// Whether `text` is 64 lowercase hex digits.
pub fn is_sha256(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// The file as stored: keys in alphabetical order, so the JSON's keys are sorted.
#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct RawFixtureLock {
    files: BTreeMap<String, Sha256Hex>,
    schema: String,
}

impl FixtureLock {
    /// Reads a lock written by [`FixtureLock::render`].
    pub fn parse(bytes: &[u8], path: &Path) -> Result<FixtureLock, LockError> {
        let raw: RawFixtureLock =
            serde_json::from_slice(bytes).map_err(|error| LockError::json(path, bytes, &error))?;
        if raw.schema != FIXTURE_LOCK_SCHEMA {
            return Err(LockError::whole(
                path,
                format!(
                    "`schema` is {:?}: this candor reads {FIXTURE_LOCK_SCHEMA:?}",
                    raw.schema
                ),
            ));
        }
        for key in raw.files.keys() {
            check_key(key, path)?;
        }
        Ok(FixtureLock {
            files: raw.files.into_iter().map(|(k, v)| (k, v.0)).collect(),
        })
    }

    /// The lock's text: JSON, keys sorted, two-space indents, a final newline. The same
    /// files give the same bytes.
    pub fn render(&self) -> String {
        let raw = RawFixtureLock {
            files: self
                .files
                .iter()
                .map(|(k, v)| (k.clone(), Sha256Hex(v.clone())))
                .collect(),
            schema: FIXTURE_LOCK_SCHEMA.to_owned(),
        };
        render_json(&raw)
    }

    /// Writes the lock to `path` atomically (a temporary file renamed over the old one).
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        crate::reliability::write_atomic(path, &self.render())
    }
}

/// Pretty JSON with a final newline.
pub(crate) fn render_json<T: Serialize>(value: &T) -> String {
    // Serializing maps of strings cannot fail.
    let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.push('\n');
    text
}

/// A lock's key: a repository-relative path, `/`-separated, with no empty, `.` or `..`
/// part.
pub(crate) fn check_key(key: &str, path: &Path) -> Result<(), LockError> {
    let bad = key.is_empty()
        || key.starts_with('/')
        || key.contains('\\')
        || key
            .split('/')
            .any(|part| part.is_empty() || part == "." || part == "..");
    if bad {
        return Err(LockError::whole(
            path,
            format!("{key:?} is not a repository-relative path"),
        ));
    }
    Ok(())
}

/// How a file differs from its lock.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum DriftKind {
    /// Locked, and its content is not what the lock says.
    Changed,
    /// There, and not in the lock.
    Added,
    /// In the lock, and gone.
    Removed,
}

impl DriftKind {
    /// `changed`, `added` or `removed`.
    pub fn as_str(self) -> &'static str {
        match self {
            DriftKind::Changed => "changed",
            DriftKind::Added => "added",
            DriftKind::Removed => "removed",
        }
    }
}

/// One file that differs from its lock.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Drift {
    /// Repository-relative path.
    pub path: String,
    /// How.
    pub kind: DriftKind,
    /// The hash the lock holds.
    pub locked: Option<String>,
    /// The hash of the file as it is.
    pub actual: Option<String>,
}

/// Every difference between `locked` and `actual`, sorted by path.
pub fn drift(locked: &Hashes, actual: &Hashes) -> Vec<Drift> {
    let mut drifts = Vec::new();
    for (path, hash) in actual {
        match locked.get(path) {
            Some(expected) if expected == hash => {}
            Some(expected) => drifts.push(Drift {
                path: path.clone(),
                kind: DriftKind::Changed,
                locked: Some(expected.clone()),
                actual: Some(hash.clone()),
            }),
            None => drifts.push(Drift {
                path: path.clone(),
                kind: DriftKind::Added,
                locked: None,
                actual: Some(hash.clone()),
            }),
        }
    }
    for (path, expected) in locked {
        if !actual.contains_key(path) {
            drifts.push(Drift {
                path: path.clone(),
                kind: DriftKind::Removed,
                locked: Some(expected.clone()),
                actual: None,
            });
        }
    }
    drifts.sort_by(|a, b| a.path.cmp(&b.path));
    drifts
}

/// sha256 of `bytes` in lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// A failure to read files on disk.
#[derive(Debug, thiserror::Error)]
#[error("could not read {}", path.display())]
pub struct ReadError {
    /// The file or folder.
    pub path: PathBuf,
    /// Why.
    #[source]
    pub source: std::io::Error,
}

/// Every file under `folder` (repository-relative) in the work tree at `repo_root`, hashed,
/// walked in sorted order. A missing folder has no files.
pub fn hash_folder(repo_root: &Path, folder: &str) -> Result<Hashes, ReadError> {
    hash_listed(repo_root, &list_folder(repo_root, folder)?)
}

/// Every file (and symlink) under `folder` in the work tree at `repo_root`,
/// repository-relative, in sorted order; symlinked folders are not followed. A missing
/// folder has no files.
pub fn list_folder(repo_root: &Path, folder: &str) -> Result<Vec<String>, ReadError> {
    let mut files = Vec::new();
    let start = repo_root.join(folder);
    match std::fs::symlink_metadata(&start) {
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(files),
        Err(source) => {
            return Err(ReadError {
                path: start,
                source,
            });
        }
        Ok(meta) if !meta.is_dir() => return Ok(files),
        Ok(_) => {}
    }
    walk(&start, folder, &mut files)?;
    files.sort();
    Ok(files)
}

fn walk(dir: &Path, relative: &str, files: &mut Vec<String>) -> Result<(), ReadError> {
    let read_error = |path: &Path| {
        let path = path.to_owned();
        move |source| ReadError { path, source }
    };
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .map_err(read_error(dir))?
        .collect::<Result<_, _>>()
        .map_err(read_error(dir))?;
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for entry in entries {
        let path = entry.path();
        let key = format!("{relative}/{}", entry.file_name().to_string_lossy());
        if entry.file_type().map_err(read_error(&path))?.is_dir() {
            walk(&path, &key, files)?;
        } else {
            files.push(key);
        }
    }
    Ok(())
}

/// The sha256 of one file on disk, streamed.
pub fn hash_file(path: &Path) -> Result<String, ReadError> {
    let read_error = |source| ReadError {
        path: path.to_owned(),
        source,
    };
    let mut file = std::fs::File::open(path).map_err(read_error)?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        let read = file.read(&mut buffer).map_err(read_error)?;
        if read == 0 {
            break;
        }
        hasher.update(buffer.get(..read).unwrap_or_default());
    }
    Ok(hex::encode(hasher.finalize()))
}

/// The listed work-tree files (repository-relative), hashed; a listed file that is gone
/// from disk is left out. For `candor lock fixtures` in a git repository, where the list
/// is what git would commit (tracked and untracked, not ignored).
pub fn hash_listed(repo_root: &Path, paths: &[String]) -> Result<Hashes, ReadError> {
    let mut hashes = Hashes::new();
    for path in paths {
        let full = repo_root.join(path);
        match std::fs::symlink_metadata(&full) {
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => return Err(ReadError { path: full, source }),
            Ok(meta) if meta.is_symlink() => {
                let target = std::fs::read_link(&full).map_err(|source| ReadError {
                    path: full.clone(),
                    source,
                })?;
                hashes.insert(
                    path.clone(),
                    sha256_hex(target.as_os_str().as_encoded_bytes()),
                );
            }
            Ok(meta) if meta.is_file() => {
                hashes.insert(path.clone(), hash_file(&full)?);
            }
            Ok(_) => {}
        }
    }
    Ok(hashes)
}

/// Every file under `folder` at `revision`, hashed from git's objects.
pub fn hash_at_revision(git: &Git, revision: &str, folder: &str) -> Result<Hashes, GitError> {
    let files = git.tree_files(revision, folder)?;
    let oids: Vec<String> = files.iter().map(|file| file.oid.clone()).collect();
    let mut hashes = Hashes::new();
    git.read_blobs(&oids, |index, bytes| {
        if let Some(file) = files.get(index) {
            hashes.insert(file.path.clone(), sha256_hex(bytes));
        }
    })?;
    Ok(hashes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hashes(pairs: &[(&str, &str)]) -> Hashes {
        pairs
            .iter()
            .map(|(path, text)| ((*path).to_owned(), sha256_hex(text.as_bytes())))
            .collect()
    }

    #[test]
    fn drift_is_changed_added_and_removed_in_path_order() {
        let locked = hashes(&[("f/a", "1"), ("f/b", "2"), ("f/c", "3")]);
        let actual = hashes(&[("f/a", "1"), ("f/b", "two"), ("f/d", "4")]);
        let kinds: Vec<_> = drift(&locked, &actual)
            .into_iter()
            .map(|d| (d.path, d.kind))
            .collect();
        assert_eq!(
            kinds,
            [
                ("f/b".to_owned(), DriftKind::Changed),
                ("f/c".to_owned(), DriftKind::Removed),
                ("f/d".to_owned(), DriftKind::Added),
            ]
        );
        assert!(drift(&locked, &locked).is_empty());
    }

    #[test]
    fn the_lock_round_trips_with_sorted_keys_and_stable_bytes() {
        let lock = FixtureLock {
            files: hashes(&[
                ("tests/fixtures/z.json", "z"),
                ("tests/fixtures/a b.txt", "a"),
            ]),
        };
        let text = lock.render();
        assert!(text.ends_with("}\n"));
        let files_at = text.find("\"files\"").unwrap();
        let schema_at = text.find("\"schema\"").unwrap();
        assert!(files_at < schema_at, "{text}");
        assert!(text.find("a b.txt").unwrap() < text.find("z.json").unwrap());
        let back = FixtureLock::parse(text.as_bytes(), Path::new("l.json")).unwrap();
        assert_eq!(back, lock);
        assert_eq!(back.render(), text);
    }

    #[test]
    fn a_damaged_lock_is_located() {
        let path = Path::new("tests/fixtures.lock.json");
        let error = FixtureLock::parse(
            b"{\n  \"files\": {\n    \"a\": \"xyz\"\n  },\n  \"schema\": \"fixtures-lock.v1\"\n}\n",
            path,
        )
        .unwrap_err();
        assert_eq!(error.line, 3, "{error}");
        assert!(error.message.contains("not a sha256"), "{error}");
        let error = FixtureLock::parse(b"{\"files\": {}, \"schema\": \"v9\"}", path).unwrap_err();
        assert!(error.message.contains("\"v9\""), "{error}");
        let error = FixtureLock::parse(
            b"{\"files\": {}, \"schema\": \"fixtures-lock.v1\", \"x\": 1}",
            path,
        )
        .unwrap_err();
        assert!(error.message.contains("unknown field `x`"), "{error}");
        let good = sha256_hex(b"");
        let escaping = format!(
            "{{\"files\": {{\"../etc/passwd\": \"{good}\"}}, \"schema\": \"fixtures-lock.v1\"}}"
        );
        let error = FixtureLock::parse(escaping.as_bytes(), path).unwrap_err();
        assert!(
            error.message.contains("not a repository-relative path"),
            "{error}"
        );
        assert!(FixtureLock::parse(b"", path).is_err());
    }

    #[test]
    fn a_folder_is_walked_in_order_with_symlinks_as_their_targets() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("fx/sub")).unwrap();
        std::fs::write(root.join("fx/b.txt"), "b").unwrap();
        std::fs::write(root.join("fx/sub/a.txt"), "a").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink("b.txt", root.join("fx/link")).unwrap();
        let found = hash_folder(root, "fx").unwrap();
        let mut expected = hashes(&[("fx/b.txt", "b"), ("fx/sub/a.txt", "a")]);
        #[cfg(unix)]
        expected.insert("fx/link".into(), sha256_hex(b"b.txt"));
        assert_eq!(found, expected);
        assert!(hash_folder(root, "missing").unwrap().is_empty());
        let listed = hash_listed(root, &["fx/b.txt".into(), "fx/gone".into()]).unwrap();
        assert_eq!(listed, hashes(&[("fx/b.txt", "b")]));
    }
}
