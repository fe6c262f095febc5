//! Canonical test ids: the one string per test that its runner accepts to select it, built
//! the same way from every format that runner can write (see `docs/formats.md#test-ids`).

/// Where a pytest JUnit `file` attribute is relative to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileRoot {
    /// As pytest writes it: relative to its rootdir, the root its `classname` is dotted
    /// from.
    Rootdir,
    /// An absolute path (some plugins write them) made relative to the repository root,
    /// which may lie above pytest's rootdir.
    Repository,
}

/// pytest node id `tests/x/test_y.py::TestC::test_z[p]` from a JUnit `classname`, `name`
/// and optional `file` attribute (as pytest writes it, relative to its rootdir).
///
/// The node id's module is the *collected* one, and only the `classname` names it:
/// pytest dots the node id's path into it (`tests.x.test_y.TestC`). `file` is where the
/// test function was *defined*, which for a test class imported into another module (or
/// inherited from a base class there) is another module altogether; taken as the id's
/// path, it would merge every collected copy into one test. So `file` only says how the
/// dotted module is spelled as a path when it is that module (exactly, dots in directory
/// names included) or lies in its directories; otherwise the trailing segments that
/// start with an uppercase letter are the classes, pytest's own naming rule for collected
/// classes (`python_classes = Test*`).
pub fn pytest(classname: &str, name: &str, file: Option<&str>) -> String {
    if classname.trim().is_empty() {
        return pytest_module_node(name, file);
    }
    let mut id = pytest_prefix(classname, file, FileRoot::Rootdir);
    if !id.is_empty() {
        id.push_str("::");
    }
    id.push_str(name);
    id
}

/// The id of a case with no `classname`: pytest writes one for a file that failed to
/// collect, named by its dotted module path (`name="tests.test_x"`). Its node id is the
/// file, `tests/test_x.py`, with or without the `file` attribute.
#[expect(
    clippy::case_sensitive_file_extension_comparisons,
    reason = "pytest collects `.py` files, case-sensitively"
)]
pub fn pytest_module_node(name: &str, file: Option<&str>) -> String {
    let name = name.trim();
    if let Some(file) = file.map(normalize_file).filter(|f| f.ends_with(".py"))
        && same_module(name, &file[..file.len() - 3])
    {
        return file;
    }
    let dotted_module = !name.is_empty()
        && name.split('.').all(|part| {
            part.chars()
                .next()
                .is_some_and(|c| c.is_alphabetic() || c == '_')
                && part.chars().all(|c| c.is_alphanumeric() || c == '_')
        });
    if dotted_module {
        format!("{}.py", name.replace('.', "/"))
    } else {
        name.to_owned()
    }
}

/// The part of a pytest node id before the test's own name (`tests/x/test_y.py::TestC`),
/// empty when there is none. JUnit parsers cache it per `(classname, file)`, since
/// consecutive test cases share it. See [`pytest`] for the rules.
#[expect(
    clippy::case_sensitive_file_extension_comparisons,
    reason = "pytest collects `.py` files, case-sensitively"
)]
pub fn pytest_prefix(classname: &str, file: Option<&str>, root: FileRoot) -> String {
    let classname = classname.trim();
    if classname.is_empty() {
        return String::new();
    }
    let file = file.map(normalize_file).filter(|f| f.ends_with(".py"));
    if let Some(file) = &file {
        let stem = &file[..file.len() - 3];
        // The file is the collected module: its path spells the module exactly.
        if let Some(rest) = strip_module(classname, stem) {
            return with_classes(file.clone(), rest.strip_prefix('.'));
        }
        // A path relative to the repository, with pytest's rootdir further down: the
        // classname's module is the file's tail.
        if root == FileRoot::Repository
            && let Some(rest) = module_at_tail(classname, stem)
        {
            return with_classes(file.clone(), rest.strip_prefix('.'));
        }
    }
    let (module, classes) = split_classes(classname);
    let directory = file
        .as_deref()
        .and_then(|file| spelled_directory(module, file));
    let path = match directory {
        Some((directory, rest)) => format!("{directory}/{}.py", rest.replace('.', "/")),
        None => format!("{}.py", module.replace('.', "/")),
    };
    with_classes(path, classes)
}

/// A file attribute as a node id path: `/` separators, no leading `./`.
fn normalize_file(file: &str) -> String {
    let file = file.trim().replace('\\', "/");
    let mut file = file.as_str();
    while let Some(rest) = file.strip_prefix("./") {
        file = rest;
    }
    file.to_owned()
}

/// `path::Class::Nested` from a module path and the dotted classes, if any.
fn with_classes(mut path: String, classes: Option<&str>) -> String {
    for class in classes
        .into_iter()
        .flat_map(|classes| classes.split('.'))
        .filter(|class| !class.is_empty())
    {
        path.push_str("::");
        path.push_str(class);
    }
    path
}

/// Whether the dotted `dotted` is the path `stem` (`tests/x/test_y`) with its separators
/// read as dots.
fn same_module(dotted: &str, stem: &str) -> bool {
    dotted.len() == stem.len()
        && dotted
            .bytes()
            .zip(stem.bytes())
            .all(|(c, s)| c == if s == b'/' { b'.' } else { s })
}

/// What follows the module `stem` (`tests/x/test_y`, written dotted) at the start of
/// `classname`: empty when the classname is the module itself, else the rest from its
/// dot on; `None` when the classname does not start with the module.
fn strip_module<'a>(classname: &'a str, stem: &str) -> Option<&'a str> {
    let head = classname.get(..stem.len())?;
    if !same_module(head, stem) {
        return None;
    }
    let rest = &classname[stem.len()..];
    (rest.is_empty() || rest.starts_with('.')).then_some(rest)
}

/// The classname's rest after its longest head that is the tail of `stem`, dotted, at
/// segment boundaries on both sides: `test_x.TestC` against `python/tests/test_x` gives
/// `.TestC`.
fn module_at_tail<'a>(classname: &'a str, stem: &str) -> Option<&'a str> {
    let ends = classname
        .match_indices('.')
        .map(|(at, _)| at)
        .chain([classname.len()]);
    let mut found = None;
    for end in ends {
        let head = &classname[..end];
        let Some(start) = stem.len().checked_sub(head.len()) else {
            break;
        };
        let boundary = start == 0 || stem.as_bytes()[start - 1] == b'/';
        if boundary && same_module(head, &stem[start..]) {
            found = Some(&classname[end..]);
        }
    }
    found
}

/// The longest directory of `file` whose dotted spelling starts the dotted `module` (and
/// is not all of it), with the rest of the module after its dot: how the module's
/// directories are spelled when a directory name has a dot in it.
fn spelled_directory<'a, 'f>(module: &'a str, file: &'f str) -> Option<(&'f str, &'a str)> {
    let mut directory = file;
    while let Some(slash) = directory.rfind('/') {
        directory = &directory[..slash];
        if let Some(rest) = strip_module(module, directory).and_then(|r| r.strip_prefix('.'))
            && !rest.is_empty()
        {
            return Some((directory, rest));
        }
    }
    None
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

/// cargo test id `binary-id::module::test_name` (nextest's binary id: `pkg` for a
/// library's unit tests, `pkg::name` for an integration test, `pkg::bin/name`), or
/// `module::test_name` when the binary is not known.
///
/// nextest's libtest-json output names a test `binary-id$test_name`: such a name carries
/// its binary, the `$` becomes `::`, and the id equals the one nextest's JUnit output
/// gives (`classname::name`). Any other name is prefixed with `binary` when given, even
/// when it already starts with it (a module named like its crate, `foo::foo::t`).
pub fn cargo(binary: Option<&str>, name: &str) -> String {
    if let Some((carried, test)) = name.split_once('$') {
        return format!("{carried}::{test}");
    }
    match binary.filter(|b| !b.is_empty()) {
        Some(binary) => format!("{binary}::{name}"),
        None => name.to_owned(),
    }
}

/// jest, vitest, mocha, node and Playwright test id: the test file (relative to the
/// repository root), then the describe path and the title, `file::describe > title`. The
/// runner's title filter (`-t`, `--grep`, `--test-name-pattern`) matches the titles joined
/// by a space; the adapters build that pattern from the id ([`js_titles`]).
pub fn js(file: &str, titles: &[String]) -> String {
    format!("{file}::{}", titles.join(JS_SEPARATOR))
}

/// What separates describe levels and the title in a JavaScript id.
pub const JS_SEPARATOR: &str = " > ";

/// A JavaScript id split into its file and its titles (describe path, then the test's
/// title); `None` when it has no `::` or an empty part. The split is at the first `::`
/// (paths hold none; titles may) and at every ` > `, so a title that itself holds ` > `
/// comes back in pieces: the adapters' patterns accept a space or ` > ` between pieces.
pub fn js_titles(id: &str) -> Option<(&str, Vec<&str>)> {
    let (file, rest) = id.split_once("::")?;
    if file.is_empty() || rest.is_empty() {
        return None;
    }
    Some((file, rest.split(JS_SEPARATOR).collect()))
}

/// mocha test id: the full title, the suite path and the test's title joined by a space,
/// as mocha's `fullTitle()` writes it and `--grep` selects it. mocha-junit-reporter writes
/// it whole in `name`; mocha's own xunit reporter splits it into `classname` (the suite
/// path, empty for a test outside any `describe`) and `name` (the title), so two tests
/// with the same title in different suites stay two tests.
pub fn mocha_full_title(suite_path: &str, title: &str) -> String {
    if suite_path.is_empty() {
        title.to_owned()
    } else {
        format!("{suite_path} {title}")
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
        // A module named like its crate is still a module: listing and running agree.
        assert_eq!(cargo(Some("foo"), "foo::t"), cargo(None, "foo$foo::t"));
        assert_eq!(cargo(Some("other"), "foo$t"), "foo::t");
    }

    /// Issue #12 item 1: a test class defined in `tests/test_base.py` and collected again
    /// in `tests/test_timed.py` (imported or subclassed there): pytest's `file` names the
    /// defining module, the `classname` the collected one. The id is the collected one's.
    #[test]
    fn pytest_ids_of_inherited_classes_follow_the_collected_module() {
        assert_eq!(
            pytest(
                "tests.test_timed.TestTimestampSigner",
                "test_signer",
                Some("tests/test_base.py")
            ),
            "tests/test_timed.py::TestTimestampSigner::test_signer"
        );
        // Defined in the package under test (src layout) or outside the rootdir.
        for file in [
            "src/itsdangerous/_testing.py",
            "../venv/lib/python3.12/site-packages/pkg/testing.py",
        ] {
            assert_eq!(
                pytest(
                    "tests.test_timed.TestSigner",
                    "test_x[a.b::c/d]",
                    Some(file)
                ),
                "tests/test_timed.py::TestSigner::test_x[a.b::c/d]"
            );
        }
        // The defining file still spells the collected module's directories when it lies
        // in them: a directory with a dot in its name.
        assert_eq!(
            pytest(
                "tests.v1.2.test_b.TestC",
                "test_x",
                Some("tests/v1.2/test_a.py")
            ),
            "tests/v1.2/test_b.py::TestC::test_x"
        );
        assert_eq!(
            pytest("tests.v1.2.test_b.TestC", "test_x", None),
            "tests/v1/2/test_b.py::TestC::test_x"
        );
    }

    #[test]
    fn pytest_ids_of_nested_and_lowercase_classes() {
        // Exact with the file: lowercase class names (`python_classes = *Tests`) and
        // nested classes.
        assert_eq!(
            pytest(
                "tests.test_y.outer.Inner",
                "test_z",
                Some("tests/test_y.py")
            ),
            "tests/test_y.py::outer::Inner::test_z"
        );
        assert_eq!(
            pytest("tests.test_y.TestA.TestB", "test_z", None),
            "tests/test_y.py::TestA::TestB::test_z"
        );
        // A doctest: the name is the object's dotted path.
        assert_eq!(
            pytest("src.pkg.mod", "pkg.mod.func", Some("src/pkg/mod.py")),
            "src/pkg/mod.py::pkg.mod.func"
        );
    }

    #[test]
    fn pytest_ids_from_repository_relative_files_with_a_deeper_rootdir() {
        assert_eq!(
            pytest_prefix(
                "test_foo.TestFoo",
                Some("foo/bar/test_foo.py"),
                FileRoot::Repository
            ),
            "foo/bar/test_foo.py::TestFoo"
        );
        // Only a repository-relative path is read that way: pytest's own `file` is
        // relative to the same rootdir as the classname, so a differing path is another
        // module.
        assert_eq!(
            pytest_prefix(
                "test_foo.TestFoo",
                Some("foo/bar/test_foo.py"),
                FileRoot::Rootdir
            ),
            "test_foo.py::TestFoo"
        );
        assert_eq!(
            pytest_prefix("oo.TestFoo", Some("foo/bar/foo.py"), FileRoot::Repository),
            "oo.py::TestFoo"
        );
    }

    #[test]
    fn pytest_collection_errors_are_their_module_with_or_without_file() {
        assert_eq!(
            pytest("", "tests.test_base", Some("tests/test_base.py")),
            "tests/test_base.py"
        );
        assert_eq!(pytest("", "tests.test_base", None), "tests/test_base.py");
        assert_eq!(pytest("", "weird name", None), "weird name");
    }

    proptest::proptest! {
        #![proptest_config(crate::test_support::proptest_config(512))]

        /// One test, one id: the `file` attribute, whichever module it names, never
        /// changes the id of a test whose classes follow pytest's naming rule.
        #[test]
        fn pytest_ids_do_not_depend_on_the_file_attribute(
            module in "[a-z_]{1,6}(/[a-z_][a-z0-9_]{0,5}){0,3}",
            classes in "(\\.Test[A-Za-z_]{0,5}){0,3}",
            name in "test_[a-z]{1,4}(\\[[a-z.:/\\-]{0,8}\\])?",
            other in proptest::option::of("(\\./)?[a-z_]{1,6}(/[a-z_]{1,6}){0,3}\\.py"),
            windows in proptest::bool::ANY,
        ) {
            let classname = format!("{}{classes}", module.replace('/', "."));
            let expected = pytest(&classname, &name, None);
            let defining = other.unwrap_or_else(|| format!("{module}.py"));
            let defining = if windows { defining.replace('/', "\\") } else { defining };
            proptest::prop_assert_eq!(
                pytest(&classname, &name, Some(&defining)),
                expected.clone(),
                "file {}", defining
            );
            let starts = format!("{module}.py::");
            let ends = format!("::{name}");
            proptest::prop_assert!(expected.starts_with(&starts), "{}", expected);
            proptest::prop_assert!(expected.ends_with(&ends), "{}", expected);
        }

        /// Whatever the attributes, building an id never panics, and a classname's module
        /// path is always what the id starts with, as a `.py` file.
        #[test]
        fn pytest_prefixes_are_total(
            classname in "[a-zA-Z_. ]{0,24}",
            file in proptest::option::of("(\\./)?[a-zA-Z_/\\\\.]{0,16}(\\.py)?"),
            repository in proptest::bool::ANY,
        ) {
            let root = if repository { FileRoot::Repository } else { FileRoot::Rootdir };
            let prefix = pytest_prefix(&classname, file.as_deref(), root);
            proptest::prop_assert_eq!(prefix.is_empty(), classname.trim().is_empty());
            if !prefix.is_empty() {
                proptest::prop_assert!(prefix.contains(".py"), "{}", prefix);
            }
        }
    }

    #[test]
    fn go_ids() {
        assert_eq!(go("pkg/path", "TestName/sub"), "pkg/path::TestName/sub");
    }
}
