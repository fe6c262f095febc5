//! Writes stay inside the repository: before candor writes a file or makes a folder under
//! the repository root, every part of its path that exists is resolved, and a symlink that
//! leads out of the repository (or nowhere) is refused. A committed symlink (`.ci` →
//! `/tmp/x`, `.flake-ledger.tsv` → `../elsewhere`, `.candor` → `$HOME`) is data the change
//! controls, so it must not steer where candor writes. Paths outside the root (an explicit
//! `--db /tmp/h.db`) are the caller's to allow; this module only judges paths under it.
//! Only checks: opening and writing stay with the modules that own each file.

use std::io;
use std::path::{Component, Path, PathBuf};

/// Why a path under the repository may not be written.
#[derive(Debug, thiserror::Error)]
pub enum ConfineError {
    /// The path leaves the repository by its spelling (`..`, or not under the root).
    #[error("{} is not inside the repository {}", path.display(), root.display())]
    Outside {
        /// The path.
        path: PathBuf,
        /// The repository root.
        root: PathBuf,
    },
    /// A symlink on the way leads out of the repository, or to nothing.
    #[error(
        "{} leads out of the repository: {} is a symlink to {}",
        path.display(),
        link.display(),
        target.display()
    )]
    Symlink {
        /// The path candor was to write.
        path: PathBuf,
        /// The symlink on its way.
        link: PathBuf,
        /// Where the symlink points, as written in it.
        target: PathBuf,
    },
    /// A part of the path could not be examined.
    #[error("cannot examine {} before writing it", path.display())]
    Io {
        /// The part.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
}

impl ConfineError {
    /// What to do about it.
    pub fn hint(&self) -> &'static str {
        match self {
            ConfineError::Outside { .. } => {
                "give the path relative to the repository root, without `..`"
            }
            ConfineError::Symlink { .. } => {
                "candor writes only inside the repository: replace the symlink with a real file or folder (or point it inside the repository)"
            }
            ConfineError::Io { .. } => "check the folder's permissions",
        }
    }
}

/// Whether `path` lies lexically under `root` (neither needs to exist).
pub fn is_under(root: &Path, path: &Path) -> bool {
    path.strip_prefix(root).is_ok_and(|rest| {
        rest.components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
    })
}

/// Checks that writing `path` (absolute, or relative to `root`) creates or replaces
/// something inside `root`: no `..`, and no symlink along the way that resolves outside
/// `root` or does not resolve. Returns the path as given, joined to `root`.
pub fn check_write(root: &Path, path: &Path) -> Result<PathBuf, ConfineError> {
    let full = root.join(path);
    let outside = || ConfineError::Outside {
        path: full.clone(),
        root: root.to_owned(),
    };
    let rest = full.strip_prefix(root).map_err(|_| outside())?;
    if !rest
        .components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return Err(outside());
    }
    let canonical_root = fs_err_canonical(root)?;
    let mut here = canonical_root.clone();
    let mut spelled = root.to_owned();
    for component in rest.components() {
        let part = match component {
            Component::Normal(part) => part,
            Component::CurDir => continue,
            _ => return Err(outside()),
        };
        spelled.push(part);
        let next = here.join(part);
        let metadata = match std::fs::symlink_metadata(&next) {
            Ok(metadata) => metadata,
            // Nothing exists from here on, so nothing further can be a symlink.
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(full),
            Err(source) => return Err(ConfineError::Io { path: next, source }),
        };
        if !metadata.file_type().is_symlink() {
            here = next;
            continue;
        }
        let escape = || ConfineError::Symlink {
            path: full.clone(),
            link: spelled.clone(),
            target: std::fs::read_link(&next).unwrap_or_default(),
        };
        // A dangling link would be created through: its target is wherever it says.
        let resolved = std::fs::canonicalize(&next).map_err(|_| escape())?;
        if !resolved.starts_with(&canonical_root) {
            return Err(escape());
        }
        here = resolved;
    }
    Ok(full)
}

/// [`check_write`] for a path that may lie outside `root`: one outside is the caller's
/// explicit choice and passes; one under it is checked.
pub fn check_write_if_under(root: &Path, path: &Path) -> Result<(), ConfineError> {
    if is_under(root, path) {
        check_write(root, path).map(drop)
    } else {
        Ok(())
    }
}

fn fs_err_canonical(root: &Path) -> Result<PathBuf, ConfineError> {
    std::fs::canonicalize(root).map_err(|source| ConfineError::Io {
        path: root.to_owned(),
        source,
    })
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn repo() -> (tempfile::TempDir, tempfile::TempDir) {
        (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap())
    }

    #[test]
    fn plain_paths_inside_pass() {
        let (repo, _) = repo();
        let root = repo.path();
        std::fs::create_dir(root.join(".ci")).unwrap();
        assert!(check_write(root, Path::new(".ci/test-reliability.yaml")).is_ok());
        assert!(check_write(root, Path::new("new/folder/file")).is_ok());
        assert!(check_write(root, &root.join(".flake-ledger.tsv")).is_ok());
    }

    #[test]
    fn parent_and_absolute_paths_are_outside() {
        let (repo, other) = repo();
        let root = repo.path();
        let error = check_write(root, Path::new("../x.tsv")).unwrap_err();
        assert!(matches!(error, ConfineError::Outside { .. }), "{error}");
        let error = check_write(root, &other.path().join("x.tsv")).unwrap_err();
        assert!(matches!(error, ConfineError::Outside { .. }), "{error}");
        let error = check_write(root, Path::new("a/../../x")).unwrap_err();
        assert!(matches!(error, ConfineError::Outside { .. }), "{error}");
    }

    #[test]
    fn a_folder_symlink_out_is_refused_and_named() {
        let (repo, other) = repo();
        let root = repo.path();
        symlink(other.path(), root.join(".ci")).unwrap();
        let error = check_write(root, Path::new(".ci/test-reliability.yaml")).unwrap_err();
        let ConfineError::Symlink { link, target, .. } = &error else {
            panic!("{error}");
        };
        assert_eq!(link, &root.join(".ci"));
        assert_eq!(target, other.path());
    }

    #[test]
    fn a_file_symlink_out_and_a_dangling_one_are_refused() {
        let (repo, other) = repo();
        let root = repo.path();
        std::fs::write(other.path().join("ledger.tsv"), "").unwrap();
        symlink(
            other.path().join("ledger.tsv"),
            root.join(".flake-ledger.tsv"),
        )
        .unwrap();
        assert!(check_write(root, Path::new(".flake-ledger.tsv")).is_err());
        symlink(other.path().join("missing"), root.join("dangling")).unwrap();
        assert!(check_write(root, Path::new("dangling")).is_err());
        assert!(check_write(root, Path::new("dangling/below")).is_err());
    }

    #[test]
    fn a_symlink_that_stays_inside_passes() {
        let (repo, _) = repo();
        let root = repo.path();
        std::fs::create_dir(root.join("real")).unwrap();
        symlink(root.join("real"), root.join("alias")).unwrap();
        symlink("real", root.join("relative")).unwrap();
        assert!(check_write(root, Path::new("alias/file")).is_ok());
        assert!(check_write(root, Path::new("relative/file")).is_ok());
        // Up and back into the repository through a relative link is still inside.
        std::fs::create_dir(root.join("sub")).unwrap();
        symlink("../real", root.join("sub/up")).unwrap();
        assert!(check_write(root, Path::new("sub/up/file")).is_ok());
    }

    #[test]
    fn only_paths_under_the_root_are_judged_by_the_lenient_check() {
        let (repo, other) = repo();
        let root = repo.path();
        assert!(check_write_if_under(root, &other.path().join("h.db")).is_ok());
        symlink(other.path(), root.join(".candor")).unwrap();
        assert!(check_write_if_under(root, &root.join(".candor/history.db")).is_err());
    }
}
