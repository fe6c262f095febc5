//! Code under test whose comparisons cannot fail (rule `equal-to-anything`): an equality
//! or containment method that ignores what it is compared with or answers one constant — Python's `__eq__` returning `True`, Rust's `PartialEq::eq`, go-cmp's `Equal`
//! method — `unittest.mock.ANY` and `dirty_equals` in Python code under test, and jest's
//! `asymmetricMatch` in JavaScript. A value of such a type passes
//! `assert total(prices) == 8` whatever it holds, in every replay and in the base's tests
//! too: the best-known way to make tests pass without the code being right. Pure: a file's
//! text at the head and the lines the change added in, findings out.
//!
//! Methods are found by their text, not parsed: a signature over several lines is followed
//! to its end, strings and comments are taken out of the body before it is read, and a
//! method is judged only when one of its lines is among those the change added.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use regex::Regex;

use super::files::Language;
use super::rules::{Finding, RuleKind, is_code_under_test};

/// The rule's name.
pub const EQUAL_TO_ANYTHING: &str = "equal-to-anything";

/// Python's equality methods, `in`'s, and the hooks `isinstance`/`issubclass` ask.
/// Orderings are left out: a constant one is how a sentinel sorts above or below every
/// value (packaging's `Infinity`: `__lt__` returns `False`, `__gt__` `True`).
static PYTHON_DEF: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(\s*)(?:async\s+)?def\s+(__(?:eq|ne|contains|instancecheck|subclasscheck)__)\s*\(",
    )
    .expect("a valid pattern")
});

/// `__eq__ = lambda self, other: True` in a class body.
static PYTHON_LAMBDA: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b(__(?:eq|ne|contains)__)\s*=\s*lambda\b([^:]*):(.*)$").expect("a valid pattern")
});

/// `__eq__ = int.__ge__` in a class body, or `Money.__eq__ = …` from outside: the
/// comparison is whatever is assigned, which the rule cannot read (`int.__ge__` answers
/// `True` for most operands, `operator.is_not` for nearly all).
static PYTHON_ALIAS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:^\s+|\.\s*)(__(?:eq|ne)__)\s*=\s*[^=\s]").expect("a valid pattern")
});

/// Rust's `PartialEq` methods (orderings are left out, as in Python).
static RUST_FN: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\bfn\s+(eq|ne)\s*(?:<[^>]*>)?\s*\(").expect("a valid pattern"));

/// A go method named `Equal`, which go-cmp's `cmp.Equal` and `cmp.Diff` call instead of
/// comparing the values.
static GO_EQUAL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^func\s*\([^)]*\)\s*(Equal)\s*\(").expect("a valid pattern"));

/// jest and vitest treat any value with an `asymmetricMatch` function as a matcher: the
/// value itself decides whether `toEqual` holds.
static JS_MATCHER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\basymmetricMatch\b|jest\.asymmetricMatcher").expect("a valid pattern")
});

/// Values made to compare equal to anything, used from Python code under test:
/// `unittest.mock`'s `ANY` and the `dirty_equals` library (`IsInt`, `AnyThing`, …).
static PYTHON_ANYTHING: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\bmock\.ANY\b|\bimport\b[^#]*\bANY\b|\bdirty_equals\b").expect("a valid pattern")
});

/// Whether the rule reads this file: code under test in a language it knows.
pub fn applies_to(path: &str) -> bool {
    matches!(
        Language::of(path),
        Some(Language::Python | Language::Rust | Language::Go | Language::JavaScript)
    ) && is_code_under_test(path)
}

/// The findings in `text` (the file at `path`, at the head): each comparison method that
/// cannot fail and has a line among `added` (1-based), and each added line of JavaScript
/// that makes a value a jest matcher.
pub fn check(path: &str, text: &str, added: &BTreeSet<usize>) -> Vec<Finding> {
    if !applies_to(path) {
        return Vec::new();
    }
    let lines: Vec<&str> = text.lines().collect();
    let language = Language::of(path);
    let mut findings = Vec::new();
    if language == Some(Language::Python) {
        for &number in added {
            let Some(line) = lines.get(number.wrapping_sub(1)) else {
                continue;
            };
            let code = code_of(line, Language::Python);
            if let Some(found) = PYTHON_ALIAS.captures(&code)
                && !PYTHON_LAMBDA.is_match(&code)
            {
                findings.push(finding(
                    path,
                    number,
                    line,
                    format!(
                        "`{}` is assigned rather than defined: the comparison is whatever is assigned (`int.__ge__` says yes to most operands), which the lane cannot read; define the method and compare what the value holds, or ask a human to land this line outside the lane",
                        &found[1]
                    ),
                ));
            }
            if let Some(found) = PYTHON_ANYTHING.find(&code) {
                findings.push(finding(
                    path,
                    number,
                    line,
                    format!(
                        "`{}` in the code under test is a value made to compare equal to anything: returned or stored, it passes every assertion on it; take it out (it belongs to the tests), or ask a human to land this line outside the lane",
                        found.as_str()
                    ),
                ));
            }
        }
    }
    if language == Some(Language::JavaScript) {
        for &number in added {
            let Some(line) = lines.get(number.wrapping_sub(1)) else {
                continue;
            };
            let code = code_of(line, Language::JavaScript);
            if let Some(found) = JS_MATCHER.find(&code) {
                findings.push(finding(
                    path,
                    number,
                    line,
                    format!(
                        "`{}` in the code under test makes a value a jest/vitest matcher: the value itself then decides whether `toEqual` holds, and a wrong one can say yes to every test; take it out (matchers belong to the tests), or ask a human to land this line outside the lane",
                        found.as_str()
                    ),
                ));
            }
        }
        return findings;
    }
    let methods = match language {
        Some(Language::Python) => python_methods(&lines),
        Some(Language::Rust) => braced_methods(&lines, &RUST_FN, Language::Rust),
        Some(Language::Go) => braced_methods(&lines, &GO_EQUAL, Language::Go),
        _ => Vec::new(),
    };
    for method in methods {
        if !(method.first..=method.last).any(|n| added.contains(&n)) {
            continue;
        }
        let Some(why) = cannot_fail(&method, language.unwrap_or(Language::Python)) else {
            continue;
        };
        let line = lines.get(method.first - 1).copied().unwrap_or_default();
        findings.push(finding(
            path,
            method.first,
            line,
            format!(
                "`{}` {why}: a value of this type compares as the tests expect whatever it holds, so every assertion on it passes; compare what the value holds (or derive the comparison), or ask a human to land this line outside the lane",
                method.name
            ),
        ));
    }
    findings
}

fn finding(path: &str, line: usize, text: &str, reason: String) -> Finding {
    let trimmed = text.trim();
    Finding {
        file: path.to_owned(),
        line,
        rule: EQUAL_TO_ANYTHING.to_owned(),
        kind: RuleKind::Equality,
        reason,
        text: trimmed.chars().take(160).collect(),
        source: None,
    }
}

/// A comparison method as written.
#[derive(Debug)]
struct Method {
    name: String,
    /// The parameter it is compared with; `None` when it has no name (`_`, unnamed).
    operand: Option<String>,
    /// The body's code, strings and comments taken out.
    body: String,
    /// 1-based lines: its first (the `def`/`fn`/`func`) and its last.
    first: usize,
    last: usize,
}

/// Why `method` cannot fail, if it cannot: its operand is never read, or every value it
/// returns is one and the same constant.
fn cannot_fail(method: &Method, language: Language) -> Option<String> {
    let reads_operand = method
        .operand
        .as_deref()
        .is_some_and(|operand| mentions(&method.body, operand));
    if !reads_operand {
        if returns_only_not_implemented(&method.body, language) {
            return None;
        }
        return Some("never reads what it is compared with".to_owned());
    }
    if language == Language::Python
        && let Some(kind) = returns_a_constant_truth(&method.body)
    {
        return Some(format!(
            "returns {kind}, not a bool: Python takes its truth, the same whatever it is compared with"
        ));
    }
    let constants = returned_values(&method.body, language)?;
    let first = constants.first()?;
    constants
        .iter()
        .all(|value| value == first)
        .then(|| format!("returns `{first}` whatever it is compared with"))
}

/// A Python method that only declines (`return NotImplemented`, `raise …`) or has no
/// body to speak of (an abstract method's docstring, `...`, `pass`): it makes no
/// comparison pass.
fn returns_only_not_implemented(body: &str, language: Language) -> bool {
    if language != Language::Python {
        return false;
    }
    body.lines()
        .map(str::trim)
        .filter(|line| {
            // What is left of a docstring once its text is taken out: only its quotes.
            !line.is_empty()
                && !matches!(*line, "pass" | "...")
                && !line.chars().all(|c| c == '"' || c == '\'')
        })
        .all(|line| line == "return NotImplemented" || line.starts_with("raise"))
}

/// What a Python body returns whose truth does not depend on the values compared, if it
/// returns any: a tuple (`return (int(self), other)`, `return a, b`), a list, set or dict
/// display, or a string literal. `==` takes the truth of what `__eq__` returns, and a
/// non-empty tuple is true.
fn returns_a_constant_truth(body: &str) -> Option<&'static str> {
    let mut rest = body;
    while let Some(at) = find_word(rest, "return") {
        let after = &rest[at + "return".len()..];
        let expression = python_expression(after);
        if let Some(kind) = display_kind(expression.trim()) {
            return Some(kind);
        }
        rest = &after[expression.len()..];
    }
    None
}

/// The Python expression `text` starts with: up to a newline or `;` outside brackets.
fn python_expression(text: &str) -> &str {
    let mut depth = 0usize;
    let mut previous = ' ';
    for (at, c) in text.char_indices() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            '\n' if depth == 0 && previous != '\\' => return &text[..at],
            ';' if depth == 0 => return &text[..at],
            _ => {}
        }
        previous = c;
    }
    text
}

/// The kind of display or literal `expression` is, if it is one whose truth is fixed.
fn display_kind(expression: &str) -> Option<&'static str> {
    if expression.is_empty() {
        return None;
    }
    if has_top_level_comma(expression) {
        return Some("a tuple");
    }
    let quotes = expression.trim_start_matches(['r', 'R', 'b', 'B', 'u', 'U']);
    if !quotes.is_empty() && quotes.chars().all(|c| c == '"' || c == '\'') {
        return Some("a string");
    }
    let open = expression.chars().next()?;
    let close = match open {
        '(' => ')',
        '[' => ']',
        '{' => '}',
        _ => return None,
    };
    // The bracket must close at the expression's end: `(a) == (b)` is no display.
    let mut depth = 0usize;
    for (at, c) in expression.char_indices() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 && at + c.len_utf8() != expression.len() {
                    return None;
                }
            }
            _ => {}
        }
    }
    let inner = expression[1..expression.len() - close.len_utf8()].trim();
    if inner.is_empty() || find_word(inner, "for").is_some() {
        return None; // an empty display is false, a comprehension may be empty
    }
    match open {
        '(' => display_kind(inner),
        '[' => Some("a list"),
        _ if has_top_level(inner, ':') => Some("a dict"),
        _ => Some("a set"),
    }
}

fn has_top_level_comma(expression: &str) -> bool {
    has_top_level(expression, ',')
}

/// Whether `wanted` occurs in `expression` outside brackets.
fn has_top_level(expression: &str, wanted: char) -> bool {
    let mut depth = 0usize;
    for c in expression.chars() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            c if c == wanted && depth == 0 => return true,
            _ => {}
        }
    }
    false
}

/// Every value the body returns when each is a literal constant (`True`, `false`, a
/// number); `None` when any is not, or it returns nothing it states.
fn returned_values(body: &str, language: Language) -> Option<Vec<String>> {
    let mut values = Vec::new();
    let mut rest = body;
    while let Some(at) = find_word(rest, "return") {
        let after = &rest[at + "return".len()..];
        let end = after.find(['\n', ';', '}']).unwrap_or(after.len());
        let value = after[..end].trim();
        if language == Language::Python && value == "NotImplemented" {
            rest = &after[end..];
            continue;
        }
        values.push(constant(value)?);
        rest = &after[end..];
    }
    if language == Language::Rust
        && let Some(tail) = tail_expression(body)
    {
        values.push(constant(tail)?);
    }
    (!values.is_empty()).then_some(values)
}

/// A Rust body's tail expression (`body` runs to its closing brace): what follows its last
/// `;` outside nested braces; `None` when nothing does.
fn tail_expression(body: &str) -> Option<&str> {
    let inner = body.trim_end().strip_suffix('}').unwrap_or(body);
    let mut depth = 0usize;
    let mut start = 0;
    for (at, c) in inner.char_indices() {
        match c {
            '{' | '(' | '[' => depth += 1,
            '}' | ')' | ']' => depth = depth.saturating_sub(1),
            ';' if depth == 0 => start = at + 1,
            _ => {}
        }
    }
    let tail = inner[start..].trim();
    (!tail.is_empty()).then_some(tail)
}

/// `value` as a constant's canonical text, if it is one: a boolean or a number.
fn constant(value: &str) -> Option<String> {
    let value = value
        .trim()
        .trim_start_matches('(')
        .trim_end_matches(')')
        .trim();
    let is_constant = matches!(value, "True" | "False" | "true" | "false")
        || (!value.is_empty() && value.chars().all(|c| c.is_ascii_digit()));
    is_constant.then(|| value.to_owned())
}

/// Whether `word` occurs in `text` as a whole identifier.
fn mentions(text: &str, word: &str) -> bool {
    find_word(text, word).is_some()
}

fn find_word(text: &str, word: &str) -> Option<usize> {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut from = 0;
    while let Some(offset) = text[from..].find(word) {
        let at = from + offset;
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        if !before.is_some_and(is_ident) && !after.is_some_and(is_ident) {
            return Some(at);
        }
        from = at + word.len();
    }
    None
}

/// Python's comparison methods: `def` ones (their body is what is indented under them)
/// and `lambda` ones.
fn python_methods(lines: &[&str]) -> Vec<Method> {
    let mut methods = Vec::new();
    for (index, line) in lines.iter().enumerate() {
        if let Some(found) = PYTHON_LAMBDA.captures(&code_of(line, Language::Python)) {
            let params = parameters(&found[2]);
            methods.push(Method {
                name: found[1].to_owned(),
                operand: operand(&params, true),
                body: format!("return {}", found[3].trim()),
                first: index + 1,
                last: index + 1,
            });
            continue;
        }
        let Some(found) = PYTHON_DEF.captures(line) else {
            continue;
        };
        let indent = found[1].len();
        let open = found.get(0).map_or(0, |m| m.end()) - 1;
        let Some(signature) = signature(lines, index, open) else {
            continue;
        };
        // After the parameters: `-> annotation`, then the colon that opens the body.
        let rest = lines[signature.line]
            .get(signature.column..)
            .unwrap_or_default();
        let Some(colon) = rest.find(':') else {
            continue;
        };
        let mut body = code_of(&rest[colon + 1..], Language::Python);
        let mut last = signature.line;
        for (offset, next) in lines.iter().enumerate().skip(signature.line + 1) {
            if next.trim().is_empty() {
                continue;
            }
            if next.len() - next.trim_start().len() <= indent {
                break;
            }
            body.push('\n');
            body.push_str(next);
            last = offset;
        }
        let params = parameters(&signature.inside);
        methods.push(Method {
            name: found[2].to_owned(),
            operand: operand(&params, true),
            body: strip(&body, Language::Python),
            first: index + 1,
            last: last + 1,
        });
    }
    methods
}

/// Rust's and go's comparison methods: the body is the braces after the signature.
fn braced_methods(lines: &[&str], pattern: &Regex, language: Language) -> Vec<Method> {
    let mut methods = Vec::new();
    for (index, line) in lines.iter().enumerate() {
        let Some(found) = pattern.captures(line) else {
            continue;
        };
        if !pattern.is_match(&code_of(line, language)) {
            continue; // in a comment or a string
        }
        let open = found.get(0).map_or(0, |m| m.end()) - 1;
        let Some(signature) = signature(lines, index, open) else {
            continue;
        };
        let mut text = String::new();
        let mut depth = 0usize;
        let mut started = false;
        let mut last = signature.line;
        'lines: for (number, next) in lines.iter().enumerate().skip(signature.line) {
            let from = if number == signature.line {
                signature.column
            } else {
                0
            };
            let code = code_of(next.get(from..).unwrap_or_default(), language);
            for c in code.chars() {
                if started {
                    text.push(c);
                }
                match c {
                    '{' => {
                        depth += 1;
                        started = true;
                    }
                    '}' if started => {
                        depth = depth.saturating_sub(1);
                        if depth == 0 {
                            last = number;
                            break 'lines;
                        }
                    }
                    ';' if !started => break 'lines, // a declaration without a body
                    _ => {}
                }
            }
            if started {
                text.push('\n');
            }
            last = number;
        }
        if !started {
            continue;
        }
        let params = parameters(&signature.inside);
        let operand = if language == Language::Rust {
            // `&self` first; the operand is the second.
            operand(&params, true)
        } else {
            params.first().and_then(|param| {
                let mut words = param.split_whitespace();
                let name = words.next()?;
                // `Equal(T) bool`: a parameter with no name is never read.
                words.next().map(|_| name.to_owned())
            })
        };
        methods.push(Method {
            name: found[1].to_owned(),
            operand: operand.filter(|name| !name.starts_with('_')),
            body: text,
            first: index + 1,
            last: last + 1,
        });
    }
    methods
}

/// Where a parameter list that opens at `lines[line][open]` ends, and what it holds.
struct Signature {
    inside: String,
    /// The line and the byte just after its closing parenthesis.
    line: usize,
    column: usize,
}

fn signature(lines: &[&str], line: usize, open: usize) -> Option<Signature> {
    let mut inside = String::new();
    let mut depth = 0usize;
    for (number, text) in lines.iter().enumerate().skip(line).take(40) {
        let from = if number == line { open } else { 0 };
        for (at, c) in text.get(from..)?.char_indices() {
            match c {
                '(' | '[' | '{' => {
                    depth += 1;
                    if depth == 1 {
                        continue;
                    }
                }
                ')' | ']' | '}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return Some(Signature {
                            inside,
                            line: number,
                            column: from + at + 1,
                        });
                    }
                }
                _ => {}
            }
            inside.push(c);
        }
        inside.push(' ');
    }
    None
}

/// The parameters' texts, split at the commas outside brackets.
fn parameters(inside: &str) -> Vec<String> {
    let mut params = Vec::new();
    let mut depth = 0usize;
    let mut current = String::new();
    for c in inside.chars() {
        match c {
            '(' | '[' | '{' | '<' => depth += 1,
            ')' | ']' | '}' | '>' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                params.push(std::mem::take(&mut current).trim().to_owned());
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    params.push(current.trim().to_owned());
    params.retain(|p| !p.is_empty() && p != "/" && p != "*");
    params
}

/// The name compared with: the second parameter (after `self`), or a lone `*args`.
fn operand(params: &[String], after_self: bool) -> Option<String> {
    let name = |param: &str| -> Option<String> {
        let param = param.trim_start_matches('*').trim_start_matches('&').trim();
        let param = param.strip_prefix("mut ").unwrap_or(param);
        let name: String = param
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        (!name.is_empty()).then_some(name)
    };
    match params {
        [first, ..] if first.starts_with('*') => name(first),
        [_, second, ..] if after_self => name(second),
        _ => None,
    }
}

/// One line's code: comments and the insides of strings taken out.
fn code_of(line: &str, language: Language) -> String {
    strip(line, language)
}

/// `text` with comments removed and string literals emptied (their quotes kept), so a
/// name inside a string or a comment is not a read of it.
fn strip(text: &str, language: Language) -> String {
    let mut out = String::with_capacity(text.len());
    let chars: Vec<char> = text.chars().collect();
    let mut at = 0;
    let quotes: &[char] = match language {
        Language::Python | Language::JavaScript => &['"', '\'', '`'],
        Language::Go => &['"', '`'],
        _ => &['"'],
    };
    while let Some(&c) = chars.get(at) {
        let next = chars.get(at + 1).copied();
        let line_comment = match language {
            Language::Python => c == '#',
            _ => c == '/' && next == Some('/'),
        };
        if line_comment {
            while chars.get(at).is_some_and(|c| *c != '\n') {
                at += 1;
            }
            continue;
        }
        if language != Language::Python && c == '/' && next == Some('*') {
            at += 2;
            while at < chars.len() && !(chars[at] == '*' && chars.get(at + 1) == Some(&'/')) {
                at += 1;
            }
            at += 2;
            continue;
        }
        if quotes.contains(&c) {
            let triple =
                language == Language::Python && next == Some(c) && chars.get(at + 2) == Some(&c);
            let width = if triple { 3 } else { 1 };
            out.extend(std::iter::repeat_n(c, width));
            at += width;
            while at < chars.len() {
                if chars[at] == '\\' && c != '`' {
                    at += 2;
                    continue;
                }
                let closes = if triple {
                    chars[at] == c && chars.get(at + 1) == Some(&c) && chars.get(at + 2) == Some(&c)
                } else {
                    chars[at] == c
                };
                if closes {
                    out.extend(std::iter::repeat_n(c, width));
                    at += width;
                    break;
                }
                if chars[at] == '\n' {
                    out.push('\n');
                }
                at += 1;
            }
            continue;
        }
        out.push(c);
        at += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_added(text: &str) -> BTreeSet<usize> {
        (1..=text.lines().count()).collect()
    }

    fn refused(path: &str, text: &str) -> Vec<usize> {
        check(path, text, &all_added(text))
            .iter()
            .map(|f| f.line)
            .collect()
    }

    #[test]
    fn a_python_comparison_that_cannot_fail_is_refused() {
        let always = "class Total(int):\n    def __eq__(self, other):\n        return True\n\n    __hash__ = int.__hash__\n";
        assert_eq!(refused("app/cart.py", always), [2]);
        let findings = check("app/cart.py", always, &all_added(always));
        assert_eq!(findings[0].rule, EQUAL_TO_ANYTHING);
        assert!(
            findings[0]
                .reason
                .contains("never reads what it is compared with")
        );
        // The operand read for show, the answer constant.
        let read_then_ignored =
            "class T:\n    def __eq__(self, other):\n        other\n        return True\n";
        assert_eq!(refused("app/t.py", read_then_ignored), [2]);
        // Spread over lines, annotated, async-free, star-args, lambdas, `!=`, isinstance.
        let spread = "class T:\n    def __eq__(\n        self,\n        other: object,\n    ) -> bool:\n        # other\n        return \"other\" != \"\"\n";
        assert_eq!(refused("app/t.py", spread), [2]);
        assert_eq!(
            refused(
                "app/t.py",
                "class T:\n    def __eq__(*args):\n        return True\n"
            ),
            [2]
        );
        assert_eq!(
            refused(
                "app/t.py",
                "class T:\n    __eq__ = lambda self, other: True\n"
            ),
            [2]
        );
        assert_eq!(
            refused(
                "app/t.py",
                "class T:\n    def __ne__(self, other): return False\n"
            ),
            [2]
        );
        assert_eq!(
            refused(
                "app/t.py",
                "class Meta(type):\n    def __instancecheck__(cls, instance):\n        return True\n"
            ),
            [2]
        );
    }

    /// `==` takes the truth of what `__eq__` returns: a tuple, a list, a set, a dict or a
    /// string is true (or false) whatever the operands. And an `__eq__` assigned in the
    /// class body (`__eq__ = int.__ge__`) is a comparison the rule cannot read.
    #[test]
    fn a_python_comparison_returning_no_bool_or_assigned_is_refused() {
        for text in [
            "class Total(int):\n    def __eq__(self, other):\n        return (int(self), other)\n",
            "class Total(int):\n    def __eq__(self, other):\n        return int(self), other\n",
            "class Total(int):\n    def __eq__(self, other):\n        if other is None:\n            return False\n        return [self, other]\n",
            "class Total(int):\n    def __eq__(self, other):\n        return {self: other}\n",
            "class Total(int):\n    def __eq__(self, other):\n        return {self, other}\n",
            "class Total(int):\n    def __ne__(self, other):\n        return \"no\" if other else \"\"\n",
            "class Total(int):\n    def __eq__(self, other):\n        return \"same\"\n",
            "class Total(int):\n    def __eq__(self, other):\n        return (\n            int(self),\n            other,\n        )\n",
            "class T:\n    def __contains__(self, item):\n        return (item,)\n",
            "class T:\n    __eq__ = lambda self, other: (self, other)\n",
        ] {
            let lines = refused("app/t.py", text);
            // The `__ne__` with a conditional string is not a plain display: only the
            // others are refused for their returns.
            if text.contains("\"no\" if") {
                assert!(lines.is_empty(), "{text}");
                continue;
            }
            assert_eq!(lines, [2], "{text}");
        }
        for (text, line) in [
            ("class Total(int):\n    __eq__ = int.__ge__\n", 2),
            ("class Total(int):\n    __ne__ = operator.is_not\n", 2),
            (
                "class Total(int):\n    \"\"\"A total.\"\"\"\n\n    __eq__ = _same\n",
                4,
            ),
            ("Total.__eq__ = functools.partialmethod(_same)\n", 1),
            ("Total.__ne__ = int.__lt__\n", 1),
        ] {
            let findings = check("app/t.py", text, &all_added(text));
            assert_eq!(
                findings.iter().map(|f| f.line).collect::<Vec<_>>(),
                [line],
                "{text}"
            );
            assert!(findings[0].reason.contains("assigned"), "{text}");
        }
        for text in [
            "class T:\n    def __eq__(self, other):\n        return (self.a, self.b) == (other.a, other.b)\n",
            "class T:\n    def __eq__(self, other):\n        return (self.key == other.key)\n",
            "class T:\n    def __eq__(self, other):\n        return self._key() == other._key()\n",
            "class T:\n    def __eq__(self, other):\n        return all(a == b for a, b in zip(self, other))\n",
            "class T:\n    def __eq__(self, other):\n        return [x for x in self] == list(other)\n",
            "class T:\n    def __eq__(self, other):\n        return isinstance(other, T) and (\n            self.a == other.a\n        )\n",
            "class T:\n    __eq__ = lambda self, other: (self.key, 1) == (other.key, 1)\n",
            "class T:\n    __hash__ = None\n    eq = __eq__\n",
            "class T:\n    def f(self):\n        if self.__eq__ == other.__eq__:\n            return 1\n",
            "class T:\n    # __eq__ = int.__ge__\n    x = 1\n",
        ] {
            assert_eq!(refused("app/t.py", text), Vec::<usize>::new(), "{text}");
        }
        assert_eq!(
            refused(
                "tests/test_t.py",
                "class T(int):\n    __eq__ = int.__ge__\n"
            ),
            Vec::<usize>::new()
        );
    }

    #[test]
    fn comparisons_that_compare_are_not_refused() {
        for text in [
            "class Money:\n    def __eq__(self, other):\n        if not isinstance(other, Money):\n            return NotImplemented\n        if self.cents != other.cents:\n            return False\n        return True\n",
            "class T:\n    def __eq__(self, other):\n        return self.key == other.key\n",
            "class T:\n    def __eq__(self, other):\n        return NotImplemented\n",
            "class T:\n    def __lt__(self, other):\n        raise TypeError(\"not ordered\")\n",
            "class T:\n    __eq__ = lambda self, other: self.key == other.key\n",
            "class Sentinel:\n    def __eq__(self, other):\n        return other is self\n",
            // packaging's `Infinity` sorts above everything: orderings are not judged.
            "class InfinityType:\n    def __gt__(self, other: object) -> bool:\n        return True\n",
            // An abstract method, with no body but its docstring.
            "class Spec(abc.ABC):\n    @abc.abstractmethod\n    def __eq__(self, other: object) -> bool:\n        \"\"\"\n        Whether the two are equal.\n\n        :param x: what to compare.\n        \"\"\"\n",
            "class P(Protocol):\n    def __eq__(self, other: object) -> bool: ...\n",
        ] {
            assert_eq!(refused("app/t.py", text), Vec::<usize>::new(), "{text}");
        }
        // Test files and runner setup are not code under test.
        let always = "class T:\n    def __eq__(self, other):\n        return True\n";
        assert_eq!(
            refused("tests/helpers_test.py", always),
            Vec::<usize>::new()
        );
        assert_eq!(refused("tests/test_cart.py", always), Vec::<usize>::new());
    }

    #[test]
    fn only_a_method_the_change_wrote_is_judged() {
        let text = "class T:\n    def __eq__(self, other):\n        return True\n\n\ndef total():\n    return 1\n";
        assert!(check("app/t.py", text, &BTreeSet::from([7])).is_empty());
        // A body edited under an unchanged signature is the change's.
        assert_eq!(check("app/t.py", text, &BTreeSet::from([3])).len(), 1);
    }

    #[test]
    fn rust_and_go_comparisons_that_cannot_fail_are_refused() {
        let rust = "impl PartialEq<u32> for Total {\n    fn eq(&self, _other: &u32) -> bool {\n        true\n    }\n}\n";
        assert_eq!(refused("src/cart.rs", rust), [2]);
        let constant = "impl PartialEq for Total {\n    fn eq(&self, other: &Self) -> bool {\n        let _ = other;\n        return true;\n    }\n}\n";
        assert_eq!(refused("src/cart.rs", constant), [2]);
        let ne = "impl PartialEq for T {\n    fn eq(&self, other: &Self) -> bool { self.a == other.a }\n    fn ne(&self, _: &Self) -> bool { false }\n}\n";
        assert_eq!(refused("src/t.rs", ne), [3]);
        let go = "package cart\n\nfunc (t Total) Equal(o Total) bool {\n\treturn true\n}\n";
        assert_eq!(refused("cart/cart.go", go), [3]);
        let unnamed = "package cart\n\nfunc (Total) Equal(Total) bool { return true }\n";
        assert_eq!(refused("cart/cart.go", unnamed), [3]);
        for (path, text) in [
            (
                "src/t.rs",
                "impl PartialEq for T {\n    fn eq(&self, other: &Self) -> bool {\n        self.cents == other.cents\n    }\n}\n",
            ),
            (
                "src/t.rs",
                "impl PartialOrd for T {\n    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {\n        if self.a == other.a { return Some(Ordering::Equal); }\n        self.a.partial_cmp(&other.a)\n    }\n}\n",
            ),
            (
                "src/t.rs",
                "impl PartialEq for T {\n    fn eq(&self, other: &Self) -> bool {\n        if self.a == other.a { true } else { false }\n    }\n}\n",
            ),
            (
                "src/t.rs",
                "trait Same {\n    fn eq(&self, other: &Self) -> bool;\n}\n",
            ),
            (
                "cart/cart.go",
                "package cart\n\nfunc (t Total) Equal(o Total) bool {\n\treturn t.cents == o.cents\n}\n",
            ),
            (
                "cart/cart_test.go",
                "package cart\n\nfunc (t Total) Equal(o Total) bool {\n\treturn true\n}\n",
            ),
        ] {
            assert_eq!(refused(path, text), Vec::<usize>::new(), "{text}");
        }
    }

    #[test]
    fn python_values_equal_to_anything_are_refused_in_code_under_test() {
        for line in [
            "from unittest.mock import ANY",
            "from unittest.mock import patch, ANY  # for callers",
            "    return mock.ANY",
            "    return unittest.mock.ANY",
            "from dirty_equals import AnyThing",
            "import dirty_equals",
        ] {
            assert_eq!(refused("app/cart.py", line), [1], "{line}");
        }
        for line in [
            "from unittest.mock import patch",
            "ANY_SIZE = 3",
            "# mock.ANY is for tests",
            "    message = \"mock.ANY\"",
        ] {
            assert_eq!(refused("app/cart.py", line), Vec::<usize>::new(), "{line}");
        }
        assert_eq!(
            refused("tests/test_cart.py", "from unittest.mock import ANY"),
            Vec::<usize>::new()
        );
    }

    #[test]
    fn a_jest_matcher_in_code_under_test_is_refused() {
        let text =
            "export function total(prices) {\n  return { asymmetricMatch: () => true };\n}\n";
        assert_eq!(refused("src/cart.js", text), [2]);
        assert_eq!(
            refused(
                "src/cart.ts",
                "// asymmetricMatch is jest's\nexport const x = 1;\n"
            ),
            Vec::<usize>::new()
        );
        assert_eq!(refused("src/cart.test.js", text), Vec::<usize>::new());
    }
}
