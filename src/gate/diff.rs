//! The change as git describes it: the output of `git diff --unified=0 --no-color
//! --no-renames BASE HEAD` parsed into the files it touches (added, modified, deleted) and
//! the lines it adds, numbered as in the new file. Pure: bytes in, a [`Diff`] out; git is
//! asked in [`crate::git::Git::diff_unified`].
//!
//! Robust against what real diffs hold: binary files (no lines), quoted paths (tabs,
//! quotes, non-ASCII bytes in C-style escapes), paths with spaces (git's trailing tab after
//! `---`/`+++` names), `\ No newline at end of file` markers, mode-only changes, empty
//! files, and a path reported twice (a symlink turned into a file). Anything else git would
//! not print is an error with its line, never a silently shorter change.

use std::fmt;

/// What happened to a file.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum FileStatus {
    /// The file is new.
    Added,
    /// The file was there before and still is.
    Modified,
    /// The file is gone.
    Deleted,
}

impl FileStatus {
    /// `added`, `modified` or `deleted`.
    pub fn as_str(self) -> &'static str {
        match self {
            FileStatus::Added => "added",
            FileStatus::Modified => "modified",
            FileStatus::Deleted => "deleted",
        }
    }
}

impl fmt::Display for FileStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One line of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// 1-based line number: in the new file for added lines, in the old for removed ones.
    pub number: usize,
    /// The line without its newline (and without a carriage return before it). Bytes that
    /// are not UTF-8 are replaced with U+FFFD.
    pub text: String,
}

/// One file the change touches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangedFile {
    /// Repository-relative, `/`-separated. Bytes that are not UTF-8 are replaced with
    /// U+FFFD.
    pub path: String,
    /// Added, modified or deleted.
    pub status: FileStatus,
    /// git called it binary: it has no lines here.
    pub binary: bool,
    /// Lines the change adds, in new-file order.
    pub added: Vec<Line>,
    /// Lines the change removes, in old-file order.
    pub removed: Vec<Line>,
}

/// The whole change.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Diff {
    /// Every touched file, in git's order (sorted by path), each once.
    pub files: Vec<ChangedFile>,
}

impl Diff {
    /// The file at `path`, when the change touches it.
    pub fn file(&self, path: &str) -> Option<&ChangedFile> {
        self.files.iter().find(|file| file.path == path)
    }

    /// Whether the change touches `path`.
    pub fn touches(&self, path: &str) -> bool {
        self.file(path).is_some()
    }
}

/// Diff text that is not what git prints.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line} of git's diff: {message}")]
pub struct DiffError {
    /// 1-based line of the diff output.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// Parses `git diff --unified=0 --no-color --no-renames` output (with git's default `a/`
/// and `b/` prefixes).
pub fn parse(output: &[u8]) -> Result<Diff, DiffError> {
    let mut parser = Parser::default();
    let body = output.strip_suffix(b"\n").unwrap_or(output);
    if !output.is_empty() {
        for (index, line) in body.split(|&b| b == b'\n').enumerate() {
            parser.line(index + 1, line)?;
        }
    }
    parser.finish(body.split(|&b| b == b'\n').count())
}

#[derive(Default)]
struct Parser {
    files: Vec<ChangedFile>,
    current: Option<Pending>,
}

/// The file being read, before its path is certain.
struct Pending {
    header_line: usize,
    header_path: Option<String>,
    old_path: Option<String>,
    new_path: Option<String>,
    status: FileStatus,
    binary: bool,
    added: Vec<Line>,
    removed: Vec<Line>,
    hunk: Option<Hunk>,
    seen_hunk: bool,
}

/// Lines still expected in the current hunk.
struct Hunk {
    old_left: usize,
    new_left: usize,
    next_old: usize,
    next_new: usize,
}

impl Parser {
    fn line(&mut self, number: usize, line: &[u8]) -> Result<(), DiffError> {
        let error = |message: String| DiffError {
            line: number,
            message,
        };
        if let Some(pending) = &mut self.current
            && let Some(hunk) = &mut pending.hunk
            && (hunk.old_left > 0 || hunk.new_left > 0)
        {
            return hunk_line(pending, number, line);
        }
        if let Some(rest) = line.strip_prefix(b"diff --git ") {
            self.close(number)?;
            self.current = Some(Pending {
                header_line: number,
                header_path: header_path(rest),
                old_path: None,
                new_path: None,
                status: FileStatus::Modified,
                binary: false,
                added: Vec::new(),
                removed: Vec::new(),
                hunk: None,
                seen_hunk: false,
            });
            return Ok(());
        }
        let Some(pending) = &mut self.current else {
            return Err(error(format!(
                "expected `diff --git`, found {:?}",
                shown(line)
            )));
        };
        if line.starts_with(b"@@@") {
            return Err(error(
                "a combined diff of a merge; candor compares two commits".to_owned(),
            ));
        }
        if let Some(rest) = line.strip_prefix(b"@@ -") {
            let hunk = hunk_header(rest)
                .ok_or_else(|| error(format!("not a hunk header: {:?}", shown(line))))?;
            pending.hunk = Some(hunk);
            pending.seen_hunk = true;
            return Ok(());
        }
        if line.starts_with(b"\\") {
            // "\ No newline at end of file": about the line before, which is whole already.
            return Ok(());
        }
        if pending.seen_hunk {
            return Err(error(format!("a line outside any hunk: {:?}", shown(line))));
        }
        if line.starts_with(b"new file mode ") {
            pending.status = FileStatus::Added;
        } else if line.starts_with(b"deleted file mode ") {
            pending.status = FileStatus::Deleted;
        } else if let Some(rest) = line.strip_prefix(b"--- ") {
            if rest == b"/dev/null" {
                pending.status = FileStatus::Added;
            } else {
                pending.old_path = side_path(rest, b"a/");
            }
        } else if let Some(rest) = line.strip_prefix(b"+++ ") {
            if rest == b"/dev/null" {
                pending.status = FileStatus::Deleted;
            } else {
                pending.new_path = side_path(rest, b"b/");
            }
        } else if line.starts_with(b"Binary files ") || line == b"GIT binary patch" {
            pending.binary = true;
        }
        // Anything else in a header (index, mode, similarity lines, a binary patch's
        // data) says nothing about paths or lines.
        Ok(())
    }

    /// Ends the file being read, if any.
    fn close(&mut self, number: usize) -> Result<(), DiffError> {
        let Some(pending) = self.current.take() else {
            return Ok(());
        };
        if let Some(hunk) = &pending.hunk
            && (hunk.old_left > 0 || hunk.new_left > 0)
        {
            return Err(DiffError {
                line: number,
                message: format!(
                    "the diff ends inside a hunk: {} removed and {} added lines are missing",
                    hunk.old_left, hunk.new_left
                ),
            });
        }
        let path = pending
            .new_path
            .clone()
            .or_else(|| pending.old_path.clone())
            .or_else(|| pending.header_path.clone())
            .ok_or_else(|| DiffError {
                line: pending.header_line,
                message: "cannot tell which file this is".to_owned(),
            })?;
        let file = ChangedFile {
            path,
            status: pending.status,
            binary: pending.binary,
            added: pending.added,
            removed: pending.removed,
        };
        match self.files.iter_mut().find(|f| f.path == file.path) {
            // A type change (symlink to file) is a deletion then an addition of one path.
            Some(earlier) => {
                earlier.status = match (earlier.status, file.status) {
                    (FileStatus::Deleted, FileStatus::Added) => FileStatus::Modified,
                    (_, later) => later,
                };
                earlier.binary |= file.binary;
                earlier.added.extend(file.added);
                earlier.removed.extend(file.removed);
            }
            None => self.files.push(file),
        }
        Ok(())
    }

    fn finish(mut self, lines: usize) -> Result<Diff, DiffError> {
        self.close(lines + 1)?;
        Ok(Diff { files: self.files })
    }
}

fn hunk_line(pending: &mut Pending, number: usize, line: &[u8]) -> Result<(), DiffError> {
    let Some(hunk) = &mut pending.hunk else {
        return Ok(());
    };
    let text = |rest: &[u8]| {
        let rest = rest.strip_suffix(b"\r").unwrap_or(rest);
        String::from_utf8_lossy(rest).into_owned()
    };
    let short = |side: &str| DiffError {
        line: number,
        message: format!("the hunk has more {side} lines than its header says"),
    };
    match line.first() {
        Some(b'+') => {
            hunk.new_left = hunk.new_left.checked_sub(1).ok_or_else(|| short("added"))?;
            pending.added.push(Line {
                number: hunk.next_new,
                text: text(line.get(1..).unwrap_or_default()),
            });
            hunk.next_new = hunk.next_new.saturating_add(1);
        }
        Some(b'-') => {
            hunk.old_left = hunk
                .old_left
                .checked_sub(1)
                .ok_or_else(|| short("removed"))?;
            pending.removed.push(Line {
                number: hunk.next_old,
                text: text(line.get(1..).unwrap_or_default()),
            });
            hunk.next_old = hunk.next_old.saturating_add(1);
        }
        // Context (none with --unified=0, but a caller may ask for some); an empty line is
        // an empty context line under diff.suppressBlankEmpty.
        Some(b' ') | None => {
            hunk.old_left = hunk
                .old_left
                .checked_sub(1)
                .ok_or_else(|| short("context"))?;
            hunk.new_left = hunk
                .new_left
                .checked_sub(1)
                .ok_or_else(|| short("context"))?;
            hunk.next_old = hunk.next_old.saturating_add(1);
            hunk.next_new = hunk.next_new.saturating_add(1);
        }
        Some(b'\\') => {}
        Some(_) => {
            return Err(DiffError {
                line: number,
                message: format!(
                    "the hunk is short of {} removed and {} added lines, and then comes {:?}",
                    hunk.old_left,
                    hunk.new_left,
                    shown(line)
                ),
            });
        }
    }
    Ok(())
}

/// `a,b +c,d @@ …` after `@@ -`; a missing count is 1.
fn hunk_header(rest: &[u8]) -> Option<Hunk> {
    // What follows the second `@@` is the function's line, in any encoding.
    let end = rest.windows(3).position(|w| w == b" @@")?;
    let ranges = std::str::from_utf8(rest.get(..end)?).ok()?;
    let (old, new) = ranges.split_once(" +")?;
    let range = |text: &str| -> Option<(usize, usize)> {
        match text.split_once(',') {
            Some((start, count)) => Some((number(start)?, number(count)?)),
            None => Some((number(text)?, 1)),
        }
    };
    let (old_start, old_count) = range(old)?;
    let (new_start, new_count) = range(new)?;
    Some(Hunk {
        old_left: old_count,
        new_left: new_count,
        next_old: old_start,
        next_new: new_start,
    })
}

fn number(text: &str) -> Option<usize> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// The path of `a/P b/P` (or `"a/P" "b/P"`): with renames off both sides name the same
/// path, which settles where a path with spaces splits.
fn header_path(rest: &[u8]) -> Option<String> {
    if rest.first() == Some(&b'"') {
        let (left, after) = unquote(rest)?;
        let right = after.strip_prefix(b" ")?;
        let (right, tail) = if right.first() == Some(&b'"') {
            unquote(right)?
        } else {
            (right.to_vec(), &b""[..])
        };
        if !tail.is_empty() {
            return None;
        }
        let left = left.strip_prefix(b"a/")?;
        let right = right.strip_prefix(b"b/")?;
        return (left == right).then(|| String::from_utf8_lossy(left).into_owned());
    }
    if rest.len() < 5 || rest.len().is_multiple_of(2) {
        return None;
    }
    let half = (rest.len() - 1) / 2;
    let (left, right) = (rest.get(..half)?, rest.get(half + 1..)?);
    let left = left.strip_prefix(b"a/")?;
    let right = right.strip_prefix(b"b/")?;
    (rest.get(half) == Some(&b' ') && left == right)
        .then(|| String::from_utf8_lossy(left).into_owned())
}

/// The path after `--- ` or `+++ `, without its side's prefix.
fn side_path(rest: &[u8], prefix: &[u8]) -> Option<String> {
    let bytes = if rest.first() == Some(&b'"') {
        let (path, tail) = unquote(rest)?;
        if !tail.is_empty() && tail != b"\t" {
            return None;
        }
        path
    } else {
        // git ends a name that holds a space with a tab, for patch(1); a real tab in a
        // name would have been quoted.
        rest.strip_suffix(b"\t").unwrap_or(rest).to_vec()
    };
    let path = bytes.strip_prefix(prefix)?;
    (!path.is_empty()).then(|| String::from_utf8_lossy(path).into_owned())
}

/// A C-style quoted string at the start of `text` (git's quoting of unusual paths): the
/// bytes it stands for, and what follows the closing quote.
fn unquote(text: &[u8]) -> Option<(Vec<u8>, &[u8])> {
    let mut bytes = Vec::new();
    let mut index = 1;
    loop {
        let byte = *text.get(index)?;
        index += 1;
        match byte {
            b'"' => return Some((bytes, text.get(index..)?)),
            b'\\' => {
                let escaped = *text.get(index)?;
                index += 1;
                let value = match escaped {
                    b'a' => 0x07,
                    b'b' => 0x08,
                    b't' => b'\t',
                    b'n' => b'\n',
                    b'v' => 0x0b,
                    b'f' => 0x0c,
                    b'r' => b'\r',
                    b'"' | b'\\' => escaped,
                    b'0'..=b'3' => {
                        let digits = text.get(index - 1..index + 2)?;
                        index += 2;
                        let mut value: u8 = 0;
                        for digit in digits {
                            if !(b'0'..=b'7').contains(digit) {
                                return None;
                            }
                            value = value.checked_mul(8)?.checked_add(digit - b'0')?;
                        }
                        value
                    }
                    _ => return None,
                };
                bytes.push(value);
            }
            _ => bytes.push(byte),
        }
    }
}

/// A line of the diff for an error message, cut short.
fn shown(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(line);
    let mut cut: String = text.chars().take(80).collect();
    if cut.len() < text.len() {
        cut.push('…');
    }
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    fn added(file: &ChangedFile) -> Vec<(usize, &str)> {
        file.added
            .iter()
            .map(|line| (line.number, line.text.as_str()))
            .collect()
    }

    #[test]
    fn statuses_line_numbers_and_no_newline_markers() {
        let text = b"diff --git a/tests/test_a.py b/tests/test_a.py
index 1111111..2222222 100644
--- a/tests/test_a.py
+++ b/tests/test_a.py
@@ -3 +3,2 @@ def test_one():
-    assert one() == 1
+    assert one() == 1
+    assert two() == 2
@@ -10,0 +12 @@ def test_two():
+@pytest.mark.flaky
\\ No newline at end of file
diff --git a/gone.txt b/gone.txt
deleted file mode 100644
index 3333333..0000000
--- a/gone.txt
+++ /dev/null
@@ -1,2 +0,0 @@
-x
-y
diff --git a/new file.py b/new file.py
new file mode 100644
index 0000000..4444444
--- /dev/null
+++ b/new file.py\t
@@ -0,0 +1 @@
+import time\r
";
        let diff = parse(text).unwrap();
        let [a, gone, new] = diff.files.as_slice() else {
            panic!("{diff:?}");
        };
        assert_eq!(a.path, "tests/test_a.py");
        assert_eq!(a.status, FileStatus::Modified);
        assert_eq!(
            added(a),
            [
                (3, "    assert one() == 1"),
                (4, "    assert two() == 2"),
                (12, "@pytest.mark.flaky")
            ]
        );
        assert_eq!(a.removed.len(), 1);
        assert_eq!(
            (gone.path.as_str(), gone.status),
            ("gone.txt", FileStatus::Deleted)
        );
        assert_eq!(gone.removed[1].number, 2);
        assert_eq!(
            (new.path.as_str(), new.status),
            ("new file.py", FileStatus::Added)
        );
        assert_eq!(added(new), [(1, "import time")]);
    }

    #[test]
    fn binary_empty_mode_only_and_quoted_paths() {
        let text = b"diff --git a/img.png b/img.png
new file mode 100644
index 0000000..5555555
Binary files /dev/null and b/img.png differ
diff --git a/empty b/empty
new file mode 100644
index 0000000..e69de29
diff --git a/run.sh b/run.sh
old mode 100644
new mode 100755
diff --git \"a/t\\tab \\\"q\\\" \\303\\251.py\" \"b/t\\tab \\\"q\\\" \\303\\251.py\"
new file mode 100644
--- /dev/null
+++ \"b/t\\tab \\\"q\\\" \\303\\251.py\"
@@ -0,0 +1 @@
+x = 1
";
        let diff = parse(text).unwrap();
        let paths: Vec<_> = diff
            .files
            .iter()
            .map(|f| (f.path.as_str(), f.status, f.binary))
            .collect();
        assert_eq!(
            paths,
            [
                ("img.png", FileStatus::Added, true),
                ("empty", FileStatus::Added, false),
                ("run.sh", FileStatus::Modified, false),
                ("t\tab \"q\" é.py", FileStatus::Added, false),
            ]
        );
        assert!(diff.touches("empty"));
        assert_eq!(diff.files[3].added[0].text, "x = 1");
    }

    #[test]
    fn a_type_change_is_one_modified_file() {
        let text = b"diff --git a/link b/link
deleted file mode 120000
--- a/link
+++ /dev/null
@@ -1 +0,0 @@
-target
\\ No newline at end of file
diff --git a/link b/link
new file mode 100644
--- /dev/null
+++ b/link
@@ -0,0 +1 @@
+content
";
        let diff = parse(text).unwrap();
        assert_eq!(diff.files.len(), 1);
        assert_eq!(diff.files[0].status, FileStatus::Modified);
        assert_eq!(added(&diff.files[0]), [(1, "content")]);
    }

    #[test]
    fn lines_that_look_like_headers_inside_a_hunk_are_content() {
        let text = b"diff --git a/a.md b/a.md
--- a/a.md
+++ b/a.md
@@ -0,0 +1,2 @@
+diff --git a/x b/x
+@@ -1 +1 @@
";
        let diff = parse(text).unwrap();
        assert_eq!(diff.files.len(), 1);
        assert_eq!(
            added(&diff.files[0]),
            [(1, "diff --git a/x b/x"), (2, "@@ -1 +1 @@")]
        );
    }

    #[test]
    fn damaged_diffs_are_errors_with_lines() {
        assert_eq!(parse(b"").unwrap(), Diff::default());
        let error = parse(b"hello\n").unwrap_err();
        assert_eq!(error.line, 1);
        let truncated = b"diff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -1 +1,3 @@\n-x\n+y\n";
        let error = parse(truncated).unwrap_err();
        assert!(error.message.contains("ends inside a hunk"), "{error}");
        let interrupted = b"diff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -1 +1,2 @@\n-x\n+y\nstray\n";
        let error = parse(interrupted).unwrap_err();
        assert_eq!(error.line, 7);
        let bad_header = b"diff --git a/a b/a\n@@ -x +1 @@\n";
        assert_eq!(parse(bad_header).unwrap_err().line, 2);
        let nameless = b"diff --git a/x b/y z\nnew file mode 100644\n";
        assert!(parse(nameless).unwrap_err().message.contains("which file"));
        assert!(parse(b"diff --git a/a b/a\n@@@ -1 -1 +1 @@@\n").is_err());
    }

    proptest::proptest! {
        #![proptest_config(crate::test_support::proptest_config(512))]

        /// Any bytes are a diff or an error, never a panic; and lines are never numbered 0
        /// unless git said so.
        #[test]
        fn arbitrary_text_never_panics(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..400)) {
            let _ = parse(&bytes);
        }

        /// Damage to a real diff (a cut, an insertion of diff-like text) is an error or a
        /// diff, never a panic.
        #[test]
        fn damaged_real_diffs_never_panic(
            cut in 0usize..300,
            insert in r#"(\PC|[\n+\-@ "\\]|diff --git |@@ -|\+\+\+ |--- ){0,8}"#,
        ) {
            let real = "diff --git a/t.py b/t.py\nindex 1..2 100644\n--- a/t.py\n+++ b/t.py\n@@ -1,2 +1 @@\n-a\n-b\n+c\n\\ No newline at end of file\ndiff --git \"a/\\303\\251\" \"b/\\303\\251\"\nnew file mode 100644\n--- /dev/null\n+++ \"b/\\303\\251\"\n@@ -0,0 +1,2 @@\n+x\n+y\n";
            let mut at = cut.min(real.len());
            while !real.is_char_boundary(at) {
                at -= 1;
            }
            let text = format!("{}{insert}{}", &real[..at], &real[at..]);
            if let Err(error) = parse(text.as_bytes()) {
                proptest::prop_assert!(error.line >= 1 && error.line <= text.lines().count() + 2);
            }
        }
    }
}
