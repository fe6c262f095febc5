//! Canonical test ids: the one string per test that its runner accepts to select it, built
//! the same way from every format that runner can write (see `docs/formats.md#test-ids`).

/// pytest node id `tests/x/test_y.py::TestC::test_z[p]` from a JUnit `classname`, `name`
/// and optional `file` attribute.
///
/// pytest's JUnit writer turns the node id into a dotted `classname`
/// (`tests.x.test_y.TestC`), losing where the module path ends. With `file` (written
/// under `junit_family=xunit1` and by most plugins) the split is exact; without it the
/// trailing segments that start with an uppercase letter are taken as classes, which is
/// pytest's own naming rule for collected classes (`python_classes = Test*`).
pub fn pytest(classname: &str, name: &str, file: Option<&str>) -> String {
    let mut id = pytest_prefix(classname, file);
    if !id.is_empty() {
        id.push_str("::");
    }
    id.push_str(name);
    id
}

/// The part of a pytest node id before the test's own name (`tests/x/test_y.py::TestC`),
/// empty when there is none. JUnit parsers cache it per `(classname, file)`, since
/// consecutive test cases share it.
#[expect(
    clippy::case_sensitive_file_extension_comparisons,
    reason = "pytest collects `.py` files, case-sensitively"
)]
pub fn pytest_prefix(classname: &str, file: Option<&str>) -> String {
    let classname = classname.trim();
    let mut prefix = String::with_capacity(classname.len() + 8);
    let classes = match file.map(str::trim).filter(|f| f.ends_with(".py")) {
        Some(file) => {
            let file = file.trim_start_matches("./");
            push_joined(&mut prefix, file.split('\\'), "/");
            // Without the module's dotted path at its start, the classname's rootdir
            // differs from the file's: keep the classes by pytest's naming rule.
            match strip_module(classname, file.trim_end_matches(".py")) {
                Some(rest) => rest.strip_prefix('.'),
                None => split_classes(classname).1,
            }
        }
        None if classname.is_empty() => None,
        None => {
            let (module, classes) = split_classes(classname);
            push_joined(&mut prefix, module.split('.'), "/");
            prefix.push_str(".py");
            classes
        }
    };
    for class in classes.into_iter().flat_map(|classes| classes.split('.')) {
        if !prefix.is_empty() {
            prefix.push_str("::");
        }
        prefix.push_str(class);
    }
    prefix
}

fn push_joined<'a>(out: &mut String, parts: impl Iterator<Item = &'a str>, separator: &str) {
    for (index, part) in parts.enumerate() {
        if index > 0 {
            out.push_str(separator);
        }
        out.push_str(part);
    }
}

/// What follows the module `stem` (`tests/x/test_y`, written dotted) at the start of
/// `classname`: empty when the classname is the module itself, else the rest from its
/// dot on; `None` when the classname does not start with the module.
fn strip_module<'a>(classname: &'a str, stem: &str) -> Option<&'a str> {
    if classname.is_empty() {
        return None;
    }
    let head = classname.get(..stem.len())?;
    let same = head
        .bytes()
        .zip(stem.bytes())
        .all(|(c, s)| c == if matches!(s, b'/' | b'\\') { b'.' } else { s });
    if !same {
        return None;
    }
    let rest = &classname[stem.len()..];
    (rest.is_empty() || rest.starts_with('.')).then_some(rest)
}

/// Splits a dotted classname into its module and its classes: the trailing segments that
/// start with an uppercase letter, never all of them (the first is always the module).
fn split_classes(classname: &str) -> (&str, Option<&str>) {
    let mut start = classname.len();
    while let Some(dot) = classname[..start].rfind('.') {
        if !classname[dot + 1..start]
            .chars()
            .next()
            .is_some_and(char::is_uppercase)
        {
            break;
        }
        start = dot;
    }
    if start == classname.len() {
        (classname, None)
    } else {
        (&classname[..start], Some(&classname[start + 1..]))
    }
}

/// go test id `pkg/path::TestName/sub`.
pub fn go(package: &str, test: &str) -> String {
    if package.is_empty() {
        test.to_owned()
    } else {
        format!("{package}::{test}")
    }
}

/// cargo test id `crate::module::test_name`, or nextest's `binary-id::test_name`.
///
/// nextest's libtest-json output names a test `binary-id$test_name`; the `$` becomes `::`
/// so the id equals the one nextest's JUnit output gives (`classname::name`).
pub fn cargo(binary: Option<&str>, name: &str) -> String {
    let name = name.replacen('$', "::", 1);
    match binary.filter(|b| !b.is_empty()) {
        Some(binary) if !name.starts_with(&format!("{binary}::")) => format!("{binary}::{name}"),
        _ => name,
    }
}

/// Any other JUnit writer: `classname::name`, or `name` when there is no classname.
pub fn junit_generic(classname: Option<&str>, name: &str) -> String {
    match classname.map(str::trim).filter(|c| !c.is_empty()) {
        Some(classname) => format!("{classname}::{name}"),
        None => name.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pytest_ids_from_classname_alone() {
        assert_eq!(
            pytest("tests.x.test_y.TestC", "test_z[p]", None),
            "tests/x/test_y.py::TestC::test_z[p]"
        );
        assert_eq!(
            pytest("python.test_sample", "test_a", None),
            "python/test_sample.py::test_a"
        );
    }

    #[test]
    fn pytest_ids_use_file_when_given() {
        assert_eq!(
            pytest("tests.x.test_y.TestC", "test_z", Some("tests/x/test_y.py")),
            "tests/x/test_y.py::TestC::test_z"
        );
    }

    #[test]
    fn cargo_ids_agree_between_libtest_json_and_junit() {
        assert_eq!(
            cargo(None, "fixture-project::basic$test_cwd"),
            "fixture-project::basic::test_cwd"
        );
        assert_eq!(
            junit_generic(Some("fixture-project::basic"), "test_cwd"),
            "fixture-project::basic::test_cwd"
        );
        assert_eq!(
            cargo(Some("mycrate"), "tests::fails"),
            "mycrate::tests::fails"
        );
    }

    /// The first, plainly written version of `pytest_prefix`, kept as the reference the
    /// allocation-free one must agree with.
    #[expect(
        clippy::single_match_else,
        clippy::case_sensitive_file_extension_comparisons,
        reason = "kept exactly as first written"
    )]
    fn reference_pytest_prefix(classname: &str, file: Option<&str>) -> String {
        fn classes(segments: &[&str]) -> usize {
            segments
                .iter()
                .rev()
                .take_while(|s| s.chars().next().is_some_and(char::is_uppercase))
                .count()
                .min(segments.len().saturating_sub(1))
        }
        let classname = classname.trim();
        let mut segments: Vec<&str> = if classname.is_empty() {
            Vec::new()
        } else {
            classname.split('.').collect()
        };
        let module_path = match file.map(str::trim).filter(|f| f.ends_with(".py")) {
            Some(file) => {
                let file = file.trim_start_matches("./");
                let dotted = file.trim_end_matches(".py").replace(['/', '\\'], ".");
                let module_len = dotted.split('.').count();
                if segments.len() >= module_len && segments[..module_len].join(".") == dotted {
                    segments.drain(..module_len);
                } else {
                    let count = classes(&segments);
                    segments.drain(..segments.len() - count);
                }
                file.replace('\\', "/")
            }
            None => {
                let count = classes(&segments);
                let module: Vec<&str> = segments.drain(..segments.len() - count).collect();
                if module.is_empty() {
                    String::new()
                } else {
                    format!("{}.py", module.join("/"))
                }
            }
        };
        let mut prefix = module_path;
        for part in segments {
            if !prefix.is_empty() {
                prefix.push_str("::");
            }
            prefix.push_str(part);
        }
        prefix
    }

    proptest::proptest! {
        #![proptest_config(crate::test_support::proptest_config(512))]

        #[test]
        fn pytest_prefix_agrees_with_the_reference(
            classname in "[a-zA-Z_. ]{0,24}",
            file in proptest::option::of("(\\./)?[a-zA-Z_/\\\\.]{0,16}(\\.py)?"),
        ) {
            proptest::prop_assert_eq!(
                pytest_prefix(&classname, file.as_deref()),
                reference_pytest_prefix(&classname, file.as_deref())
            );
        }

        #[test]
        fn pytest_prefix_agrees_when_the_classname_starts_with_the_module(
            module in "[a-z_]{1,6}(/[a-z_]{1,6}){0,3}",
            classes in "(\\.[A-Za-z_]{0,5}){0,3}",
            windows in proptest::bool::ANY,
            dot_slash in proptest::bool::ANY,
        ) {
            let path = if windows { module.replace('/', "\\") } else { module.clone() };
            let file = format!("{}{path}.py", if dot_slash { "./" } else { "" });
            let classname = format!("{}{classes}", module.replace('/', "."));
            proptest::prop_assert_eq!(
                pytest_prefix(&classname, Some(&file)),
                reference_pytest_prefix(&classname, Some(&file))
            );
        }
    }

    #[test]
    fn go_ids() {
        assert_eq!(go("pkg/path", "TestName/sub"), "pkg/path::TestName/sub");
    }
}
