//! Judging a change's JavaScript test files against the base's text of them: a test whose
//! literal title the base's file writes (`it('adds', …)`, `test("adds", …)`) and that the
//! head neither writes nor lists in that file is removed; a kept test whose body makes
//! fewer checks than the base's (`expect(`, `assert…(` deleted, commented out or turned
//! into a string) or gains a `return` or a branch that never runs is weakened. Pure; the
//! merge lane gives it both texts and the head's listing.
//!
//! A base version of a JavaScript test file cannot run against the head's code without
//! a second copy of the project and its `node_modules`; what the texts tell is judged
//! here without one.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use regex::Regex;

use super::tamper::{BaseJudgement, FileTexts, FnChecks, fewer_checks};
use super::touched::{Blank, blanked, line_comment_at};

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

/// A check in a test's body: `expect(`, `assert(` or `assert.name(` (node's, chai's),
/// `.should`.
static CHECK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?:^|[^\w$.])(?:expect\s*\(|assert(?:\s*\.\s*[A-Za-z_$][\w$]*)?\s*\()|\.\s*should\b",
    )
    .expect("a valid pattern")
});

static RETURN: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?:^|[^\w$.])return\b").expect("a valid pattern"));

/// `if (false)`, `while (0)`, `if (!true)`: a branch that never runs.
static NEVER_BRANCH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b(?:if|while)\s*\(\s*(?:false|0|!\s*true|!\s*1|null|undefined)\s*\)")
        .expect("a valid pattern")
});

/// `text` with every comment and the contents of every string and template literal
/// blanked (newlines kept, byte offsets unchanged). Regular expression literals are read
/// as code: both ends of a change are read alike.
fn js_code_only(text: &str) -> String {
    blanked(text, |text, at| {
        let bytes = text.as_bytes();
        if let Some(comment) = line_comment_at(text, at) {
            return Some(comment);
        }
        match bytes[at] {
            b'/' if bytes.get(at + 1) == Some(&b'*') => {
                let end = text[at + 2..]
                    .find("*/")
                    .map_or(bytes.len(), |end| at + 2 + end + 2);
                Some(Blank {
                    bytes: at..end,
                    resume: end,
                })
            }
            quote @ (b'\'' | b'"' | b'`') => {
                let mut end = at + 1;
                while end < bytes.len() && bytes[end] != quote {
                    // A line ends a broken '…' or "…"; a template literal spans lines.
                    if bytes[end] == b'\n' && quote != b'`' {
                        break;
                    }
                    end += if bytes[end] == b'\\' { 2 } else { 1 };
                }
                Some(Blank {
                    bytes: at + 1..end,
                    resume: end + 1,
                })
            }
            _ => None,
        }
    })
}

/// A test call with a literal title in `text` (`code` its [`js_code_only`] form): its
/// title, and where the call starts and its parentheses close.
struct TestCall {
    title: String,
    start: usize,
    body: std::ops::Range<usize>,
}

/// Every test call with a literal title, outside comments and strings, in order.
fn test_calls(text: &str, code: &str) -> Vec<TestCall> {
    let bytes = code.as_bytes();
    let mut calls = Vec::new();
    for found in TEST_CALL.captures_iter(text) {
        let (Some(whole), Some(raw)) =
            (found.get(0), found.get(1).or(found.get(2)).or(found.get(3)))
        else {
            continue;
        };
        // A call inside a comment or a string is none.
        let Some(open) = code[..raw.start()]
            .rfind('(')
            .filter(|open| *open >= whole.start())
        else {
            continue;
        };
        if code.as_bytes()[whole.end() - 1] != text.as_bytes()[whole.end() - 1] {
            continue;
        }
        let mut depth = 0usize;
        let mut close = bytes.len();
        for (at, byte) in bytes.iter().enumerate().skip(open) {
            match byte {
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        close = at + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        calls.push(TestCall {
            title: unescape(raw.as_str()),
            start: whole.start(),
            body: raw.end().min(close)..close,
        });
    }
    calls
}

/// The checks of each test with a literal title, by title: the body is the test call's
/// parentheses, read outside comments and literals.
pub fn test_checks(text: &str) -> BTreeMap<String, FnChecks> {
    let code = js_code_only(text);
    let mut tests: BTreeMap<String, FnChecks> = BTreeMap::new();
    for call in test_calls(text, &code) {
        let body = &code[call.body];
        let entry = tests.entry(call.title).or_default();
        // One kind: `assert.equal(a, b)` for `expect(a).toBe(b)` keeps the check.
        let checks = CHECK.find_iter(body).count();
        if checks > 0 {
            *entry
                .checks
                .entry("expect(…)/assert(…)/.should".to_owned())
                .or_default() += checks;
        }
        entry.returns += RETURN.find_iter(body).count();
        entry.never_branches += NEVER_BRANCH.find_iter(body).count();
    }
    tests
}

/// What replaces the code a test runs, or the way it checks, without a line of the test
/// changing: a module mock (`jest.mock(`, `vi.mock(`, `doMock`, `unstable_mockModule`,
/// `setMock`, node's `mock.module(`), a spy or a replaced property or global (`spyOn(`,
/// `replaceProperty(`, `stubGlobal(`, `stubEnv(`, node's `mock.method(`, sinon's
/// `stub(`/`replace(`), a mock's answer (`.mockReturnValue(`, `.mockImplementation(`, …),
/// a matcher or equality of one's own (`expect.extend(`, `expect.addEqualityTesters(`,
/// `expect.addSnapshotSerializer(`).
static REPLACEMENT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?:^|[^\w$.])(?:jest|vi|vitest)\s*\.\s*(?:mock|doMock|unstable_mockModule|setMock|spyOn|replaceProperty|stubGlobal|stubEnv)\s*\(",
        r"|\.\s*mock(?:Implementation|ReturnValue|ResolvedValue|RejectedValue)(?:Once)?\s*\(",
        r"|(?:^|[^\w$])mock\s*\.\s*(?:method|module|getter|setter|property|fn)\s*\(",
        r"|(?:^|[^\w$.])sinon\s*\.\s*(?:stub|replace\w*|fake\w*|mock|spy)\s*\(",
        r"|(?:^|[^\w$.])expect\s*\.\s*(?:extend|addEqualityTesters|addSnapshotSerializer)\s*\(",
    ))
    .expect("a valid pattern")
});

/// An assignment that changes what every test of the file runs without a mock API: a
/// member of a built-in's prototype (`Array.prototype.reduce = …`) or of the global object
/// (`globalThis.fetch = …`), a property defined or set by reflection
/// (`Object.defineProperty(`, `Reflect.set(`).
static GLOBAL_ASSIGNMENT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?:^|[^\w$.])(?:[A-Z][\w$]*\s*\.\s*prototype|globalThis|global|window|self)",
        r"\s*(?:\.\s*[\w$]+|\[[^\]\n]*\])+\s*=[^=>]",
        r"|(?:^|[^\w$.])(?:Object\s*\.\s*(?:defineProperty|defineProperties|setPrototypeOf)|Reflect\s*\.\s*(?:set|defineProperty))\s*\(",
    ))
    .expect("a valid pattern")
});

/// A name the file binds to a module: `const cart = require(…)`, `import cart from …`,
/// `import * as cart from …`, `const cart = await import(…)`.
static MODULE_BINDING: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*(?:await\s+)?(?:require|import)\s*\(",
        r"|import\s+(?:\*\s*as\s+)?([A-Za-z_$][\w$]*)\s*(?:,|from\b)",
    ))
    .expect("a valid pattern")
});

/// Where assignments to a member of a module the file binds start (`cart.total = () =>
/// 8`, `Object.assign(cart, …)`): the code under test replaced for every test that calls
/// it through the module, in `code` (comments and strings blanked).
fn module_member_assignments(code: &str) -> Vec<usize> {
    let names: Vec<String> = MODULE_BINDING
        .captures_iter(code)
        .filter_map(|found| found.get(1).or(found.get(2)))
        .map(|name| regex::escape(name.as_str()))
        .collect();
    if names.is_empty() {
        return Vec::new();
    }
    let names = names.join("|");
    let assignment = Regex::new(&format!(
        r"(?:^|[^\w$.])(?:{names})\s*(?:\.\s*[\w$]+|\[[^\]\n]*\])+\s*=[^=>]|(?:^|[^\w$.])Object\s*\.\s*assign\s*\(\s*(?:{names})\s*[,)]"
    ))
    .expect("escaped names make a valid pattern");
    assignment
        .find_iter(code)
        .map(|found| found.start())
        .collect()
}

/// A statement that only imports a file of the project for what importing it does
/// (`import './setup-cart';`, `require('./mock-cart');`): code of the change's choosing
/// that runs before every test of the file. In [`js_code_only`] form, where the path is
/// blanked: whether it is the project's (`./`, `../`) is read from the text.
static SIDE_EFFECT_IMPORT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?m)^[ \t]*(?:import\s*|require\s*\(\s*)["'`]"#).expect("a valid pattern")
});

/// Where the statement that starts at `start` ends in `code`: at its first `;` or line
/// end outside brackets (not one before a `.` that continues a chain), or at a bracket closing one it did not open (a spy inside
/// `beforeEach(() => jest.spyOn(…))`).
fn statement_end(code: &[u8], start: usize) -> usize {
    let mut depth = 0usize;
    for (offset, &byte) in code.iter().enumerate().skip(start) {
        match byte {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' | b';' if depth == 0 => return offset,
            b')' | b']' | b'}' => depth -= 1,
            // A chain continued on the next line (`jest.spyOn(…)\n  .mockReturnValue(…)`)
            // is the same statement.
            b'\n' if depth == 0 => {
                let next = code[offset..]
                    .iter()
                    .find(|byte| !byte.is_ascii_whitespace());
                if next != Some(&b'.') {
                    return offset;
                }
            }
            _ => {}
        }
    }
    code.len()
}

/// A replacement's text as compared between the ends: white space kept only as one space
/// between two words (`const x`), double quotes and backticks made single ones, so a
/// reformatted file compares equal.
fn normalized(text: &str) -> String {
    let word = |byte: Option<u8>| {
        byte.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'$')
    };
    let mut out = String::with_capacity(text.len());
    for part in text.split_whitespace() {
        if word(out.bytes().last()) && word(part.bytes().next()) {
            out.push(' ');
        }
        out.push_str(part);
    }
    out.replace(['"', '`'], "'")
}

/// A test environment chosen in a file's docblock (`@jest-environment ./env.js`,
/// `@vitest-environment`, their `-options`): code of the change's choosing that sets up
/// every test of the file.
static ENVIRONMENT_PRAGMA: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"@(?:jest|vitest)-environment(?:-options)?\b").expect("a valid pattern")
});

/// The replacements ([`REPLACEMENT`], [`GLOBAL_ASSIGNMENT`], assignments to a bound
/// module's members, [`ENVIRONMENT_PRAGMA`], [`SIDE_EFFECT_IMPORT`]s of the project's
/// files) `text` makes where a test whose title `kept` holds can meet them: anywhere but
/// inside the calls of the other tests (the ones the change adds, judged by their
/// replays). Each is its whole statement, [`normalized`], sorted: a mock's answer edited
/// in place (`mockReturnValue(8)` for `(9)`) is another replacement.
fn replacements(text: &str, kept: impl Fn(&str) -> bool) -> Vec<String> {
    let code = js_code_only(text);
    let mut shared = code.clone().into_bytes();
    let mut raw = text.as_bytes().to_vec();
    for call in test_calls(text, &code) {
        if !kept(&call.title) {
            for at in call.start..call.body.end {
                if shared[at] != b'\n' {
                    shared[at] = b' ';
                    raw[at] = b' ';
                }
            }
        }
    }
    let shared = String::from_utf8_lossy(&shared);
    let raw = String::from_utf8_lossy(&raw);
    let (code, raw_bytes) = (shared.as_bytes(), raw.as_bytes());
    let statement = |start: usize| {
        // A match may start at the line end before the name it matched.
        let start = start
            + code[start..]
                .iter()
                .take_while(|byte| byte.is_ascii_whitespace())
                .count();
        let end = statement_end(code, start).max(start);
        normalized(raw.get(start..end).unwrap_or_default())
    };
    let mut found: Vec<String> = REPLACEMENT
        .find_iter(&shared)
        .chain(GLOBAL_ASSIGNMENT.find_iter(&shared))
        .map(|at| statement(at.start()))
        .chain(
            module_member_assignments(&shared)
                .into_iter()
                .map(statement),
        )
        .chain(
            SIDE_EFFECT_IMPORT
                .find_iter(&shared)
                .filter(|at| raw_bytes.get(at.end()) == Some(&b'.'))
                .map(|at| statement(at.start())),
        )
        .collect();
    found.extend(ENVIRONMENT_PRAGMA.find_iter(&raw).map(|at| {
        let end = raw[at.start()..]
            .find('\n')
            .map_or(raw.len(), |end| at.start() + end);
        normalized(&raw[at.start()..end])
    }));
    found.sort();
    found
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
        for title in &base {
            let listed = ids.iter().any(|id| {
                id.ends_with(&format!(" > {title}")) || id.ends_with(&format!("::{title}"))
            });
            if !listed && (!ids.is_empty() || !head.contains(title)) {
                judgement.removed.push(format!("{}::{title}", file.path));
            }
        }
        let Some(head_text) = file.head_text.as_deref() else {
            continue;
        };
        replaced_for_kept_tests(&mut judgement, file, head_text, &base, &ids);
        let head_checks = test_checks(head_text);
        for (title, checks) in test_checks(&file.base_text) {
            // A test the head no longer writes is judged as removed above.
            let Some(said) = head_checks
                .get(&title)
                .and_then(|at_head| fewer_checks(&checks, at_head))
            else {
                continue;
            };
            let listed: Vec<&str> = ids
                .iter()
                .copied()
                .filter(|id| {
                    id.ends_with(&format!(" > {title}")) || id.ends_with(&format!("::{title}"))
                })
                .collect();
            judgement.weaken(&listed, format!("{}::{title}", file.path), &said);
        }
    }
    judgement.removed.sort();
    judgement.removed.dedup();
    judgement.weakened.sort();
    judgement.weakened.dedup();
    judgement
}

/// A kept test of `file` is weakened when the head's file makes more replacements where
/// the kept tests meet them than the base's does: a `jest.mock('../cart', …)` at the top of
/// the file, a spy in a kept test's body, an `expect.extend` that makes `toBe` pass, a
/// docblock's test environment. pytest's base version runs against the head's code and
/// sees such a change; a JavaScript base version is read, not run, and the kept tests'
/// checks are all still there.
fn replaced_for_kept_tests(
    judgement: &mut BaseJudgement,
    file: &FileTexts,
    head_text: &str,
    base: &[String],
    ids: &[&str],
) {
    let before = replacements(&file.base_text, |_| true);
    let after = replacements(head_text, |title| base.iter().any(|kept| kept == title));
    // What the head makes that the base does not, as many times as it is made more.
    let mut unmatched = before.clone();
    let new: Vec<&String> = after
        .iter()
        .filter(
            |replacement| match unmatched.iter().position(|known| known == *replacement) {
                Some(at) => {
                    unmatched.swap_remove(at);
                    false
                }
                None => true,
            },
        )
        .collect();
    let Some(first) = new.first() else {
        return;
    };
    let listed: Vec<&str> = ids
        .iter()
        .copied()
        .filter(|id| {
            base.iter().any(|title| {
                id.ends_with(&format!(" > {title}")) || id.ends_with(&format!("::{title}"))
            })
        })
        .collect();
    judgement.weaken(
        &listed,
        format!("{}::{}", file.path, base.join(", ")),
        &if after.len() > before.len() {
            format!(
                "runs against more replacements than the base's version: mocks, spies, matchers of its own, test environments and imports for their effect outside the tests the change adds {} → {}",
                before.len(),
                after.len()
            )
        } else {
            format!(
                "runs against replacements the base's version does not make (a mock, spy or stand-in edited in place): `{}`",
                crate::gate::rules::shown(first)
            )
        },
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The weakened tests, with what was said, of `cart.test.js` changed from `base` to
    /// `head`, the head listing `ids`.
    fn weakened_in(base: &str, head: &str, ids: &[&str]) -> Vec<(String, String)> {
        let change = FileTexts {
            path: "cart.test.js".to_owned(),
            base_text: base.to_owned(),
            head_text: Some(head.to_owned()),
        };
        judge(&[change], |_| ids.to_vec())
            .weakened
            .into_iter()
            .map(|w| (w.test, w.base_outcome))
            .collect()
    }

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

    #[test]
    fn a_kept_test_that_checks_less_is_weakened_and_an_edited_check_is_not() {
        let base = concat!(
            "describe('cart', () => {\n",
            "  it('totals', async () => {\n",
            "    const total = await cart.total([1, 2]);\n",
            "    expect(total).toBe(3);\n",
            "    assert.strictEqual(cart.count(), 2);\n",
            "  });\n",
            "  it('empty', () => { expect(cart.total([])).toBe(0); });\n",
            "});\n",
        );
        let ids = ["cart.test.js::cart > totals", "cart.test.js::cart > empty"];
        let weakened = |head: &str| weakened_in(base, head, &ids);
        let tampered = [
            (
                "    expect(total).toBe(3);\n",
                "",
                "`expect(…)/assert(…)/.should` 2 → 1",
            ),
            (
                "    expect(total).toBe(3);",
                "    // expect(total).toBe(3);",
                "`expect(…)/assert(…)/.should` 2 → 1",
            ),
            (
                "    expect(total).toBe(3);",
                "    `expect(total).toBe(3)`;",
                "`expect(…)/assert(…)/.should` 2 → 1",
            ),
            (
                "    assert.strictEqual(cart.count(), 2);",
                "    cart.count();",
                "`expect(…)/assert(…)/.should` 2 → 1",
            ),
            (
                "    const total",
                "    return;\n    const total",
                "`return` 0 → 1",
            ),
            (
                "    expect(total).toBe(3);",
                "    if (false) { expect(total).toBe(3); }",
                "branches that never run 0 → 1",
            ),
        ];
        for (from, to, said) in tampered {
            let found = weakened(&base.replacen(from, to, 1));
            assert_eq!(found.len(), 1, "{to:?}: {found:?}");
            assert_eq!(found[0].0, "cart.test.js::cart > totals", "{to:?}");
            assert!(found[0].1.contains(said), "{to:?}: {found:?}");
        }
        for head in [
            base.replacen("toBe(3)", "toBe(4)", 1),
            base.replacen("expect(total).toBe(3);", "assert.equal(total, 3);", 1),
            base.replacen(
                "expect(total).toBe(3);",
                "expect(\n      total,\n    ).toBe(3);\n    expect(total).toBeGreaterThan(0);",
                1,
            ),
            base.replacen(
                "'empty', () => {",
                "'empty', () => { // expect(x) once\n   ",
                1,
            ),
        ] {
            assert!(weakened(&head).is_empty(), "{head}");
        }
        // Strings and comments hold no checks; a title in a comment is no test.
        let checks = test_checks(
            "// it('no', () => { expect(1) })\nit('yes', () => { f(\"expect(\"); /* assert(x) */ });\n",
        );
        assert_eq!(checks.keys().collect::<Vec<_>>(), ["yes"]);
        assert!(checks["yes"].checks.is_empty());
    }

    /// A kept test meets a mock, a spy, a matcher of the change's own or a docblock's test
    /// environment the base's file did not have: weakened, though its checks are all
    /// there. The same in a test the change adds, or a mock the base already had, is not.
    #[test]
    fn a_kept_test_that_meets_a_new_replacement_is_weakened() {
        let base = concat!(
            "const cart = require('../cart');\n",
            "\n",
            "test('totals', () => {\n",
            "  expect(cart.total([3, 5])).toBe(8);\n",
            "});\n",
            "\n",
            "test('empty', () => {\n",
            "  expect(cart.total([])).toBe(0);\n",
            "});\n",
        );
        let ids = ["cart.test.js::totals", "cart.test.js::empty"];
        let weakened = |head: &str| weakened_in(base, head, &ids);
        let on_top = |line: &str| format!("{line}\n{base}");
        for head in [
            on_top("jest.mock('../cart', () => ({ total: (p) => p.reduce((a, b) => a + b, 0) }));"),
            on_top("vi.mock('../cart');"),
            on_top("expect.extend({ toBe: () => ({ pass: true, message: () => '' }) });"),
            on_top("/**\n * @jest-environment ./test/shop-env.js\n */"),
            on_top("beforeEach(() => { sinon.stub(cart, 'total').returns(8); });"),
            on_top("import { mock } from 'node:test';\nmock.method(cart, 'total', () => 8);"),
            base.replacen(
                "  expect(cart.total([3, 5]))",
                "  jest.spyOn(cart, 'total').mockReturnValue(8);\n  expect(cart.total([3, 5]))",
                1,
            ),
            base.replacen(
                "\n\ntest('totals'",
                "\ncart.total = (p) => p.reduce((a, b) => a + b, 0);\n\ntest('totals'",
                1,
            ),
            on_top("import * as money from './money';\nmoney['round'] = (x) => x;"),
            on_top("Object.assign(cart, { total: () => 8 });"),
            on_top("Array.prototype.reduce = function (f) { return 8; };"),
            on_top("globalThis.fetch = () => ({ total: 8 });"),
            on_top("Object.defineProperty(cart, 'total', { value: () => 8 });"),
        ] {
            let found = weakened(&head);
            assert_eq!(found.len(), 2, "{head}: {found:?}");
            assert!(found[0].1.contains("replacements"), "{found:?}");
        }
        let with_new_test = |body: &str| {
            format!(
                "{base}\ntest('taxes', () => {{\n  {body}\n  expect(cart.taxed(10)).toBe(11);\n}});\n"
            )
        };
        for head in [
            // A new test's own spy is judged by its replays.
            with_new_test("jest.spyOn(cart, 'rate').mockReturnValue(0.1);"),
            // In a comment or a string, nothing is replaced.
            on_top("// jest.mock('../cart')"),
            on_top("const note = \"vi.mock('../cart')\";"),
            // Comparing is not assigning; a local object of the test's own is not a module.
            on_top("if (cart.total === undefined) throw new Error('no total');"),
            on_top("const order = { total: 0 };\norder.total = 8;"),
            with_new_test("const fake = Object.assign({}, cart);"),
            base.to_owned(),
        ] {
            assert!(weakened(&head).is_empty(), "{head}");
        }
        // A mock the base already makes is not the change's.
        let mocked = on_top("jest.mock('../cart');");
        let head = mocked.replacen("toBe(8)", "toEqual(8)", 1);
        assert!(weakened_in(&mocked, &head, &ids).is_empty());
    }

    /// A replacement the base already makes, edited in place, is another one: the kept
    /// tests run against the new answer with every check still there. So is a file of the
    /// project imported for its effect. Reformatting one, or a package imported for its
    /// effect, is not.
    #[test]
    fn a_replacement_edited_in_place_or_an_import_for_its_effect_weakens_the_kept_tests() {
        let base = concat!(
            "const cart = require('../cart');\n",
            "jest.mock('../tax', () => ({\n  rate: () => 0.1,\n}));\n",
            "\n",
            "test('totals', () => {\n",
            "  jest.spyOn(cart, 'discount').mockReturnValue(0);\n",
            "  expect(cart.total([3, 5])).toBe(8);\n",
            "});\n",
        );
        let ids = ["cart.test.js::totals"];
        for (head, said) in [
            (
                base.replacen("mockReturnValue(0)", "mockReturnValue(1)", 1),
                "mockReturnValue(1)",
            ),
            (
                base.replacen("rate: () => 0.1", "rate: () => 0", 1),
                "rate:()=>0,}",
            ),
            (
                format!("import './setup-cart';\n{base}"),
                "more replacements",
            ),
            (
                format!("require(\"../test/mock-cart\");\n{base}"),
                "more replacements",
            ),
        ] {
            let found = weakened_in(base, &head, &ids);
            assert_eq!(found.len(), 1, "{head}: {found:?}");
            assert!(found[0].1.contains(said), "{said}: {found:?}");
        }
        for head in [
            base.replacen(
                "jest.spyOn(cart, 'discount').mockReturnValue(0);",
                "jest.spyOn(cart, \"discount\")\n    .mockReturnValue(0);",
                1,
            ),
            format!("import 'whatwg-fetch';\n{base}"),
            format!("import {{ tax }} from './tax';\n{base}"),
        ] {
            assert!(weakened_in(base, &head, &ids).is_empty(), "{head}");
        }
    }
}
