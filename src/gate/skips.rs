//! Whether a test still carries a skip mark, for `candor freeze check`: the test's id says
//! which file (and which function) to read, and the rule is the lane's own list of skip
//! marks ([`super::rules::forbidden_mark`], kind skip). Pure: text in, the marked line out.
//!
//! What counts as the test's own mark:
//! - pytest (`path.py::[Class::]name[params]`): a decorator of the function or of one of
//!   its classes, a skip call in the function's body, or a module-level `pytestmark`;
//! - jest/vitest (`path.test.ts::describe > name`): a line that names the test or one of
//!   its describes in quotes and carries a skip mark (`it.skip('name'`, `xdescribe("d"`);
//! - go (`import/path::TestName/sub`): a skip call in the body of `func TestName(` in the
//!   package's `_test.go` files;
//! - cargo and other ids that name no file cannot be read this way, and count as not
//!   marked (their freeze holds only while the test is quarantined).

use super::files::{Language, file_name};
use super::rules::{MarkKind, forbidden_mark};

/// A skip mark found for a test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkipMark {
    /// The file, repository-relative.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// The mark as written, e.g. `mark.skip`.
    pub mark: String,
}

/// Where to look for a test's code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TestSource {
    /// A file, repository-relative (pytest, jest, vitest ids).
    File(String),
    /// A go package by import path, and the top-level test function.
    GoPackage {
        /// The import path, as the id writes it.
        import_path: String,
        /// `TestName`.
        function: String,
    },
    /// The id names no file (cargo, nextest, anything else).
    Unknown,
}

/// Where `test_id`'s code is.
pub fn locate(test_id: &str) -> TestSource {
    let Some((head, rest)) = test_id.split_once("::") else {
        return TestSource::Unknown;
    };
    // Playwright's ids name the project first: `[chromium] tests/a.spec.ts::title`.
    let head = head
        .strip_prefix('[')
        .and_then(|rest| rest.split_once("] "))
        .filter(|(_, file)| Language::of(file) == Some(Language::JavaScript))
        .map_or(head, |(_, file)| file);
    match Language::of(head) {
        Some(Language::Python | Language::JavaScript) => TestSource::File(head.to_owned()),
        _ if rest.starts_with("Test") && !rest.contains("::") => TestSource::GoPackage {
            import_path: head.to_owned(),
            function: rest.split('/').next().unwrap_or(rest).to_owned(),
        },
        _ => TestSource::Unknown,
    }
}

/// The skip mark that keeps `test_id` from running, read from `source`, the text of the
/// file at `path`.
pub fn skip_mark(test_id: &str, path: &str, source: &str) -> Option<SkipMark> {
    let lines: Vec<&str> = source.lines().collect();
    let found = match (locate(test_id), Language::of(path)) {
        (TestSource::File(_), Some(Language::Python)) => python(test_id, path, &lines),
        (TestSource::File(_), Some(Language::JavaScript)) => javascript(test_id, path, &lines),
        (TestSource::GoPackage { function, .. }, Some(Language::Go)) => {
            let start = lines
                .iter()
                .position(|line| starts_function(line, "func ", &function))?;
            let end = lines
                .iter()
                .skip(start + 1)
                .position(|line| line.starts_with('}'))
                .map_or(lines.len(), |offset| start + 1 + offset);
            marked(path, &lines, start + 1..end)
        }
        _ => None,
    }?;
    Some(SkipMark {
        file: path.to_owned(),
        line: found.0 + 1,
        mark: found.1,
    })
}

/// The first line in `range` with a skip mark: (0-based index, mark).
fn marked(path: &str, lines: &[&str], range: std::ops::Range<usize>) -> Option<(usize, String)> {
    range.into_iter().find_map(|index| {
        let mark = forbidden_mark(path, lines.get(index)?)?;
        (mark.kind == MarkKind::Skip).then_some((index, mark.text))
    })
}

/// Whether `line` opens `keyword name(` (or `name:` for a class), name whole.
fn starts_function(line: &str, keyword: &str, name: &str) -> bool {
    let code = line.trim_start();
    let code = code.strip_prefix("async ").unwrap_or(code);
    code.strip_prefix(keyword)
        .map(str::trim_start)
        .and_then(|rest| rest.strip_prefix(name))
        .and_then(|rest| rest.trim_start().chars().next())
        .is_some_and(|next| matches!(next, '(' | ':' | '['))
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// The decorators right above line `at`: from the topmost `@` line at its indent down.
fn decorators(lines: &[&str], at: usize) -> std::ops::Range<usize> {
    let own = lines.get(at).map_or(0, |line| indent(line));
    let mut start = at;
    let mut index = at;
    while index > 0 {
        index -= 1;
        let Some(line) = lines.get(index) else { break };
        if line.trim().is_empty() {
            break;
        }
        let code = line.trim_start();
        if indent(line) == own && code.starts_with('@') {
            start = index;
        } else if indent(line) == own && code.starts_with([')', ']', '}']) {
            // The end of a decorator's arguments split over lines.
        } else if indent(line) <= own {
            break;
        }
    }
    start..at
}

/// The body of the block opened at line `at`: until a line indented no deeper.
fn body(lines: &[&str], at: usize) -> std::ops::Range<usize> {
    let own = lines.get(at).map_or(0, |line| indent(line));
    let end = lines
        .iter()
        .enumerate()
        .skip(at + 1)
        .find(|(_, line)| !line.trim().is_empty() && indent(line) <= own)
        .map_or(lines.len(), |(index, _)| index);
    at + 1..end
}

fn python(test_id: &str, path: &str, lines: &[&str]) -> Option<(usize, String)> {
    let parts: Vec<&str> = test_id.split("::").collect();
    let (name, scopes) = parts.get(1..)?.split_last()?;
    let name = name.split('[').next().unwrap_or(name);
    for (index, line) in lines.iter().enumerate() {
        if line.starts_with("pytestmark")
            && let Some(found) = marked(path, lines, index..index + 1)
        {
            return Some(found);
        }
    }
    let mut from = 0;
    for class in scopes {
        let at = (from..lines.len()).find(|&i| {
            lines
                .get(i)
                .is_some_and(|line| starts_function(line, "class ", class))
        })?;
        if let Some(found) = marked(path, lines, decorators(lines, at)) {
            return Some(found);
        }
        from = at + 1;
    }
    let at = (from..lines.len()).find(|&i| {
        lines
            .get(i)
            .is_some_and(|line| starts_function(line, "def ", name))
    })?;
    marked(path, lines, decorators(lines, at)).or_else(|| marked(path, lines, body(lines, at)))
}

fn javascript(test_id: &str, path: &str, lines: &[&str]) -> Option<(usize, String)> {
    let (_, names) = test_id.split_once("::")?;
    let quoted = |name: &str| {
        [
            format!("'{name}'"),
            format!("\"{name}\""),
            format!("`{name}`"),
        ]
    };
    for name in names.split(" > ") {
        let forms = quoted(name.trim());
        for (index, line) in lines.iter().enumerate() {
            if forms.iter().any(|form| line.contains(form.as_str()))
                && let Some(found) = marked(path, lines, index..index + 1)
            {
                return Some(found);
            }
        }
    }
    None
}

/// Whether a go file is one of a package's test files.
pub fn is_go_test_file(path: &str) -> bool {
    file_name(path).ends_with("_test.go")
}

#[cfg(test)]
mod tests {
    use super::*;

    const PYTHON: &str = "import pytest

def test_plain():
    assert True

@pytest.mark.skip(reason='frozen')
@pytest.mark.parametrize(
    'x', [1, 2],
)
def test_skipped(x):
    assert x

def test_skips_inside():
    if True:
        pytest.skip('later')

@pytest.mark.xfail
class TestGroup:
    def test_member(self):
        pass

class TestOther:
    @pytest.mark.parametrize('y', [1])
    def test_member(self, y):
        pass
";

    fn mark(id: &str, path: &str, source: &str) -> Option<(usize, String)> {
        skip_mark(id, path, source).map(|found| (found.line, found.mark))
    }

    #[test]
    fn pytest_decorators_bodies_and_classes() {
        let path = "tests/test_a.py";
        let id = |name: &str| format!("{path}::{name}");
        assert_eq!(mark(&id("test_plain"), path, PYTHON), None);
        assert_eq!(
            mark(&id("test_skipped[1]"), path, PYTHON),
            Some((6, "mark.skip".to_owned()))
        );
        assert_eq!(
            mark(&id("test_skips_inside"), path, PYTHON),
            Some((15, "pytest.skip".to_owned()))
        );
        assert_eq!(
            mark(&id("TestGroup::test_member"), path, PYTHON),
            Some((17, "mark.xfail".to_owned()))
        );
        assert_eq!(mark(&id("TestOther::test_member"), path, PYTHON), None);
        assert_eq!(mark(&id("test_missing"), path, PYTHON), None);
        let module = format!("import pytest\npytestmark = pytest.mark.skip\n{PYTHON}");
        assert_eq!(mark(&id("test_plain"), path, &module).map(|m| m.0), Some(2));
    }

    #[test]
    fn a_flaky_mark_is_not_a_skip() {
        let source = "@pytest.mark.flaky\ndef test_a():\n    pass\n";
        assert_eq!(
            mark("tests/test_a.py::test_a", "tests/test_a.py", source),
            None
        );
    }

    #[test]
    fn jest_and_go() {
        let js = "describe('cart', () => {\n  it.skip('adds', () => {});\n  it('removes', () => {});\n});\n";
        let path = "web/cart.test.ts";
        assert_eq!(
            mark(&format!("{path}::cart > adds"), path, js).map(|m| m.0),
            Some(2)
        );
        assert_eq!(mark(&format!("{path}::cart > removes"), path, js), None);
        let go = "package p\n\nfunc TestA(t *testing.T) {\n\tt.Skip(\"later\")\n}\n\nfunc TestB(t *testing.T) {\n}\n";
        assert_eq!(
            mark("example.com/m/p::TestA/sub", "p/a_test.go", go).map(|m| m.0),
            Some(4)
        );
        assert_eq!(mark("example.com/m/p::TestB", "p/a_test.go", go), None);
        assert_eq!(locate("crate::module::test"), TestSource::Unknown);
        assert_eq!(locate("plain"), TestSource::Unknown);
        // Issue #20 (Playwright): the project before the file.
        assert_eq!(
            locate("[chromium] tests/a.spec.ts::cart > adds"),
            TestSource::File("tests/a.spec.ts".into())
        );
        assert_eq!(
            mark(&format!("[chromium] {path}::cart > adds"), path, js).map(|m| m.0),
            Some(2)
        );
        assert_eq!(
            locate("example.com/m/p::TestA/sub"),
            TestSource::GoPackage {
                import_path: "example.com/m/p".into(),
                function: "TestA".into()
            }
        );
    }
}
