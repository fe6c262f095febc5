//! Text candor shows that came from outside (test ids, messages, failure text): made
//! visible (control characters replaced, invisible format characters such as the bidi
//! override U+202E written as `\u{202E}`) and, inside commands people or agents paste
//! into a shell, POSIX-quoted so that `$(…)`, backticks, globs and spaces are taken
//! literally. JSON output keeps the exact text; only what is shown goes through here.

use std::fmt::Write as _;

use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};

/// `text` with each control character (escapes, newlines, NUL) replaced by U+FFFD and
/// each format character (Unicode category Cf: bidi controls, zero-width spaces and
/// joiners, the BOM, tags) written as `\u{XXXX}`, so what a terminal shows is what is
/// there.
pub fn visible(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() {
            out.push('\u{FFFD}');
        } else if c.general_category() == GeneralCategory::Format {
            let _ = write!(out, "\\u{{{:04X}}}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    out
}

/// One line of a failure's or a runner's text (a traceback, a panic's goroutine dump, go's
/// `FAIL\tpkg`) made [`visible`], its tabs shown as four spaces: they indent and separate
/// there, they hide nothing.
pub fn visible_text_line(line: &str) -> String {
    visible(&line.replace('\t', "    "))
}

/// [`visible_text_line`] line by line: line breaks kept, for messages of several lines
/// (an error quoting a compiler's or runner's words).
pub fn visible_lines(text: &str) -> String {
    text.split('\n')
        .map(visible_text_line)
        .collect::<Vec<_>>()
        .join("\n")
}

/// A command line to paste into a POSIX shell: each word made [`visible`], then quoted
/// where it needs it (`candor rerun 'tests/x.py::test_h[$(touch pwned)]'`).
pub fn shell_command(words: &[&str]) -> String {
    words
        .iter()
        .map(|word| {
            let shown = visible(word);
            // `visible` leaves no NUL, the one thing a POSIX word cannot hold.
            shlex::try_quote(&shown).map_or_else(|_| "''".to_owned(), std::borrow::Cow::into_owned)
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_characters_are_escaped_and_controls_replaced() {
        assert_eq!(visible("test_\u{202E}gnp.exe"), "test_\\u{202E}gnp.exe");
        assert_eq!(visible("a\u{200B}b\u{FEFF}"), "a\\u{200B}b\\u{FEFF}");
        assert_eq!(visible("a\x1b[2Jb\n"), "a\u{FFFD}[2Jb\u{FFFD}");
        assert_eq!(visible("plain [ids] ü"), "plain [ids] ü");
        assert_eq!(visible_lines("a\u{202E}\nb\x07"), "a\\u{202E}\nb\u{FFFD}");
        // A Go panic's frames are indented with a tab; an id's tab stays marked.
        assert_eq!(
            visible_text_line("\t/src/a.go:12 +0x1f\x1b"),
            "    /src/a.go:12 +0x1f\u{FFFD}"
        );
        assert_eq!(visible("a\tb"), "a\u{FFFD}b");
        assert_eq!(
            visible_lines("FAIL\tpkg\n\tx\x07"),
            "FAIL    pkg\n    x\u{FFFD}"
        );
    }

    #[test]
    fn plain_ids_stay_readable_and_dangerous_ones_are_quoted() {
        assert_eq!(
            shell_command(&["candor", "show", "tests/x.py"]),
            "candor show tests/x.py"
        );
        let quoted = shell_command(&["candor", "rerun", "tests/x.py::test_h[$(touch pwned)]"]);
        assert_eq!(quoted, "candor rerun 'tests/x.py::test_h[$(touch pwned)]'");
        let words = shlex::split(&quoted).unwrap();
        assert_eq!(words[2], "tests/x.py::test_h[$(touch pwned)]");
        let tricky = "it's `a` \"b\" $HOME\\";
        let words = shlex::split(&shell_command(&[tricky])).unwrap();
        assert_eq!(words, [tricky]);
    }
}
