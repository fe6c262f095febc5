//! The keeper of go test binaries: the program one `go test -exec` runs in place of each
//! package's test binary, keeping the binary instead of running it, so that one go
//! process builds (vets and links) every package's binary beside the others where go
//! 1.19's `go test -c` builds one package per process (issue #15).
//!
//! go runs `KEEPER a.test FLAGS…` in the package's folder, the binary in go's own
//! temporary folder, which it removes afterwards; the keeper links (else copies) it into
//! the folder it was given, named for the package's folder ([`kept_name`]).

use std::ffi::OsString;
use std::path::Path;

use sha2::{Digest, Sha256};

/// The first argument that makes the `candor` binary the keeper (not a command: go
/// gives it, never a user).
pub const KEEPER_ARGUMENT: &str = "__keep-go-test-binary";

/// go's `-exec` value that keeps each binary in `folder`, when there is a keeper and
/// both paths can be written as go's fields. The keeper is the running `candor` binary
/// ([`super::own_program`]); the library on its own has none and builds one package per
/// `go test -c`.
pub fn exec_value(folder: &Path) -> Option<String> {
    let keeper = super::own_program()?;
    Some(
        [
            go_field(&keeper.to_string_lossy())?,
            KEEPER_ARGUMENT.to_owned(),
            go_field(&folder.to_string_lossy())?,
        ]
        .join(" "),
    )
}

/// One field of a go command-line value as go splits it (fields apart at white space; a
/// field that starts with `'` or `"` runs to the same quote, with no escapes): the text
/// itself, quoted when it must be, `None` when no quote can hold it.
fn go_field(text: &str) -> Option<String> {
    let plain =
        !text.is_empty() && !text.contains(char::is_whitespace) && !text.starts_with(['\'', '"']);
    if plain {
        Some(text.to_owned())
    } else if !text.contains('"') {
        Some(format!("\"{text}\""))
    } else if !text.contains('\'') {
        Some(format!("'{text}'"))
    } else {
        None
    }
}

/// The kept binary's file name for a package folder: a digest of its canonical path,
/// which the keeper (given only its working folder) and candor (given `go list`'s
/// folders) both compute.
pub fn kept_name(package_folder: &Path) -> String {
    let canonical =
        std::fs::canonicalize(package_folder).unwrap_or_else(|_| package_folder.to_path_buf());
    let digest = Sha256::digest(canonical.as_os_str().as_encoded_bytes());
    format!("{}.test", hex::encode(&digest[..10]))
}

/// The keeper itself: `arguments` are the folder and go's binary (then go's test flags,
/// ignored). 0 when the binary is kept; otherwise the reason on stderr and 1, which go
/// reports as the package's failure.
pub fn keep(arguments: &[OsString]) -> u8 {
    match keep_in_folder(arguments) {
        Ok(()) => 0,
        Err(why) => {
            eprintln!("candor could not keep the test binary: {why}");
            1
        }
    }
}

fn keep_in_folder(arguments: &[OsString]) -> Result<(), String> {
    let [folder, binary, ..] = arguments else {
        return Err("expected the folder and the binary".to_owned());
    };
    let here = std::env::current_dir().map_err(|e| format!("no working folder: {e}"))?;
    let kept = Path::new(folder).join(kept_name(&here));
    let binary = Path::new(binary);
    if std::fs::hard_link(binary, &kept).is_ok() {
        return Ok(());
    }
    // Another file system than go's temporary folder, or the name taken: a copy, which
    // never goes over a kept binary.
    copy_as_new(binary, &kept).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            format!(
                "{} is already kept: two packages resolve to one folder, {}",
                kept.display(),
                here.display()
            )
        } else {
            format!("{} to {}: {e}", binary.display(), kept.display())
        }
    })
}

/// Copies `from` to `to` with its permissions, failing when `to` exists: a binary kept
/// for one package is never replaced by another's.
fn copy_as_new(from: &Path, to: &Path) -> std::io::Result<()> {
    let mut source = std::fs::File::open(from)?;
    let mut target = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(to)?;
    std::io::copy(&mut source, &mut target)?;
    target.set_permissions(source.metadata()?.permissions())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_quoted_only_when_go_would_split_them() {
        assert_eq!(
            go_field("/usr/bin/candor").as_deref(),
            Some("/usr/bin/candor")
        );
        assert_eq!(go_field("/a b/candor").as_deref(), Some("\"/a b/candor\""));
        assert_eq!(go_field("/a \"b\"/c").as_deref(), Some("'/a \"b\"/c'"));
        assert_eq!(go_field("\"x").as_deref(), Some("'\"x'"));
        assert_eq!(go_field("/a 'b' \"c\""), None);
        assert_eq!(go_field(""), Some("\"\"".to_owned()));
    }

    #[test]
    fn the_keeper_keeps_the_binary_under_its_folder_s_name() {
        let temp = tempfile::tempdir().expect("temp dir");
        let binary = temp.path().join("a.test");
        std::fs::write(&binary, b"binary").expect("write");
        let kept = temp.path().join("kept");
        std::fs::create_dir(&kept).expect("mkdir");
        let package = std::env::current_dir().expect("cwd");
        let code = keep(&[
            kept.clone().into_os_string(),
            binary.into_os_string(),
            OsString::from("-test.run=^$"),
        ]);
        assert_eq!(code, 0);
        let name = kept_name(&package);
        assert_eq!(std::fs::read(kept.join(&name)).expect("kept"), b"binary");
        assert_eq!(keep(&[kept.clone().into_os_string()]), 1);

        // A second binary for the same folder is refused, the first one left as kept.
        let other = temp.path().join("b.test");
        std::fs::write(&other, b"other").expect("write");
        let again = keep(&[kept.clone().into_os_string(), other.into_os_string()]);
        assert_eq!(again, 1);
        assert_eq!(std::fs::read(kept.join(&name)).expect("kept"), b"binary");
    }

    #[test]
    fn the_copy_never_replaces_a_kept_binary() {
        let temp = tempfile::tempdir().expect("temp dir");
        let binary = temp.path().join("a.test");
        std::fs::write(&binary, b"binary").expect("write");
        let kept = temp.path().join("kept.test");
        copy_as_new(&binary, &kept).expect("first copy");
        assert_eq!(std::fs::read(&kept).expect("kept"), b"binary");
        std::fs::write(&binary, b"other").expect("write");
        let again = copy_as_new(&binary, &kept).expect_err("second copy refused");
        assert_eq!(again.kind(), std::io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read(&kept).expect("kept"), b"binary");
    }
}
