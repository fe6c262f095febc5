//! Canonical test ids: the one string per test that its runner accepts to select it, built
//! the same way from every format that runner can write (see `docs/formats.md#test-ids`).

use std::path::Path;

/// pytest node id `tests/x/test_y.py::TestC::test_z[p]` from a JUnit `classname`, `name`
/// and optional `file` attribute.
///
/// pytest's JUnit writer turns the node id into a dotted `classname`
/// (`tests.x.test_y.TestC`), losing where the module path ends. With `file` (written
/// under `junit_family=xunit1` and by most plugins) the split is exact; without it the
/// trailing segments that start with an uppercase letter are taken as classes, which is
/// pytest's own naming rule for collected classes (`python_classes = Test*`).
pub fn pytest(classname: &str, name: &str, file: Option<&str>) -> String {
    let classname = classname.trim();
    let mut segments: Vec<&str> = if classname.is_empty() {
        Vec::new()
    } else {
        classname.split('.').collect()
    };
    let python_file = file.map(str::trim).filter(|f| {
        Path::new(f)
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("py"))
    });
    let module_path = if let Some(file) = python_file {
        let file = file.trim_start_matches("./");
        let dotted = file[..file.len() - 3].replace(['/', '\\'], ".");
        let module_len = dotted.split('.').count();
        if segments.len() >= module_len && segments[..module_len].join(".") == dotted {
            segments.drain(..module_len);
        } else {
            // The file does not prefix the classname (rootdir differs): keep the classes
            // by pytest's naming rule.
            let classes = trailing_classes(&segments);
            segments.drain(..segments.len() - classes);
        }
        file.replace('\\', "/")
    } else {
        let classes = trailing_classes(&segments);
        let module: Vec<&str> = segments.drain(..segments.len() - classes).collect();
        if module.is_empty() {
            String::new()
        } else {
            format!("{}.py", module.join("/"))
        }
    };
    let mut id = module_path;
    for part in segments.iter().copied().chain(std::iter::once(name)) {
        if !id.is_empty() {
            id.push_str("::");
        }
        id.push_str(part);
    }
    id
}

fn trailing_classes(segments: &[&str]) -> usize {
    segments
        .iter()
        .rev()
        .take_while(|s| s.chars().next().is_some_and(char::is_uppercase))
        .count()
        .min(segments.len().saturating_sub(1))
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

    #[test]
    fn go_ids() {
        assert_eq!(go("pkg/path", "TestName/sub"), "pkg/path::TestName/sub");
    }
}
