//! sha256 of files in a work tree: one file streamed, a folder walked in sorted order, or
//! a list of paths. A symlink is hashed as its target's path, as git stores it, so a
//! checkout and the tree it came from hash alike. Beneath the fixture lock
//! (`gate::locks`) and the run records' fixture hash (`records`), which both read it.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// sha256 (lowercase hex) by repository-relative, `/`-separated path, sorted.
pub type Hashes = BTreeMap<String, String>;

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
