//! Paths and the failing frame: cleaning a frame's path and telling the repository's own
//! frames from the runtime's, libraries' and tools'.

use crate::results::model::Frame;

use super::{JAVA_FOREIGN_PACKAGES, Language};

const FOREIGN_SEGMENTS: &[&str] = &[
    "site-packages",
    "dist-packages",
    "node_modules",
    "vendor",
    "third_party",
    ".cargo",
    ".rustup",
];

const RUST_STD_PREFIXES: &[&str] = &[
    "library/std/",
    "library/core/",
    "library/alloc/",
    "library/test/",
    "library/panic_unwind/",
    "src/libstd/",
    "src/libcore/",
    "src/liballoc/",
    "src/libtest/",
];

const NODE_INTERNAL_PREFIXES: &[&str] = &[
    "internal/process/",
    "internal/modules/",
    "internal/main/",
    "internal/timers",
    "internal/util",
    "internal/async_hooks",
    "internal/streams/",
    "internal/bootstrap/",
];

/// Top-level standard-library directories as `go test -trimpath` prints them.
const GO_STD_ROOTS: &[&str] = &[
    "runtime", "testing", "reflect", "sync", "internal", "os", "net", "syscall", "fmt", "io",
    "encoding", "context", "time", "crypto", "errors", "strings", "bytes", "strconv", "sort",
    "log",
];

pub(super) fn clean_path(path: &str) -> String {
    let path = path.trim();
    let mut cleaned = match path.strip_prefix("file://") {
        // `file:///C:/x` names a Windows drive; `file:///home/x` an absolute Unix path.
        Some(rest) if rest.as_bytes().get(2) == Some(&b':') => {
            rest.get(1..).unwrap_or(rest).replace("%20", " ")
        }
        Some(rest) => rest.replace("%20", " "),
        None => path.to_owned(),
    };
    if cleaned.contains('\\') {
        cleaned = cleaned.replace('\\', "/");
    }
    while let Some(rest) = cleaned.strip_prefix("./") {
        cleaned = rest.to_owned();
    }
    cleaned
}

pub(super) fn clean_root(root: &str) -> String {
    clean_path(root).trim_end_matches('/').to_owned()
}

pub(super) fn is_absolute(path: &str) -> bool {
    let bytes = path.as_bytes();
    path.starts_with('/')
        || (bytes.len() > 2
            && bytes[0].is_ascii_alphabetic()
            && bytes[1] == b':'
            && bytes[2] == b'/')
}

pub(super) fn relativize(mut frame: Frame, root: Option<&str>) -> Frame {
    let Some(root) = root.filter(|r| !r.is_empty()) else {
        return frame;
    };
    let prefix_len = root.len();
    let under_root = frame.file.len() > prefix_len + 1
        && frame.file.is_char_boundary(prefix_len)
        && frame.file.as_bytes().get(prefix_len) == Some(&b'/')
        && frame.file.get(..prefix_len).is_some_and(|head| {
            head == root || (has_drive(root) && head.eq_ignore_ascii_case(root))
        });
    if under_root && let Some(rest) = frame.file.get(prefix_len + 1..) {
        frame.file = rest.to_owned();
    }
    frame
}

fn has_drive(path: &str) -> bool {
    path.as_bytes().get(1) == Some(&b':')
}

/// Whether `frame` (already cleaned and made relative) is the repository's own code.
/// `printed_relative`: the runner printed a relative path (rather than an absolute one
/// under the repository root), which is how `-trimpath` Go and old Rust print the
/// standard library.
pub(super) fn is_repository_frame(
    frame: &Frame,
    language: Language,
    printed_relative: bool,
) -> bool {
    if frame.line.is_none() {
        return false;
    }
    if language == Language::Java {
        return frame.function.as_deref().is_some_and(|function| {
            !JAVA_FOREIGN_PACKAGES
                .iter()
                .any(|package| function.starts_with(package))
        });
    }
    let file = frame.file.as_str();
    if file.is_empty()
        || is_absolute(file)
        || file.starts_with("../")
        || file.starts_with('<')
        || file.starts_with("node:")
        || file.starts_with("$GOROOT")
        || file.contains("://")
    {
        return false;
    }
    let segments: Vec<&str> = file.split('/').collect();
    if segments
        .iter()
        .any(|segment| FOREIGN_SEGMENTS.contains(segment))
        || segments.windows(2).any(|pair| pair == ["pkg", "mod"])
    {
        return false;
    }
    match language {
        Language::Rust => {
            !(printed_relative && RUST_STD_PREFIXES.iter().any(|p| file.starts_with(p)))
        }
        Language::JavaScript => {
            !(printed_relative && NODE_INTERNAL_PREFIXES.iter().any(|p| file.starts_with(p)))
        }
        Language::Go => {
            let trimpath_std = printed_relative
                && segments.len() > 1
                && segments.first().is_some_and(|s| GO_STD_ROOTS.contains(s));
            let module_cache = segments.iter().any(|s| s.contains('@'));
            // `testing.go` alone is the testing package logging about a test ("race
            // detected during execution of test"), printed like a `t.Error` line.
            let testing_package = printed_relative && file == "testing.go";
            segments.last() != Some(&"_testmain.go")
                && !trimpath_std
                && !module_cache
                && !testing_package
        }
        _ => true,
    }
}
