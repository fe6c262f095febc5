//! Judging a change's JavaScript test files against the base's text of them: a test whose
//! literal title the base's file writes (`it('adds', …)`, `test("adds", …)`) and that the
//! head neither writes nor lists in that file is removed. Pure; the merge lane gives it
//! both texts and the head's listing.
//!
//! A base version of a JavaScript test file cannot run against the head's code without
//! a second copy of the project and its `node_modules`; deleting the failing test is what
//! the texts tell without one.

use std::sync::LazyLock;

use regex::Regex;

use super::tamper::{BaseJudgement, FileTexts};

/// A test call with a literal title: `it(`, `test(`, `specify(` with test modifiers
/// (`.only`, `.concurrent`, `.skip` …; not `test.describe` or `test.step`, which are no
/// tests) before `(`; its text in group 1, 2 or 3 by its quote.
static TEST_CALL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r#"(?:^|[^\w$.])(?:it|test|specify)"#,
        r#"(?:\s*\.\s*(?:only|skip|concurrent|failing|fails|todo|fixme|fail|slow|sequential))*\s*\(\s*"#,
        r#"(?:'((?:[^'\\\n]|\\.)*)'|"((?:[^"\\\n]|\\.)*)"|`((?:[^`\\$]|\\.)*)`)"#,
    ))
    .expect("a valid pattern")
});

/// The literal titles of the test calls a file writes, outside line comments, in order
/// (a title with `${…}` or from `test.each` is not literal and not read).
pub fn test_titles(text: &str) -> Vec<String> {
    let mut titles = Vec::new();
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("//") || trimmed.starts_with('*') || trimmed.starts_with("/*") {
            continue;
        }
        for found in TEST_CALL.captures_iter(line) {
            let Some(raw) = found.get(1).or(found.get(2)).or(found.get(3)) else {
                continue;
            };
            let title = unescape(raw.as_str());
            if !titles.contains(&title) {
                titles.push(title);
            }
        }
    }
    titles
}

/// A string literal's simple escapes (`\'`, `\"`, `` \` ``, `\\`) undone.
fn unescape(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some(next @ ('\'' | '"' | '`' | '\\')) => out.push(next),
                Some(other) => {
                    out.push('\\');
                    out.push(other);
                }
                None => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Judges the changed files: a base title which no test the head lists in that file ends
/// with (`… > title`, `…::title`: a test moved into a `describe` keeps its title) is a
/// removed test, named `file::title` — whatever the head's text still writes (`if
/// (false) { it(…) }` writes a test that never runs). Only where the head lists nothing
/// in the file does a title the head still writes count as kept.
pub fn judge<'a>(files: &[FileTexts], head_ids_of: impl Fn(&str) -> Vec<&'a str>) -> BaseJudgement {
    let mut judgement = BaseJudgement::default();
    for file in files {
        let base = test_titles(&file.base_text);
        if base.is_empty() {
            continue;
        }
        judgement.files.push(file.path.clone());
        let head = file
            .head_text
            .as_deref()
            .map(test_titles)
            .unwrap_or_default();
        let ids = head_ids_of(&file.path);
        for title in base {
            let listed = ids.iter().any(|id| {
                id.ends_with(&format!(" > {title}")) || id.ends_with(&format!("::{title}"))
            });
            if !listed && (!ids.is_empty() || !head.contains(&title)) {
                judgement.removed.push(format!("{}::{title}", file.path));
            }
        }
    }
    judgement.removed.sort();
    judgement.removed.dedup();
    judgement
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_titles_of_test_calls_are_read() {
        let text = concat!(
            "describe('cart', () => {\n",
            "  it('totals', () => {});\n",
            "  test.concurrent(\"adds \\\"tax\\\"\", async () => {});\n",
            "  it(`plain template`, () => {});\n",
            "  it(`with ${x}`, () => {});\n",
            "  // it('commented', () => {});\n",
            "  test.each([1])('each %i', () => {});\n",
            "  submit('not a test', () => {});\n",
            "  obj.test('a method', () => {});\n",
            "  test.describe('a group', () => {});\n  test.step('a step', async () => {});\n",
            "});\n",
        );
        assert_eq!(
            test_titles(text),
            ["totals", "adds \"tax\"", "plain template"]
        );
    }

    #[test]
    fn a_deleted_title_is_removed_unless_listed_or_still_written() {
        let base = "it('totals', () => {});\nit('taxes', () => {});\nit('moved', () => {});\n";
        let head = "it('totals', () => {});\ndescribe('d', () => { it('moved', () => {}); });\n";
        let change = |head: Option<&str>| FileTexts {
            path: "cart.test.js".to_owned(),
            base_text: base.to_owned(),
            head_text: head.map(str::to_owned),
        };
        let judged = judge(&[change(Some(head))], |_| {
            vec!["cart.test.js::totals", "cart.test.js::d > moved"]
        });
        assert_eq!(judged.removed, ["cart.test.js::taxes"]);
        // Still written, but the listing of the file lacks it: removed.
        let hidden = "it('totals', () => {});\nif (false) { it('taxes', () => {}); }\nit('moved', () => {});\n";
        let judged = judge(&[change(Some(hidden))], |_| {
            vec!["cart.test.js::totals", "cart.test.js::moved"]
        });
        assert_eq!(judged.removed, ["cart.test.js::taxes"]);
        // Listed nowhere (a listing that failed) but still written: kept.
        let judged = judge(&[change(Some(base))], |_| Vec::new());
        assert!(judged.removed.is_empty());
        let judged = judge(&[change(None)], |_| Vec::new());
        assert_eq!(judged.removed.len(), 3);
    }
}
