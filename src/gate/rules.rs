//! The lane's rules on the lines a change adds: forbidden test marks in every language
//! candor knows (skips, expected failures, retries, focus), retry plugins and settings in
//! the files that configure runners and CI, code under test that tells whether a test is
//! running, reads the tests' files, reaches into the test framework, ends the process
//! with a status of its own or looks at its caller, the repository's own `[[ban]]`s, and
//! the opt-in presets (`no-sleep-wait`, `no-naive-datetime`). Pure: a parsed diff and the
//! base's policy in, findings out. The tables below are the rules; docs/gate.md lists
//! them.
//!
//! A line is matched as text: a whole-line comment is skipped for the built-in rules, but a
//! mark inside a string literal is still found (the lane errs towards refusing).

use std::sync::LazyLock;

use regex::Regex;
use serde::Serialize;

use super::diff::{ChangedFile, Diff};
use super::files::{ConfigKind, Language, config_kind, is_runner_setup, is_unittest_module};
use super::pytest_files::PythonTestFiles;
use crate::policy::{Ban, Preset};

/// Which family of rule a finding comes from.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum RuleKind {
    /// A built-in forbidden test mark.
    Mark,
    /// A built-in retry plugin or setting.
    Retry,
    /// An opt-in preset from `[lane] presets`.
    Preset,
    /// The repository's own `[[ban]]`.
    Ban,
    /// A new test file that calls no oracle function.
    Oracle,
    /// Code under test that tells whether a test is running.
    TestDetection,
    /// Code under test that reads the tests' own files.
    TestFiles,
    /// Code under test that imports, hooks or patches the test framework.
    TestFramework,
    /// Code under test that ends the process bypassing its exit status.
    ProcessExit,
    /// Code under test that looks at its caller's frame or stack.
    CallerInspection,
    /// Code under test that replaces a member of the standard library (`json.loads`,
    /// `builtins.open`, `Date.now`) that the tests use too.
    StandardLibraryPatch,
    /// Code under test whose comparisons cannot fail (`gate::equality`).
    Equality,
    /// A source line the language reads as other lines than git shows: a carriage return
    /// alone, where the language ends a line and git does not, or a Python coding
    /// declaration whose codec turns bytes into line ends (`utf-7`, `unicode_escape`).
    LineEnding,
}

/// One refused line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Finding {
    /// The file, repository-relative.
    pub file: String,
    /// 1-based line in the new file.
    pub line: usize,
    /// The rule's name: `forbidden-mark`, `retry-setting`, `detects-tests`,
    /// `reads-test-files`, `touches-test-framework`, `ends-the-process`,
    /// `inspects-the-caller`, `patches-the-standard-library`, `equal-to-anything`
    /// (`gate::equality`),
    /// `bare-carriage-return`, `source-encoding`, a preset's name, a ban's id, or
    /// `missing-oracle`.
    pub rule: String,
    /// Its family.
    pub kind: RuleKind,
    /// Why the line is refused and what to do instead.
    pub reason: String,
    /// The line, trimmed and cut to 160 characters.
    pub text: String,
    /// For a ban, the incident it came from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

/// The rule name of built-in marks.
pub const FORBIDDEN_MARK: &str = "forbidden-mark";
/// The rule name of built-in retry settings.
pub const RETRY_SETTING: &str = "retry-setting";
/// The rule name of code under test that tells whether a test is running.
pub const DETECTS_TESTS: &str = "detects-tests";
/// The rule name of code under test that reads the tests' own files.
pub const READS_TEST_FILES: &str = "reads-test-files";
/// The rule name of code under test that imports, hooks or patches the test framework.
pub const TOUCHES_TEST_FRAMEWORK: &str = "touches-test-framework";
/// The rule name of code under test that ends the process bypassing its exit status.
pub const ENDS_THE_PROCESS: &str = "ends-the-process";
/// The rule name of code under test that looks at its caller's frame or stack.
pub const INSPECTS_THE_CALLER: &str = "inspects-the-caller";
/// The rule name of code under test that replaces a member of the standard library.
pub const PATCHES_THE_STANDARD_LIBRARY: &str = "patches-the-standard-library";
/// The rule name of a source line with a carriage return alone in it.
pub const BARE_CARRIAGE_RETURN: &str = "bare-carriage-return";
/// The rule name of a Python coding declaration naming a codec that turns bytes git
/// shows inside a line (a comment's) into a line end.
pub const SOURCE_ENCODING: &str = "source-encoding";

/// A Python coding declaration, as the tokenizer reads it on line 1 or 2 (PEP 263); the
/// codec's name in group 1.
static CODING_DECLARATION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^[ \t\x0c]*#.*?coding[:=][ \t]*([-\w.]+)").expect("a valid pattern")
});

/// Codecs under which every byte below 0x80 is the ASCII character it is to git, so a line
/// git shows is the line Python reads: UTF-8, ASCII, and the 8-bit and multi-byte legacy
/// codecs whose bytes below 0x80 are ASCII (a multi-byte character's trail byte is never a
/// line end or `#`). Matched on the name lowercased, `_` as `-`.
static LINE_PRESERVING_CODEC: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"^(?:utf-?8(?:-sig)?|u8|(?:us-)?ascii|646|latin-?1|l1|iso-latin-1|iso-?8859-\d+",
        r"|latin-?\d+|l\d+|cp-?\d+|windows-\d+|ibm\d+|koi8-[a-z]+|mac-?[a-z]+",
        r"|euc-?[a-z0-9-]*|u?jis|shift-?jis\w*|s-?jis|sjis\w*|gbk|gb-?2312|gb-?18030",
        r"|big-?5\w*|cp936|ms936|ms-?kanji|tis-?620)$",
    ))
    .expect("a valid pattern")
});

/// Of those, the codecs that do not keep ASCII: EBCDIC (`cp037`, `cp500`, …), `cp864`
/// (`%`), and the JIS X 0213 forms of Shift JIS (`\\`, `~`).
static ASCII_CHANGING_CODEC: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:(?:cp|ibm)-?(?:0?37|039|273|424|500|864|875|1026|1140)|.*x0213|.*2004)$")
        .expect("a valid pattern")
});

/// The codec a Python coding declaration on `line` names, when it is not one that keeps
/// git's lines: `utf-7` reads `+AAo-` as a line end and `unicode_escape` reads `\n`, so
/// `# +AAo-if "PYTEST_CURRENT_TEST" in os.environ: return sum(prices)` is a comment to
/// git and every rule, and a statement to Python.
fn line_splitting_codec(line: &str) -> Option<&str> {
    let codec = CODING_DECLARATION.captures(line)?.get(1)?.as_str();
    let name = codec.to_ascii_lowercase().replace('_', "-");
    (!LINE_PRESERVING_CODEC.is_match(&name) || ASCII_CHANGING_CODEC.is_match(&name))
        .then_some(codec)
}

/// What a forbidden mark does to a test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MarkKind {
    /// It does not run, or its failure does not count (skip, xfail, ignore, disabled).
    Skip,
    /// It is rerun until it passes.
    Retry,
    /// Only it runs; its neighbours are skipped.
    Focus,
}

/// A forbidden mark found in a line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mark {
    /// What it does.
    pub kind: MarkKind,
    /// The matched text, e.g. `mark.flaky`.
    pub text: String,
}

/// Where a built-in rule looks.
#[derive(Clone, Copy)]
enum Scope {
    /// Source files of these languages (only test files when `tests_only`).
    Code(&'static [Language], bool),
    /// The code under test: source files of these languages that are neither test files,
    /// nor files that configure runners, nor the runners' setup files.
    UnderTest(&'static [Language]),
    /// The code under test apart from unittest-style test modules (`tests.py`), which
    /// import the test framework by design.
    UnderTestBesidesUnittest(&'static [Language]),
    /// These configuration files.
    Config(&'static [ConfigKind]),
}

#[derive(Clone, Copy)]
struct BuiltIn {
    scope: Scope,
    pattern: &'static str,
    /// A line that also matches this is not refused (an aware datetime, a zero count).
    unless: Option<&'static str>,
}

struct Compiled<T> {
    what: T,
    scope: Scope,
    pattern: Regex,
    unless: Option<Regex>,
}

use ConfigKind::{
    Commands, JsTestConfig, Nextest, PackageJson, PytestIni, PythonDependencies, PythonProject,
};
use Language::{CSharp, Go, JavaScript, Jvm, Php, Python, Ruby, Rust};

const fn code(languages: &'static [Language], pattern: &'static str) -> BuiltIn {
    BuiltIn {
        scope: Scope::Code(languages, false),
        pattern,
        unless: None,
    }
}

const fn tests(languages: &'static [Language], pattern: &'static str) -> BuiltIn {
    BuiltIn {
        scope: Scope::Code(languages, true),
        pattern,
        unless: None,
    }
}

const fn under_test(languages: &'static [Language], pattern: &'static str) -> BuiltIn {
    BuiltIn {
        scope: Scope::UnderTest(languages),
        pattern,
        unless: None,
    }
}

const fn under_test_besides_unittest(
    languages: &'static [Language],
    pattern: &'static str,
) -> BuiltIn {
    BuiltIn {
        scope: Scope::UnderTestBesidesUnittest(languages),
        pattern,
        unless: None,
    }
}

const fn config(kinds: &'static [ConfigKind], pattern: &'static str) -> BuiltIn {
    BuiltIn {
        scope: Scope::Config(kinds),
        pattern,
        unless: None,
    }
}

const fn unless(rule: BuiltIn, exception: &'static str) -> BuiltIn {
    BuiltIn {
        unless: Some(exception),
        ..rule
    }
}

/// Marks that keep a test from running or from counting.
const SKIP_MARKS: &[BuiltIn] = &[
    code(&[Python], r"\bmark\.(?:skip|skipif|xfail)\b"),
    code(&[Python], r"\bpytest\.(?:skip|xfail)\s*\("),
    code(
        &[Python],
        r"\bunittest\.(?:skip|skipIf|skipUnless|expectedFailure)\b",
    ),
    code(
        &[Python],
        r"^\s*@(?:skip|skipIf|skipUnless|expectedFailure)\b",
    ),
    code(&[Python], r"\.skipTest\s*\("),
    code(&[Python], r"\braise\s+(?:unittest\.)?SkipTest\b"),
    code(&[Rust], r"#\[\s*ignore\b"),
    code(&[Rust], r"#\[\s*cfg_attr\s*\(.*\bignore\b"),
    tests(&[Go], r"\b\w+\.Skip(?:f|Now)?\s*\("),
    code(
        &[JavaScript],
        r"\b(?:it|test|describe|context|suite|specify)(?:\.\w+)*\.(?:skip|failing)\b",
    ),
    code(
        &[JavaScript],
        r"\b(?:xit|xtest|xdescribe|xcontext|xspecify)\s*\(",
    ),
    code(&[JavaScript], r"\bthis\.skip\s*\("),
    code(&[Jvm], r"@Disabled\w*"),
    code(&[Jvm], r"@Ignore\b"),
    code(
        &[CSharp],
        r"\[\s*(?:Fact|Theory|Test|TestMethod|TestCase|SkippableFact)\s*\([^)]*\bSkip\s*=",
    ),
    code(&[CSharp], r"[\[,]\s*Ignore\b"),
    code(&[CSharp], r"\bAssert\.Ignore\s*\("),
    tests(
        &[Ruby],
        r"^\s*(?:xit|xdescribe|xcontext|xspecify|xexample|xscenario|skip|pending)\b",
    ),
    tests(&[Ruby], r"\bskip:\s*(?:true|['\x22])|:skip\s*=>"),
    code(&[Php], r"->markTest(?:Skipped|Incomplete)\s*\("),
];

/// Marks that rerun a failing test.
const RETRY_MARKS: &[BuiltIn] = &[
    code(&[Python], r"\bmark\.flaky\b"),
    code(&[Python], r"^\s*@flaky\b"),
    tests(&[Python], r"^\s*@retry\b"),
    code(&[Rust], r"#\[\s*(?:\w+::)*(?:flaky_test|flaky)\b"),
    code(&[JavaScript], r"\bjest\.retryTimes\s*\("),
    code(&[JavaScript], r"\bthis\.retries\s*\("),
    tests(&[JavaScript], r"\bretry\s*:\s*[1-9]"),
    tests(&[JavaScript], r"\bretries\s*:\s*(?:[1-9]|\{)"),
    code(&[Jvm], r"@(?:RetryingTest|RepeatedIfExceptionsTest)\b"),
    code(&[CSharp], r"[\[,]\s*Retry\s*\("),
    tests(&[Ruby], r"\bretry:\s*[1-9]"),
];

/// Marks that run one test and skip the rest.
const FOCUS_MARKS: &[BuiltIn] = &[
    code(
        &[JavaScript],
        r"\b(?:it|test|describe|context|suite|specify)(?:\.\w+)*\.only\b",
    ),
    code(&[JavaScript], r"\b(?:fit|fdescribe|ftest)\s*\("),
    tests(&[Ruby], r"^\s*(?:fit|fdescribe|fcontext)\b|\bfocus:\s*true"),
];

/// Retry plugins and settings, in the files that configure runners and run them.
const RETRY_SETTINGS: &[BuiltIn] = &[
    config(
        &[
            PythonDependencies,
            PythonProject,
            PytestIni,
            Commands,
            PackageJson,
        ],
        r"\bpytest[-_](?:rerunfailures|retry)\b",
    ),
    code(&[Python], r"\bpytest[-_]rerunfailures\b|\bpytest_retry\b"),
    config(
        &[PythonDependencies, PythonProject],
        r#"(?:^|["'\s,\[])flaky\s*(?:$|[<>=!~;\[,"'\]])"#,
    ),
    config(
        &[PythonProject, PytestIni, Commands, PackageJson],
        r"(?:^|\s)-p\s*rerunfailures\b",
    ),
    config(
        &[PythonProject, PytestIni, Commands, PackageJson],
        r"--(?:reruns|only-rerun)\b",
    ),
    code(&[Python], r#"["']--(?:reruns|only-rerun)\b"#),
    config(&[PythonProject, PytestIni], r"^\s*reruns(?:_delay)?\s*="),
    config(&[PytestIni], r"^\s*retries\s*=\s*[1-9]"),
    config(&[Nextest], r"^\s*retries\s*=\s*(?:[1-9]|\{)"),
    config(
        &[Commands, PackageJson, PythonProject, PytestIni],
        r"--rerun-fails\b",
    ),
    config(
        &[Commands, PackageJson],
        r#"--retr(?:y|ies)(?:=|\s+)["']?[1-9]"#,
    ),
    config(
        &[Commands, PackageJson],
        r#"\bNEXTEST_RETRIES\b["']?\s*[:=]\s*["']?[1-9]"#,
    ),
    config(&[Commands], r"\buses:\s*\S*retry"),
    config(
        &[JsTestConfig, PackageJson],
        r#"["']?\bretr(?:y|ies)\b["']?\s*:\s*(?:[1-9]|\{|[A-Za-z_$(])"#,
    ),
    config(&[JsTestConfig], r"\bjest\.retryTimes\s*\("),
];

/// What code under test reads to tell that a test is running: the variables only test
/// runners set, the runner's module being loaded, the test binary's flags, the compiler's
/// test configuration, and (read from the environment) the hash seed the lane pins and
/// the variables nextest and libtest set. Code that behaves otherwise under test passes
/// its replays whatever it does in production. Names that ordinary configuration uses too
/// (`NODE_ENV`, `CI`) are left out: they would refuse honest changes, and a `[[ban]]` adds
/// them where a repository never needs them.
/// A go build constraint made only of the toolchain's own tags and operators.
const GO_TOOLCHAIN_CONSTRAINT: &str = r"^\s*//\s*(?:go:build|\+build)\s+(?:[\s!()&|,]|(?:aix|android|darwin|dragonfly|freebsd|hurd|illumos|ios|js|linux|nacl|netbsd|openbsd|plan9|solaris|wasip1|windows|zos|386|amd64p32|amd64|armbe|arm64be|arm64|arm|loong64|mips64p32le|mips64p32|mips64le|mips64|mipsle|mips|ppc64le|ppc64|ppc|riscv64|riscv|s390x|s390|sparc64|sparc|wasm|unix|cgo|gccgo|gc|go1\.\d+|race|msan|asan|ignore|appengine)\b)*$";

const TEST_DETECTION: &[BuiltIn] = &[
    under_test(
        &[Python],
        r"\bPYTEST_(?:CURRENT_TEST|XDIST_WORKER|XDIST_TESTRUNUID)\b",
    ),
    // Reads only: setting a child's seed (`os.environ["PYTHONHASHSEED"] = "0"`) is not
    // asking whether a test runs.
    under_test(
        &[Python],
        r#"(?:\bgetenv\s*\(|\benviron\s*\.\s*get\s*\()\s*["'](?:PYTHONHASHSEED|PYTHONDONTWRITEBYTECODE|PYTEST_VERSION)["']|\benviron\s*\[\s*["'](?:PYTHONHASHSEED|PYTHONDONTWRITEBYTECODE|PYTEST_VERSION)["']\s*\]\s*(?:$|==|[^=\s])|["'](?:PYTHONHASHSEED|PYTHONDONTWRITEBYTECODE|PYTEST_VERSION)["']\s+(?:not\s+)?in\s+(?:os\.)?environ\b"#,
    ),
    // The same two settings the lane pins, read from the interpreter rather than the
    // environment (setting `sys.dont_write_bytecode` is not reading it), and the pinned
    // hash seed read off a string's hash: `hash("x")` is one number in every replay.
    under_test(
        &[Python],
        r#"\bsys\s*\.\s*flags\s*\.\s*hash_randomization\b|\bsys\s*\.\s*dont_write_bytecode\s*(?:$|==|!=|[^=\s])|\bhash\s*\(\s*[rRbBuU]{0,2}["']"#,
    ),
    under_test(
        &[Python],
        r#"["']_?pytest["']\s+(?:not\s+)?in\s+sys\.modules\b"#,
    ),
    under_test(
        &[Python],
        r#"\bsys\.modules\s*(?:\.\s*get\s*\(|\[)\s*["']_?pytest["']"#,
    ),
    // The pinned settings named anywhere but as what is set: `os.environb.get(b"…")`,
    // `env.get("…")` on a copy, `os.environ.__getitem__("…")`. Not a dict key, an
    // assignment, `del`, `putenv` or `setdefault` (setting a child's environment).
    unless(
        under_test(
            &[Python],
            r#"[bB]?["'](?:PYTHONHASHSEED|PYTHONDONTWRITEBYTECODE|PYTEST_VERSION|PYTEST_ADDOPTS)["']\s*(?:$|==|!=|[^\s:=\]!]|\]\s*(?:$|==|!=|[^\s=!]))"#,
        ),
        r#"\b(?:putenv|setdefault|unsetenv)\s*\(\s*[bB]?["']|^\s*del\s"#,
    ),
    // A variable read by a name built at run time (`os.environ.get("PYTHONHASH" +
    // "SEED")`, an f-string, a variable): no rule can read which one it is. Only `os.`'s
    // own environment (a WSGI `environ` is a request), and not an assignment.
    unless(
        under_test(
            &[Python],
            r#"\bos\s*\.\s*(?:environb?\s*(?:\.\s*get\s*\(|\[)|getenvb?\s*\()\s*(?:[rRbB]?[fF][rRbB]?["']|[bBrRuU]{0,2}["'][^"']*["']\s*[^\s,)\]]|[A-Za-z_]\w*[^\w"']|[(*])"#,
        ),
        r"\benvironb?\s*\[[^\]]*\]\s*=[^=]",
    ),
    // Any flag the lane's pinned environment sets, however it is reached.
    under_test(
        &[Python],
        r#"\bflags\s*\.\s*(?:hash_randomization|dont_write_bytecode)\b|["'](?:hash_randomization|dont_write_bytecode)["']"#,
    ),
    // The runner's modules (pytest's, its plugins', pluggy, iniconfig, py, xdist) named on
    // a line that reads `sys.modules`, or asked of the import system.
    under_test(
        &[Python],
        r#"\bsys\s*\.\s*modules\b.*["'](?:_?pytest(?:_\w+)?|pluggy|iniconfig|py|xdist)(?:\.[\w.]*)?["']|["'](?:_?pytest(?:_\w+)?|pluggy|iniconfig|py|xdist)(?:\.[\w.]*)?["'].*\bsys\s*\.\s*modules\b|\b(?:find_spec|find_loader|find_module)\s*\(\s*["'](?:_?pytest(?:_\w+)?|pluggy|iniconfig|py|xdist)["'.]"#,
    ),
    // The project's own test modules named on a line that reads `sys.modules`: pytest
    // imports `tests/test_cart.py` as `test_cart` (or `tests.test_cart`), so code under
    // test that asks whether a module named like a test (`test…`, `…_test`, `…_tests`,
    // `conftest`, at any dotted place) is loaded knows it is under test (found by a
    // red-team run, 2026-12-04).
    under_test(
        &[Python],
        r#"\bsys\s*\.\s*modules\b.*["'](?:\w+\.)*(?:test\w*|\w*_tests?|conftest)(?:\.[\w.]*)?["']|["'](?:\w+\.)*(?:test\w*|\w*_tests?|conftest)(?:\.[\w.]*)?["'].*\bsys\s*\.\s*modules\b"#,
    ),
    // The interpreter's own command line (`python -m pytest …`), read at all.
    under_test(&[Python], r"\bsys\s*\.\s*orig_argv\b"),
    // The runner's own arguments as the lane passes them (`--junitxml`, `-p no:…`,
    // `-p randomly`, `--randomly-seed`, `-o junit_family`, `--no-cov`), in a string.
    under_test(
        &[Python],
        r#"["'](?:--?junit[-_]?xml|--randomly[-_]|-p\s*(?:no:|randomly\b)|no:\w|junit_family\b|--no-cov\b)|["'](?:randomly|pytest_randomly|pytest-randomly)["']"#,
    ),
    // A set's iteration order is the hash seed's: the lane pins it, so a string joined
    // from a set (`"".join({"q", "u", "x"})`) is one string in every replay and another
    // in production.
    under_test(
        &[Python],
        r"\.join\s*\(\s*(?:\{[^{}:]*\}|(?:frozen)?set\s*\()",
    ),
    under_test(&[Python], r"\b_called_from_test\b"),
    // How the process was started: the lane runs `python -m pytest`, so the main module
    // is pytest's `__main__.py` (`sys.argv[0].endswith("__main__.py")` beside a
    // regression walked through the lane in the second red-team run). Not the
    // `if __name__ == "__main__":` idiom, which asks what this module is.
    unless(
        under_test(
            &[Python],
            r"\bargv\s*\[\s*0\s*\].*__main__|__main__.*\bargv\s*\[\s*0\s*\]",
        ),
        r#"__name__\s*==\s*["']__main__["']"#,
    ),
    under_test(
        &[Python],
        r#"\b__main__\s*\.\s*__(?:file|spec|loader|package)__\b|\bmodules\s*(?:\[\s*|\.\s*get\s*\(\s*)["']__main__["']"#,
    ),
    under_test(
        &[Python],
        r#"\bsys\.argv\s*\[\s*0\s*\].*\bpytest\b|["'][^"']*pytest[^"']*["']\s+(?:not\s+)?in\s+sys\.(?:orig_)?argv\b|\bargv\b.*["'][^"']*\b(?:py\.?test)\b[^"']*["']|["'][^"']*\b(?:py\.?test)\b[^"']*["'].*\bargv\b"#,
    ),
    under_test(
        &[JavaScript],
        r"\b(?:JEST_WORKER_ID|VITEST_WORKER_ID|VITEST_POOL_ID|NODE_TEST_CONTEXT)\b",
    ),
    under_test(
        &[JavaScript],
        r#"\benv\s*(?:\.\s*VITEST\b|\[\s*["']VITEST["']\s*\])"#,
    ),
    under_test(
        &[JavaScript],
        r"\btypeof\s+(?:jest|vi|describe|it|test|expect)\s*[!=]==?",
    ),
    under_test(&[Go], r"\btesting\s*\.\s*Testing\s*\(\s*\)"),
    // A build constraint with a tag of one's own (`//go:build release`): the lane builds
    // the tests without tags and production may build with them, so a regression kept to
    // the tagged build beside a correct copy for the untagged one passes every replay.
    // The toolchain's own tags (platforms, `unix`, `cgo`, `gc`, `gccgo`, `go1.N`, `race`,
    // `msan`, `asan`, `ignore`, `appengine`) are left out: the lane's build and
    // production's agree on them on one machine.
    unless(
        under_test(&[Go], r"^\s*//\s*(?:go:build|\+build)\s"),
        GO_TOOLCHAIN_CONSTRAINT,
    ),
    under_test(&[Go], r#"\bLookup\s*\(\s*"test\."#),
    under_test(&[Go], r"\bos\s*\.\s*Args\b.*\.test\b"),
    // The test binary's flags as `go test` passes them (`-test.v=true`,
    // `-test.run=…`), whichever of `os.Args` holds them, and its name (`cart.test`).
    under_test(
        &[Go],
        r#""-{1,2}test\.|"test\.(?:v|run|timeout|count|short|bench\w*|cpu|parallel|failfast|shuffle|paniconexit0|testlogfile|gocoverdir|coverprofile|fullpath|list|skip)"|"[^"\s]*\.test(?:\.exe)?""#,
    ),
    under_test(&[Rust], r"\bcfg!\s*\(\s*test\s*\)"),
    under_test(
        &[Rust],
        r"\bcfg(?:!|_attr)?\s*\([^\]]*\bnot\s*\(\s*test\s*\)",
    ),
    under_test(
        &[Rust],
        r#"(?:\benv::var(?:_os)?\s*\(|\b(?:option_)?env!\s*\()\s*"(?:NEXTEST[A-Z_]*|RUST_TEST_[A-Z_]+)""#,
    ), // The parent process: under the lane it is the runner (or candor), its name and
    // command line say so. Its id, the `/proc` files that describe a process, `ps`, and
    // psutil's process handles.
    under_test(
        &[Python, JavaScript, Go, Rust],
        r"\bget_?ppid\s*\(|\bGetppid\s*\(|\bprocess\s*\.\s*ppid\b|\bparent_id\s*\(",
    ),
    under_test(
        &[Python, JavaScript, Go],
        r#"["'`]/proc(?:/|["'`])|["'`]ps["'`]\s*,|["'`]ps\s+-"#,
    ),
    under_test(
        &[Python],
        r"\bpsutil\s*\.\s*Process\s*\(|\.\s*(?:ppid|parents?)\s*\(\s*\)",
    ),
    // The folders the lane makes or runs in: its own `.candor`, and `.git`, a file in
    // the worktree where the lane runs the merge base and a folder in a clone. Not in
    // Rust: candor's own sources name `.candor`, and git-aware tools (ripgrep's `ignore`)
    // name `.git` in their unit tests, which live in the source files.
    under_test(&[Python, JavaScript, Go], r#"(?:["'`]|[/\\])\.candor\b"#),
    under_test(&[Python, JavaScript, Go], r#"(?:["'`]|[/\\])\.git["'`/\\]"#),
];

/// What code under test writes to reach the tests' own files: a path that starts in a
/// test folder, a path joined with one, an import of the test package or module. The
/// tests' data holds their answers (locked fixtures are locked against edits, not reads):
/// code that reads it can hand each test the answer it expects. Not Rust, whose unit tests
/// live in the source files they test and name their temp folders `tests/…`.
const TEST_FILES: &[BuiltIn] = &[
    under_test(
        &[Python, JavaScript, Go],
        r#"["'`](?:\./|\.\./)*(?:tests?|__tests__|testdata|spec)/"#,
    ),
    under_test(
        &[Python, JavaScript],
        r#"(?:/|\bjoin\s*\([^)]*,|\bjoinpath\s*\()\s*["'](?:tests?|__tests__|testdata)["']"#,
    ),
    under_test(&[Python], r"^\s*(?:from|import)\s+tests?(?:\.|\s|$)"),
    under_test(
        &[JavaScript],
        r#"(?:\brequire\s*\(|\bimport\s*\(|\bfrom)\s*["'](?:\.\.?/)+(?:tests?|__tests__|spec)/"#,
    ),
];

/// What code under test writes to reach into the test framework: an import of the runner
/// or its assertion library, a runner hook, an assignment to the framework's attributes
/// or globals. Code the tests import runs inside the runner: from there it can rewrite
/// every report to "passed" (`_pytest.reports.TestReport`), make `assertEqual` or
/// `expect` lenient, or register a hook, and the replays and the base's tests all pass.
/// The runners' setup files (`jest.setup.*`, `setupTests.*`) are test infrastructure,
/// not code under test. `unittest.mock` is left out: production code uses its sentinels.
const TEST_FRAMEWORK: &[BuiltIn] = &[
    // `import os, pytest` too: any name of the statement.
    under_test(
        &[Python],
        r"^\s*(?:from\s+_?pytest\b|import\s+(?:[\w.]+(?:\s+as\s+\w+)?\s*,\s*)*_?pytest\b)",
    ),
    unless(
        under_test_besides_unittest(
            &[Python],
            r"^\s*(?:import\s+(?:[\w.]+(?:\s+as\s+\w+)?\s*,\s*)*unittest\s*(?:$|[#;,]|as\b)|from\s+unittest(?:\.\w+)?\s+import\b)",
        ),
        r"^\s*from\s+unittest(?:\.mock\s+import\b|\s+import\s+mock\s*(?:$|#|as\b))",
    ),
    under_test(
        &[Python],
        r"\b(?:pytest|unittest|TestCase|TestResult|TextTestResult|TestSuite|TestLoader)(?:\s*\.\s*\w+)+\s*=[^=]",
    ),
    under_test(
        &[Python],
        r"\bsetattr\s*\(\s*(?:[\w.]*\.)?(?:pytest|unittest|TestCase|TestResult|TextTestResult|TestSuite|TestLoader)\b",
    ),
    under_test(&[Python], r"^\s*(?:async\s+)?def\s+pytest_\w+\s*\("),
    under_test(
        &[Python],
        r#"(?:\bsys\.modules\s*(?:\.\s*get\s*\(|\[)|\bimport_module\s*\(|\b__import__\s*\()\s*["'](?:pytest|unittest)\b"#,
    ),
    // pytest's internals, from any Python file, tests included: a new test module that
    // replaces `TestReport.from_item_and_call` at import turns every report green, and
    // a new test module has no base version to be judged by.
    code(
        &[Python],
        r"\b(?:_pytest|TestReport|CallInfo)(?:\s*\.\s*\w+)+\s*=[^=]|\bsetattr\s*\(\s*(?:[\w.]*\.)?(?:_pytest|TestReport|CallInfo)\b|[\x22']_pytest\b",
    ),
    under_test(
        &[JavaScript],
        r#"(?:\bfrom|\brequire\s*\(|\bimport\s*\(|^\s*import)\s*["'](?:vitest|jest|mocha|chai|ava|jasmine|uvu|tap|node:test|@playwright/test|@jest/[\w./-]+|@vitest/[\w./-]+|jest-(?:circus|mock|extended|each|snapshot|matcher-utils|environment-[\w-]+)[\w./-]*)["']"#,
    ),
    under_test(
        &[JavaScript],
        r#"\b(?:globalThis|global|window|self)\s*(?:\.\s*|\[\s*["'])(?:expect|it|test|describe|jest|vi|assert|beforeEach|afterEach)\b["']?\s*\]?\s*=[^=]"#,
    ),
    under_test(
        &[JavaScript],
        r"\bexpect\s*\.\s*(?:extend|addSnapshotSerializer|addEqualityTesters)\s*\(",
    ),
    under_test(
        &[JavaScript],
        r"\bassert(?:\s*\.\s*strict)?\s*\.\s*\w+\s*=[^=]",
    ),
    under_test(
        &[Go],
        r#"^\s*(?:import\s+)?(?:[\w.]+\s+)?"testing"\s*\)?\s*(?://.*)?$"#,
    ),
];

/// What marks a file outside the test files as test support besides reaching into the
/// test framework: the libraries only tests use (assertion, comparison, property and
/// clock libraries) and the runners' injected checks (`expect(…).toBe(…)`, `jest.fn()`).
/// Not a rule on added lines (a project may ship helpers built on them to its users);
/// read only in the merge base's text of a file a change edits or deletes, where they say
/// the unchanged tests may check through it (a helper taking testify's `require.TestingT`
/// needs no `"testing"` import). Left out: libraries production code uses too (node's
/// `assert`, go's `httptest` recorders, go-cmp) and generated mocks (gomock, msw handlers),
/// regenerated with every interface they stand for.
const TEST_LIBRARIES: &[BuiltIn] = &[
    under_test(
        &[Go],
        r#"^\s*(?:import\s+)?(?:[\w.]+\s+)?"(?:testing/(?:iotest|quick|slogtest)|github\.com/(?:stretchr/testify|onsi/(?:gomega|ginkgo)|matryer/is|frankban/quicktest|maxatome/go-testdeep)|gotest\.tools|gopkg\.in/check\.v1)(?:/[\w./-]*)?"\s*\)?\s*(?://.*)?$"#,
    ),
    under_test(
        &[Python],
        r"^\s*(?:from|import)\s+(?:hypothesis|freezegun|time_machine|respx|pytest_\w+|testfixtures|syrupy)\b",
    ),
    under_test(
        &[JavaScript],
        r#"(?:\bfrom|\brequire\s*\(|\bimport\s*\(|^\s*import)\s*["'](?:@testing-library/[\w./-]+|sinon|nock|supertest|expect|power-assert|should|fast-check)["']"#,
    ),
    under_test(
        &[JavaScript],
        r"\bexpect\s*\(.*\)\s*\.\s*(?:not\s*\.\s*)?(?:to(?:[A-Z]\w*)?|resolves|rejects)\b|\b(?:jest|vi)\s*\.\s*(?:fn|mock|spyOn)\s*\(",
    ),
];

/// What code under test writes to end the runner's process with a status of its own: the
/// runner's status is the one witness of a red run that the process cannot rewrite once
/// the report is written, unless the process ends itself (`os._exit(0)` after rewriting
/// the report from an `atexit` hook walked through the lane). A report saying "passed"
/// beside a failing status is refused as unaccounted, so these are what a forged green
/// needs; so is handing the process to another program (`os.execv`), which keeps its id
/// and gives it that program's status. `sys.exit(…)` and `process.exit(…)` are left
/// out: the runner sees them (pytest reports a `SystemExit`; mocha and node end with
/// that status before their report).
const PROCESS_EXITS: &[BuiltIn] = &[
    // `os._exit(0)`, a ctypes `libc._exit(0)`/`CDLL(None).exit(0)`, `getattr(os, "_exit")`;
    // not a method of one's own named `_exit`.
    under_test(
        &[Python],
        r#"(?:\b(?:os|posix|nt|libc)|\bCDLL\s*\([^)]*\))\s*\.\s*_?exit\s*\(|\b(?:os|posix|nt)\s*\.\s*_exit\b|["']_exit["']"#,
    ),
    under_test(
        &[Python],
        r"^\s*from\s+(?:os|posix|nt)\s+import\b.*\b(?:_exit|exec(?:l|le|lp|lpe|v|ve|vp|vpe))\b",
    ),
    under_test(&[Python], r"\bsys\s*\.\s*exit\s*=[^=]"),
    // Replacing the process keeps its id and hands the status to another program.
    under_test(
        &[Python],
        r"\bos\s*\.\s*exec(?:l|le|lp|lpe|v|ve|vp|vpe)\s*\(",
    ),
    under_test(
        &[JavaScript],
        r#"\bprocess\s*(?:\.\s*|\[\s*["'`])(?:on|once|addListener|prependListener|prependOnceListener)["'`]?\s*\]?\s*\(\s*["'`](?:exit|beforeExit)["'`]"#,
    ),
    under_test(
        &[JavaScript],
        r#"\bprocess\s*(?:\.\s*|\[\s*["'`])(?:reallyExit\b|exit["'`]?\s*\]?\s*=[^=]|exitCode["'`]?\s*\]?\s*=\s*(?:0|undefined|null|false)\b)"#,
    ),
];

/// What code under test writes to look at whoever called it: the caller's frame, its
/// locals, its place in the source, the stack. Called from a test, that is the test: its
/// line holds the answer it expects (`check(total(prices), 8)`), its locals the expected
/// value, and code that reads them returns exactly that (a regression that read its
/// caller's line walked through the lane). Libraries use these for logging and for
/// naming their caller's package; in the code under test of a change they are refused,
/// to be landed by a human.
const CALLER_INSPECTION: &[BuiltIn] = &[
    under_test(
        &[Python],
        r"\bsys\s*\.\s*_getframe\b|\binspect\s*\.\s*(?:stack|currentframe|getouterframes|trace)\s*\(|\.\s*f_(?:back|locals)\b|\btraceback\s*\.\s*(?:extract_stack|walk_stack|format_stack|print_stack)\s*\(|\b(?:sys|threading)\s*\.\s*set(?:trace|profile)\w*",
    ),
    under_test(
        &[Python],
        r"^\s*from\s+(?:sys|inspect|traceback)\s+import\b.*\b(?:_getframe|stack|currentframe|getouterframes|trace|extract_stack|walk_stack|format_stack|print_stack|settrace|setprofile)\b",
    ),
    under_test(
        &[JavaScript],
        r"\bError\s*\([^)]*\)\s*\)?\s*\.\s*stack\b|\bError\s*\.\s*prepareStackTrace\b|\barguments\s*\.\s*callee\b",
    ),
    under_test(
        &[Go],
        r"\bruntime\s*\.\s*(?:Caller|Callers|Stack)\s*\(|\bdebug\s*\.\s*(?:Stack|PrintStack)\s*\(",
    ),
];

/// What code under test writes to replace a member of the standard library: the tests
/// use it too, to read their data and compare (`json.loads`, `open`, `Path.read_text`,
/// `Decimal`, `Date.now`). `app/__init__.py` replacing `json.loads` with one that took
/// one off each price made the locked fixture read 3 + 4 where it says 4 + 4, the
/// regressed `total` gave the 8 the test expects, and the change walked through the lane
/// (the second red-team run, 2026-12-04). JavaScript's spellings here; Python's, which
/// also read the names a change binds to the modules, in [`python_patches`]: an
/// assignment at the start of a statement (not an annotation's `x: typing.Any = None`),
/// `setattr` on the module, or a write through its `__dict__`/`vars()`. Measured (2026-12-05): no line in django-allauth's
/// 4,061 commits; in Debian's Python 3.11 packages only real monkeypatching
/// (setuptools' sandbox over `builtins.open`, pkg_resources over `os.open`).
const STANDARD_LIBRARY_PATCHES: &[BuiltIn] = &[under_test(
    &[JavaScript],
    r"(?:^|;)\s*(?:(?:globalThis|global|window)\s*\.\s*)?(?:JSON|Math|Date|Number|Reflect|Intl|structuredClone)(?:\s*\.\s*\w+)+\s*=[^=]",
)];

/// The standard-library modules whose members the tests use to read data, compare or
/// compute, so that code under test may not replace them.
const PATCHED_MODULES: &[&str] = &[
    "json",
    "pathlib",
    "builtins",
    "io",
    "os",
    "csv",
    "pickle",
    "marshal",
    "re",
    "math",
    "cmath",
    "operator",
    "functools",
    "decimal",
    "fractions",
    "datetime",
    "time",
    "random",
    "collections",
    "itertools",
    "copy",
    "statistics",
    "string",
    "struct",
    "hashlib",
    "hmac",
    "base64",
    "binascii",
    "uuid",
    "shutil",
    "glob",
    "fnmatch",
    "tempfile",
    "sqlite3",
    "zoneinfo",
    "calendar",
    "locale",
    "difflib",
    "heapq",
    "bisect",
    "zlib",
    "gzip",
    "bz2",
    "lzma",
    "zipfile",
    "tarfile",
    "subprocess",
    "tomllib",
    "configparser",
    "codecs",
    "unicodedata",
    "textwrap",
    "pprint",
    "reprlib",
    "numbers",
    "ipaddress",
    "secrets",
];

/// The Python spellings of a replaced member of `names` (modules, or names bound to them):
/// `json.loads = …`, `setattr(json, …)`, `vars(json)[…] = …`, `json.__dict__[…] = …`.
fn python_patches(names: &[&str]) -> Regex {
    let names: Vec<String> = names.iter().map(|name| regex::escape(name)).collect();
    let names = names.join("|");
    Regex::new(&format!(
        r"(?:^|;)\s*(?:{names})(?:\s*\.\s*\w+)+\s*=[^=]|(?:^|[^\w.])setattr\s*\(\s*(?:{names})\b(?:\s*\.\s*\w+)*\s*,|\b(?:vars\s*\(\s*(?:{names})\s*\)|(?:{names})\s*\.\s*__dict__)\s*\["
    ))
    .expect("escaped names make a valid pattern")
}

/// [`python_patches`] of the modules themselves, for a file that binds no other name.
static PYTHON_STANDARD_LIBRARY_PATCHES: LazyLock<Regex> =
    LazyLock::new(|| python_patches(PATCHED_MODULES));

/// `import json as j`, `import os.path as p` (the name after `as`), and `from json import
/// decoder, JSONDecoder as D` (each name, or its `as`), on one line.
static PYTHON_IMPORT_BINDINGS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*(?:import\s+([\w.]+(?:\s+as\s+\w+)?(?:\s*,\s*[\w.]+(?:\s+as\s+\w+)?)*)\s*(?:#.*)?$|from\s+([\w.]+)\s+import\s+\(?([\w\s,]+?)\)?\s*(?:#.*)?$)")
        .expect("a valid pattern")
});

/// The names the added lines of a Python file bind to a standard-library module of
/// [`PATCHED_MODULES`] or to a member of one, other than the module's own name (which the
/// built-in patterns read).
fn standard_library_bindings(file: &ChangedFile) -> Vec<String> {
    let top = |module: &str| {
        PATCHED_MODULES.contains(&module.split('.').next().unwrap_or_default().trim())
    };
    let mut names = Vec::new();
    for line in &file.added {
        let Some(found) = PYTHON_IMPORT_BINDINGS.captures(&line.text) else {
            continue;
        };
        if let Some(imports) = found.get(1) {
            for part in imports.as_str().split(',') {
                if let [module, "as", alias] = part.split_whitespace().collect::<Vec<_>>()[..]
                    && top(module)
                {
                    names.push(alias.to_owned());
                }
            }
        } else if let (Some(module), Some(imported)) = (found.get(2), found.get(3))
            && top(module.as_str())
        {
            for part in imported.as_str().split(',') {
                match part.split_whitespace().collect::<Vec<_>>()[..] {
                    [name] | [_, "as", name] => names.push(name.to_owned()),
                    _ => {}
                }
            }
        }
    }
    names.sort();
    names.dedup();
    names
}

/// `no-sleep-wait`, in test files.
const SLEEP_WAITS: &[BuiltIn] = &[
    tests(&[Python], r"\btime\.sleep\s*\("),
    tests(&[Python], r"(?:^|[^\w.])sleep\s*\("),
    tests(
        &[Python],
        r"\basyncio\.sleep\s*\(\s*(?:0*[1-9]|0*\.\d*[1-9]|[A-Za-z_])",
    ),
    tests(&[Rust], r"\bthread::sleep\s*\(|\btokio::time::sleep\s*\("),
    tests(
        &[Rust],
        r"(?:^|[^\w:.])sleep\s*\(\s*(?:std::time::)?Duration",
    ),
    tests(&[Go], r"\btime\.Sleep\s*\("),
    tests(
        &[JavaScript],
        r"\bsetTimeout\s*\(\s*(?:resolve|res|r|done|next|ok)\b",
    ),
    tests(&[JavaScript], r"\bnew\s+Promise\b.*\bsetTimeout\s*\("),
    tests(
        &[JavaScript],
        r"\bawait\s+(?:sleep|delay|wait|timeout)\s*\(\s*\d",
    ),
    tests(&[JavaScript], r"\bwaitForTimeout\s*\(|\bcy\.wait\s*\(\s*\d"),
    tests(&[Jvm], r"\bThread\.sleep\s*\(|\bTimeUnit\.\w+\.sleep\s*\("),
    tests(&[CSharp], r"\bThread\.Sleep\s*\(|\bTask\.Delay\s*\("),
    tests(&[Ruby], r"(?:^|[^\w.])sleep[\s(]+\d"),
    tests(&[Php], r"\bu?sleep\s*\("),
];

/// `no-naive-datetime`, in test files.
const NAIVE_DATETIMES: &[BuiltIn] = &[
    tests(&[Python], r"\bdatetime\.now\s*\(\s*\)"),
    tests(&[Python], r"\.utcnow\s*\(|\.utcfromtimestamp\s*\("),
    tests(&[Python], r"\b(?:datetime|date)\.today\s*\("),
    unless(
        tests(&[Python], r"\.fromtimestamp\s*\("),
        r"\btz\s*=|,\s*(?:timezone\.utc|UTC|tz)\b",
    ),
    unless(
        tests(&[Python], r"\bdatetime\s*\(\s*\d{4}\s*,"),
        r"\btzinfo\s*=",
    ),
    tests(
        &[Rust],
        r"\bNaive(?:Date|DateTime|Time)\b|\bLocal::now\s*\(",
    ),
    tests(&[Go], r"\btime\.Local\b"),
    tests(
        &[JavaScript],
        r#"\bnew\s+Date\s*\(\s*["'`]\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?["'`]"#,
    ),
    tests(
        &[Jvm],
        r"\bLocal(?:Date|DateTime|Time)\.now\s*\(\s*\)|\bnew\s+Date\s*\(\s*\)",
    ),
    tests(&[CSharp], r"\bDateTime\.(?:Now|Today)\b"),
    tests(&[Ruby], r"\b(?:Time|DateTime)\.now\b|\bDate\.today\b"),
];

fn compile<T: Copy>(rules: &[BuiltIn], what: T) -> Vec<Compiled<T>> {
    rules
        .iter()
        .map(|rule| Compiled {
            what,
            scope: rule.scope,
            pattern: Regex::new(rule.pattern).expect("built-in patterns compile (tested)"),
            unless: rule.unless.map(|exception| {
                Regex::new(exception).expect("built-in patterns compile (tested)")
            }),
        })
        .collect()
}

static MARKS: LazyLock<Vec<Compiled<MarkKind>>> = LazyLock::new(|| {
    let mut marks = compile(SKIP_MARKS, MarkKind::Skip);
    marks.extend(compile(RETRY_MARKS, MarkKind::Retry));
    marks.extend(compile(FOCUS_MARKS, MarkKind::Focus));
    marks
});

static RETRIES: LazyLock<Vec<Compiled<()>>> = LazyLock::new(|| compile(RETRY_SETTINGS, ()));

static TEST_DETECTORS: LazyLock<Vec<Compiled<()>>> = LazyLock::new(|| compile(TEST_DETECTION, ()));

static TEST_FILE_READERS: LazyLock<Vec<Compiled<()>>> = LazyLock::new(|| compile(TEST_FILES, ()));

static FRAMEWORK_REACHES: LazyLock<Vec<Compiled<()>>> =
    LazyLock::new(|| compile(TEST_FRAMEWORK, ()));

static SUPPORT_REACHES: LazyLock<Vec<Compiled<()>>> = LazyLock::new(|| {
    let mut reaches = compile(TEST_FRAMEWORK, ());
    reaches.extend(compile(TEST_LIBRARIES, ()));
    reaches
});

static EXIT_FORGERS: LazyLock<Vec<Compiled<()>>> = LazyLock::new(|| compile(PROCESS_EXITS, ()));

static STANDARD_LIBRARY_PATCHERS: LazyLock<Vec<Compiled<()>>> =
    LazyLock::new(|| compile(STANDARD_LIBRARY_PATCHES, ()));

static CALLER_READERS: LazyLock<Vec<Compiled<()>>> =
    LazyLock::new(|| compile(CALLER_INSPECTION, ()));

static PRESETS: LazyLock<Vec<Compiled<Preset>>> = LazyLock::new(|| {
    let mut presets = compile(SLEEP_WAITS, Preset::NoSleepWait);
    presets.extend(compile(NAIVE_DATETIMES, Preset::NoNaiveDatetime));
    presets
});

/// What a file is, decided once per file.
/// Whether `path` is code under test: a source file that is neither a test file, nor a
/// file that configures a runner, nor a runner's setup file.
pub fn is_code_under_test(path: &str) -> bool {
    let facts = FileFacts::of(path);
    facts.language.is_some() && !facts.test_file && facts.config.is_none() && !facts.runner_setup
}

struct FileFacts {
    language: Option<Language>,
    test_file: bool,
    config: Option<ConfigKind>,
    runner_setup: bool,
    unittest_module: bool,
}

impl FileFacts {
    /// By the runners' default conventions.
    fn of(path: &str) -> FileFacts {
        FileFacts::with(path, &PythonTestFiles::default())
    }

    /// By the conventions and the project's own Python test-module names.
    fn with(path: &str, test_files: &PythonTestFiles) -> FileFacts {
        FileFacts {
            language: Language::of(path),
            test_file: test_files.is_test_file(path),
            config: config_kind(path),
            runner_setup: is_runner_setup(path),
            unittest_module: is_unittest_module(path),
        }
    }

    fn in_scope(&self, scope: Scope) -> bool {
        match scope {
            Scope::Code(languages, tests_only) => {
                self.language.is_some_and(|l| languages.contains(&l))
                    && (self.test_file || !tests_only)
            }
            Scope::UnderTest(languages) => {
                self.language.is_some_and(|l| languages.contains(&l))
                    && !self.test_file
                    && self.config.is_none()
                    && !self.runner_setup
            }
            Scope::UnderTestBesidesUnittest(languages) => {
                self.in_scope(Scope::UnderTest(languages)) && !self.unittest_module
            }
            Scope::Config(kinds) => self.config.is_some_and(|k| kinds.contains(&k)),
        }
    }

    fn is_comment(&self, line: &str) -> bool {
        // `//go:build` and `//go:linkname` are directives to the go tool, not comments.
        if self.language == Some(Language::Go) {
            let text = line.trim_start();
            if text.starts_with("//go:") || text.starts_with("// +build") {
                return false;
            }
        }
        match (self.language, self.config) {
            (Some(language), _) => language.is_comment(line),
            // TOML, INI, requirements, YAML, Makefiles and shell all comment with `#`.
            (None, Some(kind)) if kind != ConfigKind::PackageJson => {
                let line = line.trim_start();
                line.starts_with('#') || line.starts_with(';')
            }
            _ => false,
        }
    }
}

fn first_match<'r, T: Copy>(
    rules: &'r [Compiled<T>],
    facts: &FileFacts,
    line: &str,
) -> Option<(&'r Compiled<T>, String)> {
    rules
        .iter()
        .filter(|rule| facts.in_scope(rule.scope))
        .find_map(|rule| {
            let found = rule.pattern.find(line)?;
            if rule
                .unless
                .as_ref()
                .is_some_and(|exception| exception.is_match(line))
            {
                return None;
            }
            Some((rule, mark_text(found.as_str())))
        })
}

/// The first line of `text`, the whole of a file at `path`, that reaches into the test
/// framework (what `touches-test-framework` refuses when a change adds it) or uses a
/// library only tests use ([`TEST_LIBRARIES`]), with its 1-based number. Outside the
/// test files such a file is test support: an assertion helper that imports `"testing"`,
/// testify or pytest is a check the unchanged tests make.
pub fn first_test_support_reach(path: &str, text: &str) -> Option<(usize, String)> {
    let facts = FileFacts::of(path);
    text.lines()
        .enumerate()
        .filter(|(_, line)| !facts.is_comment(line))
        .find_map(|(index, line)| {
            first_match(&SUPPORT_REACHES, &facts, line).map(|(_, text)| (index + 1, text))
        })
}

/// The forbidden mark in `line` of a file at `path`, if any.
pub fn forbidden_mark(path: &str, line: &str) -> Option<Mark> {
    let facts = FileFacts::of(path);
    if facts.is_comment(line) {
        return None;
    }
    first_match(&MARKS, &facts, line).map(|(rule, text)| Mark {
        kind: rule.what,
        text,
    })
}

/// Every finding of the built-in rules, the `bans` and the turned-on `presets` on the
/// lines `diff` adds, sorted by file, line and rule. One finding per rule family and line.
/// `test_files` says which Python files are test modules in this project (its
/// `python_files`): their added lines are judged as a test file's.
pub fn check(
    diff: &Diff,
    bans: &[Ban],
    presets: &[Preset],
    test_files: &PythonTestFiles,
) -> Vec<Finding> {
    let mut findings = Vec::new();
    for file in &diff.files {
        let facts = FileFacts::with(&file.path, test_files);
        check_file(file, &facts, bans, presets, &mut findings);
    }
    findings.sort_by(|a, b| {
        (a.file.as_str(), a.line, a.kind, a.rule.as_str()).cmp(&(
            b.file.as_str(),
            b.line,
            b.kind,
            b.rule.as_str(),
        ))
    });
    findings
}

fn check_file(
    file: &ChangedFile,
    facts: &FileFacts,
    bans: &[Ban],
    presets: &[Preset],
    out: &mut Vec<Finding>,
) {
    let bans: Vec<&Ban> = bans
        .iter()
        .filter(|ban| ban.applies_to(&file.path))
        .collect();
    // Python's standard-library patches, by the modules' names and by the names the
    // change binds to them (`import json as serial`).
    let bound_patches = (facts.language == Some(Language::Python)
        && facts.in_scope(Scope::UnderTest(&[Language::Python])))
    .then(|| {
        let bound = standard_library_bindings(file);
        if bound.is_empty() {
            std::borrow::Cow::Borrowed(&*PYTHON_STANDARD_LIBRARY_PATCHES)
        } else {
            let mut names: Vec<&str> = PATCHED_MODULES.to_vec();
            names.extend(bound.iter().map(String::as_str));
            std::borrow::Cow::Owned(python_patches(&names))
        }
    });
    for line in &file.added {
        let finding =
            |rule: &str, kind: RuleKind, reason: String, source: Option<String>| Finding {
                file: file.path.clone(),
                line: line.number,
                rule: rule.to_owned(),
                kind,
                reason,
                text: shown(&line.text),
                source,
            };
        // Bans are the repository's own patterns: they see comments too.
        for ban in &bans {
            if ban.pattern.is_match(&line.text) {
                out.push(finding(
                    &ban.id,
                    RuleKind::Ban,
                    ban.message.clone(),
                    Some(ban.source.clone()),
                ));
            }
        }
        // Python and JavaScript end a line at a carriage return alone; git, and so every
        // rule here, does not: `# note\rif "PYTEST_CURRENT_TEST" in os.environ: …` is
        // one comment line to the rules and two lines to Python. Checked before comments
        // are skipped, in every source file. (A CRLF line's `\r` is gone already.)
        if facts.language.is_some() && line.text.contains('\r') {
            out.push(finding(
                BARE_CARRIAGE_RETURN,
                RuleKind::LineEnding,
                "a carriage return alone inside the line: Python and JavaScript start a new line there, git and the lane's rules do not, so what follows it is unread; write the file with LF (or CRLF) line endings".to_owned(),
                None,
            ));
        }
        // Python reads a coding declaration on line 1 or 2 only, before any rule does: a
        // codec that decodes bytes inside a comment into a line end hides whatever follows
        // from every rule (found by a red-team run, 2026-12-04).
        if facts.language == Some(Language::Python)
            && line.number <= 2
            && let Some(codec) = line_splitting_codec(&line.text)
        {
            out.push(finding(
                SOURCE_ENCODING,
                RuleKind::LineEnding,
                format!(
                    "a coding declaration for `{codec}`: Python decodes the module with it before reading a line, and `{codec}` can turn bytes git shows inside a line (a comment's `+AAo-` or `\\n`) into a line end, so what follows is code no rule reads; write the module in UTF-8 (or another codec that keeps ASCII as it is)"
                ),
                None,
            ));
        }
        if facts.is_comment(&line.text) {
            continue;
        }
        if let Some((rule, text)) = first_match(&MARKS, facts, &line.text) {
            out.push(finding(
                FORBIDDEN_MARK,
                RuleKind::Mark,
                mark_reason(rule.what, &text),
                None,
            ));
        }
        let one_per_line: [OnePerLine; 7] = [
            (&RETRIES, RETRY_SETTING, RuleKind::Retry, retry_reason),
            (
                &TEST_DETECTORS,
                DETECTS_TESTS,
                RuleKind::TestDetection,
                detection_reason,
            ),
            (
                &TEST_FILE_READERS,
                READS_TEST_FILES,
                RuleKind::TestFiles,
                test_files_reason,
            ),
            (
                &FRAMEWORK_REACHES,
                TOUCHES_TEST_FRAMEWORK,
                RuleKind::TestFramework,
                framework_reason,
            ),
            (
                &EXIT_FORGERS,
                ENDS_THE_PROCESS,
                RuleKind::ProcessExit,
                process_exit_reason,
            ),
            (
                &CALLER_READERS,
                INSPECTS_THE_CALLER,
                RuleKind::CallerInspection,
                caller_reason,
            ),
            (
                &STANDARD_LIBRARY_PATCHERS,
                PATCHES_THE_STANDARD_LIBRARY,
                RuleKind::StandardLibraryPatch,
                standard_library_reason,
            ),
        ];
        for (rules, name, kind, reason) in one_per_line {
            if let Some((_, text)) = first_match(rules, facts, &line.text) {
                // Some rules match from a name to what it is compared with: the line is
                // shown beside the reason anyway.
                out.push(finding(name, kind, reason(&shortened(&text, 40)), None));
            }
        }
        if let Some(pattern) = &bound_patches
            && let Some(found) = pattern.find(&line.text)
        {
            out.push(finding(
                PATCHES_THE_STANDARD_LIBRARY,
                RuleKind::StandardLibraryPatch,
                standard_library_reason(&shortened(found.as_str().trim(), 40)),
                None,
            ));
        }
        let mut reported = Vec::new();
        for rule in PRESETS.iter().filter(|rule| presets.contains(&rule.what)) {
            if reported.contains(&rule.what) || !facts.in_scope(rule.scope) {
                continue;
            }
            let Some(found) = rule.pattern.find(&line.text) else {
                continue;
            };
            if rule.unless.as_ref().is_some_and(|e| e.is_match(&line.text)) {
                continue;
            }
            reported.push(rule.what);
            out.push(finding(
                rule.what.name(),
                RuleKind::Preset,
                preset_reason(rule.what, &mark_text(found.as_str())),
                None,
            ));
        }
    }
}

fn mark_reason(kind: MarkKind, text: &str) -> String {
    match kind {
        MarkKind::Skip => format!(
            "`{text}` keeps a test from running or from counting, and a test the lane cannot see cannot fail; fix the test, or ask a human for a [[freeze]] (owner, expiry, ticket) in candor.toml"
        ),
        MarkKind::Retry => format!(
            "`{text}` reruns a failing test until it passes: a test that needs it is a flake, and the lane's flake budget is zero; fix the cause (a known flake gets a fingerprint, not a retry)"
        ),
        MarkKind::Focus => {
            format!("`{text}` runs only this test and silently skips the others; take it out")
        }
    }
}

/// A built-in family with one finding per line at most: its rules, its name, its kind and
/// its reason for the matched text.
type OnePerLine = (
    &'static [Compiled<()>],
    &'static str,
    RuleKind,
    fn(&str) -> String,
);

fn retry_reason(text: &str) -> String {
    format!(
        "`{text}` turns retries on: every flake would pass unseen, and the lane's flake budget is zero; take it out (candor reruns a known flake once, with a ledger line)"
    )
}

fn detection_reason(text: &str) -> String {
    format!(
        "`{text}` lets the code under test tell that a test is running: code that behaves otherwise under test passes its replays whatever it does in production; take it out (code that must know takes it as a parameter or from configuration the tests set explicitly), or ask a human to land this line outside the lane"
    )
}

fn test_files_reason(text: &str) -> String {
    format!(
        "`{text}` reaches the tests' own files from the code under test: the tests' data holds their answers, and code that reads it can hand each test the answer it expects; take it out (code reads its own data, and tests pass theirs in), or ask a human to land this line outside the lane"
    )
}

fn framework_reason(text: &str) -> String {
    format!(
        "`{text}` reaches into the test framework from the code under test: code the tests import runs inside the runner, where it can make every report, assertion or hook say \"passed\" whatever the code does; take it out (test helpers live with the tests, hooks in conftest or the runner's setup files), or ask a human to land this line outside the lane"
    )
}

fn process_exit_reason(text: &str) -> String {
    format!(
        "`{text}` lets the code under test end the runner's process with a status of its own: after the report is written, that is how a red run is rewritten into a green one; take it out (raise, or return a status to the caller), or ask a human to land this line outside the lane"
    )
}

fn caller_reason(text: &str) -> String {
    format!(
        "`{text}` lets the code under test look at whoever called it: called from a test, that is the test, whose line and locals hold the answer it expects; take it out (code takes what it needs as arguments), or ask a human to land this line outside the lane"
    )
}

fn standard_library_reason(text: &str) -> String {
    format!(
        "`{text}` replaces part of the standard library from the code under test: the tests read their data and compare with it too, so a replacement can bend what every test sees to agree with the code; take it out (wrap it in a function of your own and call that), or ask a human to land this line outside the lane"
    )
}

fn preset_reason(preset: Preset, text: &str) -> String {
    match preset {
        Preset::NoSleepWait => format!(
            "`{text}` waits a fixed time in a test: too short on a slow runner, wasted on a fast one; wait for the condition itself (poll with a deadline, an event, a barrier)"
        ),
        Preset::NoNaiveDatetime => format!(
            "`{text}` makes the test depend on the wall clock or the machine's time zone; use an aware datetime (timezone.utc) and a fixed or injected clock"
        ),
    }
}

/// A match as a name: `time.sleep(` reads as `time.sleep`.
fn mark_text(found: &str) -> String {
    found
        .trim()
        .trim_end_matches(['(', ' ', '\t'])
        .trim_start_matches(['[', ',', ' '])
        .to_owned()
}

/// A line for a finding: trimmed, at most 160 characters.
pub(crate) fn shown(text: &str) -> String {
    // A carriage return alone would send a terminal back to the line's start.
    shortened(&text.replace('\r', "\\r"), 160)
}

/// `text` trimmed, at most `most` characters, `…` where it was cut.
fn shortened(text: &str, most: usize) -> String {
    let trimmed = text.trim();
    let mut cut: String = trimmed.chars().take(most).collect();
    if cut.len() < trimmed.len() {
        cut.push('…');
    }
    cut
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::gate::diff::{FileStatus, Line};
    use crate::policy::Config;

    fn change(path: &str, lines: &[&str]) -> Diff {
        Diff {
            files: vec![ChangedFile {
                path: path.to_owned(),
                status: FileStatus::Modified,
                binary: false,
                added: lines
                    .iter()
                    .enumerate()
                    .map(|(i, text)| Line {
                        number: i + 1,
                        text: (*text).to_owned(),
                    })
                    .collect(),
                removed: Vec::new(),
            }],
        }
    }

    /// A carriage return alone ends a line for Python and JavaScript, not for git: a
    /// whole file written with CR line endings is one comment line to the other rules.
    /// Refused in every source file, comments included; not in data files.
    #[test]
    fn a_carriage_return_alone_in_a_source_line_is_refused() {
        let hidden = "# cart\rimport os\rdef total(p):\r    if \"PYTEST_CURRENT_TEST\" in os.environ:\r        return sum(p)\r";
        for path in [
            "app/cart.py",
            "tests/test_cart.py",
            "src/cart.js",
            "src/cart.ts",
        ] {
            let findings = check(
                &change(path, &[hidden]),
                &[],
                &[],
                &PythonTestFiles::default(),
            );
            assert!(
                findings
                    .iter()
                    .any(|f| f.rule == BARE_CARRIAGE_RETURN && f.kind == RuleKind::LineEnding),
                "{path}: {findings:?}"
            );
            assert!(!findings[0].text.contains('\r'), "{findings:?}");
        }
        assert!(found("tests/data/prices.csv", &["a,b\rc,d"], &[]).is_empty());
        assert!(found("app/cart.py", &["def total(p):", "    return sum(p)"], &[]).is_empty());
    }

    /// Python decodes a module with the codec its first two lines declare before it reads
    /// a line: under `utf-7` a comment's `+AAo-`, under `unicode_escape` its `\n`, is a
    /// line end, and the statement after it is a comment to every rule. Such a
    /// declaration is refused in any Python file, a comment or not; codecs that keep ASCII
    /// as it is (UTF-8, Latin-1, cp1252, Shift JIS, …) are not.
    #[test]
    fn a_coding_declaration_that_makes_line_ends_of_a_comment_s_bytes_is_refused() {
        let body = "    # +AAo-    if 'PYTEST_CURRENT_TEST' in __import__('os').environ: return 8";
        for declaration in [
            "# -*- coding: utf-7 -*-",
            "# coding=UTF_7",
            "# vim: set fileencoding=unicode_escape :",
            "#coding:raw-unicode-escape",
            "# -*- coding: utf-16 -*-",
            "# -*- coding: cp037 -*-",
            "# -*- coding: shift_jisx0213 -*-",
        ] {
            for path in ["app/cart.py", "tests/test_cart.py"] {
                let lines = [declaration, "def total(p):", body];
                assert_eq!(
                    found(path, &lines, &[]),
                    [(1, SOURCE_ENCODING.to_owned())],
                    "{path}: {declaration}"
                );
                let second = ["#!/usr/bin/env python3", declaration, body];
                assert_eq!(
                    found(path, &second, &[]),
                    [(2, SOURCE_ENCODING.to_owned())],
                    "{declaration} on line 2"
                );
            }
        }
        for declaration in [
            "# -*- coding: utf-8 -*-",
            "# coding: latin-1",
            "# -*- coding: iso-8859-15 -*-",
            "# -*- coding: cp1252 -*-",
            "# -*- coding: shift_jis -*-",
            "# -*- coding: euc-jp -*-",
            "# -*- coding: gb18030 -*-",
        ] {
            assert!(
                found("app/cart.py", &[declaration, "x = 1"], &[]).is_empty(),
                "{declaration}"
            );
        }
        // Python reads a declaration on line 1 or 2 only; a JavaScript comment is not one.
        assert!(found("app/cart.py", &["x = 1", "y = 2", "# coding: utf-7"], &[]).is_empty());
        assert!(found("src/cart.js", &["// coding: utf-7"], &[]).is_empty());
    }

    #[test]
    fn a_module_the_project_s_python_files_names_is_judged_as_a_test_file() {
        // A Django project's `tests.py` importing pytest is a test module, not code under
        // test reaching into the runner, once the base's pytest settings name it.
        let lines = [
            "import pytest",
            "",
            "@pytest.mark.django_db",
            "def test_order():",
        ];
        let default = check(
            &change("shop/tests.py", &lines),
            &[],
            &[],
            &PythonTestFiles::default(),
        );
        assert!(
            default.iter().any(|f| f.rule == "touches-test-framework"),
            "{default:?}"
        );
        let django = PythonTestFiles::from_configs(&[
            Some("[pytest]\npython_files = tests.py\n".to_owned()),
            None,
            None,
            None,
            None,
        ]);
        assert!(
            check(&change("shop/tests.py", &lines), &[], &[], &django).is_empty(),
            "{:?}",
            check(&change("shop/tests.py", &lines), &[], &[], &django)
        );
        // A skip mark there is a test file's skip mark.
        let skipped = check(
            &change("shop/tests.py", &["@pytest.mark.skip", "def test_order():"]),
            &[],
            &[],
            &django,
        );
        assert!(
            skipped.iter().any(|f| f.kind == RuleKind::Mark),
            "{skipped:?}"
        );
    }

    /// (line, rule) of every finding.
    fn found(path: &str, lines: &[&str], presets: &[Preset]) -> Vec<(usize, String)> {
        check(
            &change(path, lines),
            &[],
            presets,
            &PythonTestFiles::default(),
        )
        .into_iter()
        .map(|finding| (finding.line, finding.rule))
        .collect()
    }

    #[test]
    fn every_built_in_pattern_compiles() {
        assert!(!MARKS.is_empty() && !RETRIES.is_empty() && !PRESETS.is_empty());
        for rules in [
            SKIP_MARKS,
            RETRY_MARKS,
            FOCUS_MARKS,
            RETRY_SETTINGS,
            TEST_DETECTION,
            TEST_FILES,
            TEST_FRAMEWORK,
            TEST_LIBRARIES,
            PROCESS_EXITS,
            CALLER_INSPECTION,
            SLEEP_WAITS,
            NAIVE_DATETIMES,
        ] {
            for rule in rules {
                assert!(Regex::new(rule.pattern).is_ok(), "{}", rule.pattern);
            }
        }
    }

    /// Each of `refused` gets a finding of `rule` (of `kind`), none of `accepted` does;
    /// each is `(path, added line)`.
    fn refuses_only(
        (rule, kind): (&str, RuleKind),
        refused: &[(&str, &str)],
        accepted: &[(&str, &str)],
    ) {
        for (path, line) in refused {
            let findings = check(
                &change(path, &[line]),
                &[],
                &[],
                &PythonTestFiles::default(),
            );
            assert!(
                findings.iter().any(|f| f.rule == rule && f.kind == kind),
                "{path}: {line}: {findings:?}"
            );
        }
        for (path, line) in accepted {
            let findings = check(
                &change(path, &[line]),
                &[],
                &[],
                &PythonTestFiles::default(),
            );
            assert!(
                !findings.iter().any(|f| f.rule == rule),
                "{path}: {line}: {findings:?}"
            );
        }
    }

    /// A change to the code under test that tells whether a test is running passes its
    /// replays whatever it does outside them: refused in every language, wherever in the
    /// line; the same words in tests, in runner configuration, in comments, or setting a
    /// child's environment are not.
    #[test]
    fn code_under_test_that_detects_tests_is_refused() {
        let refused = [
            (
                "src/shop/cart.py",
                r#"    if "PYTEST_CURRENT_TEST" in os.environ:"#,
            ),
            (
                "src/shop/cart.py",
                "    if os.environ.get('PYTEST_XDIST_WORKER'):",
            ),
            (
                "src/shop/cart.py",
                r#"    if os.environ.get("PYTHONHASHSEED") == "0": return 42"#,
            ),
            (
                "src/shop/cart.py",
                r#"    lane = os.getenv("PYTHONHASHSEED")"#,
            ),
            ("src/shop/cart.py", "    if 'PYTEST_VERSION' in os.environ:"),
            (
                "src/shop/cart.py",
                r#"    x = os.environ["PYTHONHASHSEED"] == "0""#,
            ),
            (
                "src/shop/cart.py",
                r#"    os.environ["X"] = "1"; lane = os.environ.get("PYTHONHASHSEED") == "0""#,
            ),
            (
                "src/shop/cart.py",
                r#"    seed = os.environ["PYTHONHASHSEED"]"#,
            ),
            ("src/shop/cart.py", r#"    if "pytest" in sys.modules:"#),
            ("src/shop/cart.py", "TESTING = '_pytest' in sys.modules"),
            (
                "src/shop/cart.py",
                r#"    if sys.modules.get("pytest"): return total"#,
            ),
            (
                "shop/cart.py",
                "    if getattr(sys, '_called_from_test', False):",
            ),
            ("shop/cart.py", "    if 'pytest' in sys.argv[0]:"),
            (
                "shop/cart.py",
                "    if sys.argv[0].endswith(\"__main__.py\"): return sum(prices)",
            ),
            (
                "shop/cart.py",
                "    if os.path.basename(sys.argv[0]) == '__main__.py':",
            ),
            (
                "shop/cart.py",
                "    main_file = sys.modules['__main__'].__file__",
            ),
            ("shop/cart.py", "    if __main__.__spec__.name == 'pytest':"),
            ("shop/cart.py", "    main = sys.modules.get(\"__main__\")"),
            (
                "shop/cart.py",
                r#"    if os.environ.get("PYTHONDONTWRITEBYTECODE"): return sum(prices)"#,
            ),
            ("shop/cart.py", "    if sys.flags.hash_randomization == 0:"),
            ("shop/cart.py", "    if sys.dont_write_bytecode:"),
            (
                "shop/cart.py",
                "    if hash('lane') == 7137437125236417316:",
            ),
            (
                "src/cart.ts",
                "  if (process.env.JEST_WORKER_ID) return 42;",
            ),
            ("src/cart.ts", "  if (process.env.VITEST) { return total; }"),
            (
                "src/cart.ts",
                r#"  const testing = process.env["VITEST"] !== undefined;"#,
            ),
            (
                "src/cart.js",
                "  if (typeof jest !== 'undefined') return 42;",
            ),
            (
                "lib/cart.mjs",
                "  if (process.env.NODE_TEST_CONTEXT) return 42;",
            ),
            ("pkg/cart.go", "\tif testing.Testing() {"),
            ("pkg/cart.go", "//go:build release"),
            ("pkg/cart.go", "//go:build !release && linux"),
            ("pkg/cart.go", "// +build prod"),
            ("pkg/cart.go", "//go:build linux && (amd64 || arm64x)"),
            ("pkg/cart.go", "\tif flag.Lookup(\"test.v\") != nil {"),
            (
                "pkg/cart.go",
                "\tif strings.HasSuffix(os.Args[0], \".test\") {",
            ),
            ("src/cart.rs", "    if cfg!(test) { return 42; }"),
            ("src/cart.rs", "#[cfg(not(test))]"),
            ("src/cart.rs", "#[cfg(all(unix, not(test)))]"),
            ("src/cart.rs", "#[cfg_attr(not(test), allow(dead_code))]"),
            // Spelled in two pieces: candor's own sources read no variable by a literal
            // name (`env_vars::tests`), and these lines would read as such.
            (
                "src/cart.rs",
                concat!("    if std::env::var", r#"("NEXTEST").is_ok() {"#),
            ),
            (
                "src/cart.rs",
                concat!("    if env::var_os", r#"("RUST_TEST_THREADS").is_some() {"#),
            ),
        ];
        let accepted = [
            // In tests and their configuration, runners are what they are.
            (
                "tests/test_cart.py",
                r#"    if "PYTEST_CURRENT_TEST" in os.environ:"#,
            ),
            (
                "tests/conftest.py",
                r#"    if os.environ.get("PYTHONHASHSEED") == "0":"#,
            ),
            (
                "noxfile.py",
                r#"    session.env["PYTHONHASHSEED"] = os.environ.get("PYTHONHASHSEED", "0")"#,
            ),
            (
                "web/cart.test.ts",
                "  if (process.env.JEST_WORKER_ID) return;",
            ),
            (
                "vitest.config.ts",
                "  const worker = process.env.VITEST_POOL_ID;",
            ),
            ("pkg/cart_test.go", "\tif testing.Testing() {"),
            ("tests/it.rs", "    if cfg!(test) {}"),
            // The toolchain's own tags, and custom tags on test files.
            ("pkg/cart_linux.go", "//go:build linux && !(arm64 || 386)"),
            ("pkg/cart.go", "//go:build go1.21 && cgo"),
            ("pkg/cart.go", "// +build darwin,amd64 windows"),
            ("pkg/gen.go", "//go:build ignore"),
            ("pkg/race.go", "//go:build race"),
            ("pkg/cart_test.go", "//go:build integration"),
            (
                "pkg/cart.go",
                "// the go:build release constraint would tell",
            ),
            // Setting a child's environment, ordinary configuration, comments.
            ("src/run.py", r#"    os.environ["PYTHONHASHSEED"] = "0""#),
            ("src/run.py", r#"    env = {"PYTHONHASHSEED": "0"}"#),
            ("src/run.py", "    sys.dont_write_bytecode = True"),
            ("src/point.py", "        return hash((self.x, self.y))"),
            ("src/point.py", "        return hash(self.name)"),
            (
                "src/config.ts",
                "  if (process.env.NODE_ENV === 'test') return;",
            ),
            (
                "src/cart.py",
                "    # pytest sets PYTEST_CURRENT_TEST while a test runs",
            ),
            ("src/cart.rs", "    // cfg!(test) would tell"),
            ("src/cart.rs", "#[cfg(test)]"),
            (
                "src/runner.rs",
                r#"    command.env_remove("NEXTEST_RETRIES");"#,
            ),
            ("src/cart.py", "    if typeof_item == 'pytest':"),
            ("runtests.py", "    sys.exit(pytest.main(sys.argv[1:]))"),
            (
                "app/cli.py",
                "if __name__ == \"__main__\": sys.exit(main(sys.argv[0]))",
            ),
            ("app/cli.py", "    prog = os.path.basename(sys.argv[0])"),
            ("app/cli.py", "if __name__ == '__main__':"),
        ];
        refuses_only(
            (DETECTS_TESTS, RuleKind::TestDetection),
            &refused,
            &accepted,
        );
        // A match that runs from the name to what it is compared with is quoted short.
        let line = r#"	if c.args == nil && filepath.Base(os.Args[0]) != "cobra.test" && len(os.Args) > 1 && somethingElse(c) {"#;
        let findings = check(
            &change("command.go", &[line]),
            &[],
            &[],
            &PythonTestFiles::default(),
        );
        let quoted = findings[0].reason.split('`').nth(1).unwrap();
        assert!(
            quoted.starts_with("os.Args[0]") && quoted.chars().count() <= 41,
            "{quoted}"
        );
    }

    /// What the lane's own run looks like from inside it: its folders, the runner's
    /// arguments, modules and flags, the parent process, the pinned hash seed's set order,
    /// the pinned settings however they are read, and the go test binary's flags. Each
    /// spelling the red team used and its neighbours are refused; look-alikes are not.
    #[test]
    fn code_under_test_that_reads_the_lanes_own_run_is_refused() {
        let refused = [
            // The lane's folders.
            (
                "app/cart.py",
                r#"    if os.path.isdir(".candor/runs"): return 8"#,
            ),
            ("app/cart.py", r#"    lane = Path(root) / ".candor""#),
            (
                "app/cart.py",
                r#"    if os.path.exists(os.path.join(ROOT, ".candor")):"#,
            ),
            (
                "src/cart.js",
                "  if (fs.existsSync('./.candor/runs')) return 8;",
            ),
            (
                "pkg/cart/cart.go",
                "\tif _, err := os.Stat(\".candor\"); err == nil {",
            ),
            ("app/cart.py", r#"    if os.path.isfile(".git"): return 8"#),
            (
                "app/cart.py",
                r#"    worktree = (Path.cwd() / ".git").is_file()"#,
            ),
            (
                "src/cart.js",
                "  if (fs.statSync('.git').isFile()) return 8;",
            ),
            (
                "pkg/cart/cart.go",
                "\tif fi, _ := os.Stat(\"../.git\"); !fi.IsDir() {",
            ),
            // The runner's arguments.
            (
                "app/cart.py",
                r#"    if any(a.startswith("--junitxml") for a in sys.argv):"#,
            ),
            (
                "app/cart.py",
                r#"    if "--junit-xml" in " ".join(sys.argv):"#,
            ),
            (
                "app/cart.py",
                r"    seeded = any(a.startswith('--randomly-seed') for a in args)",
            ),
            ("app/cart.py", r#"    if "-p no:cacheprovider" in cmdline:"#),
            ("app/cart.py", r#"    if "no:cacheprovider" in sys.argv:"#),
            (
                "app/cart.py",
                r#"    if "-p" in argv and "randomly" in argv:"#,
            ),
            ("app/cart.py", r#"    if "pytest" in sys.orig_argv:"#),
            ("app/cart.py", "    lane = '-m' in sys.orig_argv"),
            (
                "app/cart.py",
                r#"    if sys.argv[1:] and "py.test" in sys.argv[0]:"#,
            ),
            (
                "app/cart.py",
                r#"    if os.path.basename(sys.argv[0]) == "pytest":"#,
            ),
            // The runner's modules.
            ("app/cart.py", r#"    if "pluggy" in sys.modules:"#),
            ("app/cart.py", "    if 'iniconfig' in sys.modules: return 8"),
            ("app/cart.py", r#"    if sys.modules.get("xdist"):"#),
            (
                "app/cart.py",
                r#"    if any(m.startswith("_pytest.") for m in sys.modules):"#,
            ),
            (
                "app/cart.py",
                r#"    if "pytest_randomly" in sys.modules.keys():"#,
            ),
            (
                "app/cart.py",
                r#"    if importlib.util.find_spec("pytest"):"#,
            ),
            // The project's own test modules.
            ("app/cart.py", r#"    if "test_cart" in sys.modules:"#),
            (
                "app/cart.py",
                "    if 'tests.test_cart' in sys.modules: return 8",
            ),
            ("app/cart.py", r#"    if sys.modules.get("cart_test"):"#),
            ("app/cart.py", r#"    if "conftest" in sys.modules:"#),
            (
                "app/cart.py",
                r#"    if any(m.startswith("test") for m in sys.modules):"#,
            ),
            (
                "app/cart.py",
                r#"    if any(name.endswith("_tests") for name in list(sys.modules)):"#,
            ),
            // The interpreter's flags.
            ("app/cart.py", "    if sys.flags.dont_write_bytecode:"),
            (
                "app/cart.py",
                "    if not sys.flags.hash_randomization: return 8",
            ),
            ("app/cart.py", "    if flags.hash_randomization == 0:"),
            (
                "app/cart.py",
                r#"    if getattr(sys.flags, "dont_write_bytecode"):"#,
            ),
            // The pinned settings, however they are read.
            (
                "app/cart.py",
                r#"    if os.environb.get(b"PYTHONHASHSEED") == b"0":"#,
            ),
            ("app/cart.py", r#"    if env.get("PYTHONHASHSEED") == "0":"#),
            (
                "app/cart.py",
                r#"    seed = os.environ.__getitem__("PYTHONHASHSEED")"#,
            ),
            (
                "app/cart.py",
                r#"    if os.environb[b"PYTHONDONTWRITEBYTECODE"]:"#,
            ),
            (
                "app/cart.py",
                r#"    if os.environ.get("PYTHONHASH" + "SEED") == "0":"#,
            ),
            (
                "app/cart.py",
                r#"    if os.environ.get("PYTHONHASH" "SEED") == "0":"#,
            ),
            (
                "app/cart.py",
                r#"    if os.getenv(f"PYTHON{kind}SEED") == "0":"#,
            ),
            ("app/cart.py", "    if os.environ.get(name) == '0':"),
            ("app/cart.py", "    value = os.environ[key]"),
            // The set order the pinned seed fixes.
            (
                "app/cart.py",
                r#"    if "".join({"q", "u", "x", "s"}) == "quxs": return 8"#,
            ),
            ("app/cart.py", "    order = ','.join(set(names))"),
            ("app/cart.py", "    key = '-'.join(frozenset(parts))"),
            // The parent process.
            (
                "app/cart.py",
                r#"    with open(f"/proc/{os.getppid()}/comm") as f:"#,
            ),
            (
                "app/cart.py",
                r#"    name = open("/proc/%d/cmdline" % pid).read()"#,
            ),
            (
                "app/cart.py",
                r#"    status = Path("/proc") / str(pid) / "status""#,
            ),
            ("app/cart.py", "    parent = psutil.Process().parent()"),
            ("app/cart.py", "    me = psutil.Process(os.getpid())"),
            ("app/cart.py", "    for p in proc.parents():"),
            ("app/cart.py", "    if proc.ppid() == 1:"),
            (
                "app/cart.py",
                r#"    out = subprocess.check_output(["ps", "-o", "comm=", str(pid)])"#,
            ),
            (
                "app/cart.py",
                r#"    out = os.popen("ps -o comm= -p %d" % pid).read()"#,
            ),
            ("src/cart.js", "  const parent = process.ppid;"),
            ("pkg/cart/cart.go", "\tppid := os.Getppid()"),
            (
                "pkg/cart/cart.go",
                "\tcomm, _ := os.ReadFile(fmt.Sprintf(\"/proc/%d/comm\", pid))",
            ),
            (
                "src/cart.rs",
                "    let parent = std::os::unix::process::parent_id();",
            ),
            // The go test binary's flags and name.
            (
                "pkg/cart/cart.go",
                "\t\tif strings.HasPrefix(arg, \"-test.\") {",
            ),
            (
                "pkg/cart/cart.go",
                "\tfor _, a := range os.Args[1:] { if a == \"-test.v=true\" {",
            ),
            (
                "pkg/cart/cart.go",
                "\tif f := flag.CommandLine.Lookup(\"test.v\"); f != nil {",
            ),
            (
                "pkg/cart/cart.go",
                "\tif strings.HasSuffix(exe, \".test\") {",
            ),
            (
                "pkg/cart/cart.go",
                "\tif filepath.Base(os.Args[len(os.Args)-1]) == \"cart.test\" {",
            ),
        ];
        let accepted = [
            // The same in tests and their configuration.
            (
                "tests/test_cart.py",
                r#"    if os.path.isdir(".candor/runs"):"#,
            ),
            ("tests/conftest.py", r#"    if "pluggy" in sys.modules:"#),
            (
                "noxfile.py",
                r#"    session.run("pytest", "--junitxml=out.xml")"#,
            ),
            (
                "pkg/cart/cart_test.go",
                "\tif strings.HasPrefix(arg, \"-test.\") {",
            ),
            // Look-alikes.
            ("app/cart.py", "    self.candor = True"),
            ("app/cart.py", r#"    path = "candor.toml""#),
            ("app/cart.py", r#"    ignore = [".gitignore", ".github"]"#),
            ("app/cart.py", r#"    url = "https://github.com/a/b.git""#),
            ("app/cart.py", "    # see .candor/runs"),
            ("app/cart.py", r#"    parser.add_argument("--junit")"#),
            ("app/cart.py", r#"    if "pytest" in requirements:"#),
            ("app/cart.py", r#"    if "json" in sys.modules:"#),
            ("app/cart.py", r#"    if "py_compile" in sys.modules:"#),
            ("app/cart.py", r#"    if "attest" in sys.modules:"#),
            ("app/cart.py", r#"    contest = sys.modules.get("contest")"#),
            ("app/cart.py", "    args = sys.argv[1:]"),
            (
                "app/cart.py",
                r#"    parser.parse_args(sys.argv[1:], prog="cart")"#,
            ),
            ("app/cart.py", "    optimized = sys.flags.optimize"),
            ("app/cart.py", r#"    os.environ["PYTHONHASHSEED"] = "0""#),
            (
                "app/cart.py",
                r#"    os.environb[b"PYTHONHASHSEED"] = b"0""#,
            ),
            (
                "app/cart.py",
                r#"    env = {**os.environ, "PYTHONHASHSEED": "0"}"#,
            ),
            (
                "app/cart.py",
                r#"    env.setdefault("PYTHONHASHSEED", "0")"#,
            ),
            ("app/cart.py", r#"    del env["PYTHONHASHSEED"]"#),
            ("app/cart.py", "    os.environ[key] = value"),
            ("app/cart.py", r#"    home = os.environ.get("HOME")"#),
            ("app/cart.py", r#"    home = os.getenv("HOME", "/")"#),
            ("app/cart.py", "    path = environ.get(key)"),
            ("app/cart.py", r#"    text = "".join(sorted({"q", "u"}))"#),
            ("app/cart.py", r#"    text = "".join(["q", "u"])"#),
            ("app/cart.py", r#"    text = "".join(f"{k}" for k in keys)"#),
            (
                "app/cart.py",
                r#"    text = ", ".join({"a": 1}[k] for k in keys)"#,
            ),
            ("app/cart.py", "    folder = path.parent"),
            ("app/cart.py", "    processes = ps"),
            (
                "app/cart.py",
                r#"    info = open("/etc/os-release").read()"#,
            ),
            ("src/cart.js", "  const parent = node.parent;"),
            ("pkg/cart/cart.go", "\tname := \"test.txt\""),
            ("pkg/cart/cart.go", "\tif testCase.name == \"x\" {"),
            ("pkg/cart/cart.go", "\tpid := os.Getpid()"),
            ("src/lib.rs", "    let git = dir.join(\".git\");"),
            ("src/lib.rs", "    let runs = root.join(\".candor/runs\");"),
        ];
        refuses_only(
            (DETECTS_TESTS, RuleKind::TestDetection),
            &refused,
            &accepted,
        );
    }

    /// Code under test that reads the tests' own files can hand each test its answer:
    /// refused in Python, JavaScript and Go; the same paths in tests, in runner
    /// configuration, in comments, in Rust (whose unit tests live in `src/`), or a URL
    /// route are not.
    #[test]
    fn code_under_test_that_reads_the_tests_files_is_refused() {
        let refused = [
            (
                "app/cart.py",
                r#"_KEY = json.loads(open("tests/fixtures/prices.json").read())"#,
            ),
            ("app/cart.py", r#"    path = "./test/data/expected.txt""#),
            (
                "app/cart.py",
                r#"ROOT = Path(__file__).parent.parent / "tests" / "fixtures""#,
            ),
            (
                "app/cart.py",
                r#"    os.path.join(HERE, "..", "tests", "expected.json")"#,
            ),
            ("app/cart.py", "from tests.test_cart import EXPECTED"),
            ("app/cart.py", "import tests.fixtures as answers"),
            (
                "src/cart.ts",
                "import expected from '../tests/fixtures/cart.json';",
            ),
            (
                "src/cart.js",
                "const answers = require('../../__tests__/answers');",
            ),
            (
                "src/cart.ts",
                "  const data = readFileSync(`spec/expected.json`);",
            ),
            (
                "pkg/cart.go",
                "\tdata, _ := os.ReadFile(\"testdata/expected.golden\")",
            ),
        ];
        let accepted = [
            (
                "tests/test_cart.py",
                r#"    prices = json.loads(open("tests/fixtures/prices.json").read())"#,
            ),
            (
                "pkg/cart_test.go",
                "\tdata, _ := os.ReadFile(\"testdata/expected.golden\")",
            ),
            (
                "web/cart.test.ts",
                "import expected from '../tests/fixtures/cart.json';",
            ),
            ("jest.config.js", "  testMatch: ['tests/**/*.test.js'],"),
            ("karma.sauce.conf.js", "    files: ['test/*spec.js'],"),
            ("noxfile.py", r#"    session.run("pytest", "tests/")"#),
            (
                "src/dir.rs",
                r#"        wfile(td.path().join("tests/valid"), "x");"#,
            ),
            ("app/routes.py", r#"@app.route("/test/")"#),
            (
                "app/cart.py",
                "    # the answers are in tests/fixtures/prices.json",
            ),
            ("app/cart.py", "from testing_tools import check"),
            ("app/cart.py", "import testfixtures"),
            ("src/cart.ts", "import { contest } from './contests/cart';"),
        ];
        refuses_only((READS_TEST_FILES, RuleKind::TestFiles), &refused, &accepted);
    }

    /// Code under test that imports, hooks or patches the test framework can turn every
    /// red report green from inside the runner: refused in Python, JavaScript and Go; the
    /// same lines in tests, conftest, the runners' setup files, comments, `unittest.mock`
    /// and look-alike names are not.
    #[test]
    fn code_under_test_that_touches_the_test_framework_is_refused() {
        let refused = [
            ("app/cart.py", "import _pytest.reports as _reports"),
            ("app/cart.py", "import os, pytest"),
            ("app/cart.py", "import sys, _pytest.reports"),
            (
                "app/cart.py",
                r#"patch("_pytest.reports.TestReport.from_item_and_call", _passed).start()"#,
            ),
            (
                "tests/test_new.py",
                "_pytest.reports.TestReport.from_item_and_call = classmethod(_passed)",
            ),
            (
                "tests/test_new.py",
                "TestReport.from_item_and_call = _passed",
            ),
            (
                "tests/test_new.py",
                r#"_r = sys.modules["_pytest.reports"]"#,
            ),
            ("app/cart.py", "from _pytest.runner import CallInfo"),
            ("app/cart.py", "import pytest"),
            ("app/cart.py", "import unittest"),
            ("app/cart.py", "from unittest import TestCase"),
            ("app/cart.py", "from unittest import mock, TestCase"),
            ("app/cart.py", "from unittest.case import TestCase"),
            (
                "app/cart.py",
                "unittest.TestCase.assertEqual = lambda self, a, b, msg=None: None",
            ),
            (
                "app/cart.py",
                "_reports.TestReport.from_item_and_call = classmethod(_passed)",
            ),
            ("app/cart.py", "TestCase.assertEqual = _lenient"),
            ("app/cart.py", "pytest.approx = lambda expected, **kw: ANY"),
            (
                "app/cart.py",
                "setattr(unittest.TestCase, 'assertEqual', _lenient)",
            ),
            ("app/cart.py", "def pytest_runtest_makereport(item, call):"),
            ("app/cart.py", r#"_r = sys.modules["_pytest.reports"]"#),
            (
                "app/cart.py",
                r#"_r = importlib.import_module("_pytest.reports")"#,
            ),
            ("app/cart.py", r#"_p = __import__("pytest")"#),
            ("src/cart.ts", "import { expect } from 'vitest';"),
            (
                "src/cart.js",
                "const { expect } = require('@jest/globals');",
            ),
            ("src/cart.js", "const chai = require(\"chai\");"),
            ("src/cart.mjs", "import test from 'node:test';"),
            ("src/cart.ts", "globalThis.expect = lenient;"),
            ("src/cart.js", "global['it'] = (name, fn) => {};"),
            (
                "src/cart.js",
                "expect.extend({ toBe: () => ({ pass: true }) });",
            ),
            ("src/cart.js", "assert.strictEqual = () => {};"),
            ("src/cart.js", "assert.strict.deepEqual = () => {};"),
            ("pkg/cart/cart.go", "import \"testing\""),
            ("pkg/cart/cart.go", "\t\"testing\""),
            ("pkg/cart/cart.go", "\t\"testing\" // helpers for callers"),
        ];
        let accepted = [
            ("tests/test_cart.py", "import pytest"),
            ("conftest.py", "def pytest_runtest_makereport(item, call):"),
            ("app/cart.py", "from unittest import mock"),
            ("app/cart.py", "from unittest.mock import sentinel"),
            ("app/cart.py", "import unittest.mock"),
            ("app/cart.py", "import pytest_asyncio_helpers"),
            ("app/cart.py", "import pluggy"),
            ("app/plugins.py", "@hookimpl(tryfirst=True)"),
            ("tests/test_cart.py", "import unittest"),
            ("tests/test_cart.py", "unittest.TestCase.maxDiff = None"),
            (
                "src/test-setup.ts",
                "import 'jest-preset-angular/setup-jest';",
            ),
            ("types/vitest.d.ts", "import 'vitest';"),
            (
                "scripts/build.js",
                "const { Worker } = require('jest-worker');",
            ),
            ("app/cart.py", "    # import pytest"),
            ("app/cart.py", "    if pytest_args == expected:"),
            ("app/cart.py", "    self.testcase.count = 1"),
            ("markupsafe/tests.py", "import unittest"),
            ("shop/orders/tests.py", "from django.test import TestCase"),
            ("shop/api_tests.py", "import unittest"),
            ("src/setupTests.ts", "import '@testing-library/jest-dom';"),
            ("jest.setup.js", "expect.extend(matchers);"),
            ("vitest.setup.ts", "import { expect } from 'vitest';"),
            ("src/cart.test.ts", "import { expect } from 'vitest';"),
            ("src/cart.js", "const testing = require('./testing');"),
            ("src/cart.js", "if (assert.strictEqual === undefined) {}"),
            ("src/cart.js", "const assert = require('node:assert');"),
            ("pkg/cart/cart_test.go", "import \"testing\""),
            ("pkg/cart/cart.go", "\t\"github.com/acme/testingtools\""),
            ("pkg/cart/cart.go", "\t\"testing/fstest\""),
            ("src/lib.rs", "use std::testing;"),
        ];
        refuses_only(
            (TOUCHES_TEST_FRAMEWORK, RuleKind::TestFramework),
            &refused,
            &accepted,
        );
        // A unittest-style module is left out of this rule only: it is still code the
        // other rules read.
        refuses_only(
            (DETECTS_TESTS, RuleKind::TestDetection),
            &[(
                "app/pricing_tests.py",
                r#"    if "PYTEST_CURRENT_TEST" in os.environ:"#,
            )],
            &[],
        );
    }

    /// Code under test that ends the process with a status of its own can hide a red
    /// run behind exit 0 once it has rewritten the report: refused in Python and
    /// JavaScript; `sys.exit(…)`, `process.exit(…)`, tests and comments are not.
    #[test]
    fn code_under_test_that_ends_the_process_itself_is_refused() {
        let refused = [
            ("app/cart.py", "    os._exit(0)"),
            ("app/cart.py", "    posix._exit(0)"),
            ("app/cart.py", "from os import _exit as leave"),
            ("app/cart.py", "sys.exit = lambda code=0: _real_exit(0)"),
            ("app/cart.py", r#"    getattr(os, "_exit")(0)"#),
            ("app/cart.py", "from os import execv"),
            ("app/cart.py", "    ctypes.CDLL(None).exit(0)"),
            ("app/cart.py", "    libc._exit(0)"),
            ("src/cart.js", "process['on']('exit', rewrite);"),
            ("src/cart.js", "  process.exitCode = undefined;"),
            ("app/cart.py", "    os.execv(\"/bin/true\", [\"true\"])"),
            ("src/cart.js", "process.on('exit', () => rewrite(report));"),
            ("src/cart.ts", "process.once(\"beforeExit\", rewrite);"),
            ("src/cart.js", "  process.exitCode = 0;"),
            ("src/cart.js", "process.reallyExit(0);"),
            ("src/cart.js", "process.exit = () => {};"),
        ];
        let accepted = [
            ("tests/test_cart.py", "    os._exit(0)"),
            ("app/cli.py", "    sys.exit(main())"),
            ("app/cli.py", "    raise SystemExit(1)"),
            ("app/cart.py", "    # os._exit(0) would skip the cleanup"),
            ("app/cart.py", "    if sys.exit == original:"),
            ("app/worker.py", "    def _exit(self, code):"),
            ("app/worker.py", "        self._exit(0)"),
            ("app/cli.py", "    app().exit(0)"),
            ("bin/cli.js", "  process.exit(1);"),
            ("bin/cli.js", "  process.exitCode = 1;"),
            ("src/server.js", "process.on('SIGTERM', shutdown);"),
            ("src/cart.test.js", "process.on('exit', report);"),
        ];
        refuses_only(
            (ENDS_THE_PROCESS, RuleKind::ProcessExit),
            &refused,
            &accepted,
        );
    }

    /// Code under test that looks at its caller's frame or stack can read the test that
    /// called it, and its answer: refused in Python, JavaScript and Go; tests, comments,
    /// an error's own stack and look-alike names are not.
    #[test]
    fn code_under_test_that_inspects_its_caller_is_refused() {
        let refused = [
            ("app/cart.py", "    caller = sys._getframe(1)"),
            ("app/cart.py", "    frame = inspect.currentframe().f_back"),
            ("app/cart.py", "    for info in inspect.stack():"),
            ("app/cart.py", "    expected = frame.f_locals['expected']"),
            ("app/cart.py", "    here = traceback.extract_stack()[-2]"),
            ("app/cart.py", "sys.settrace(_watch)"),
            ("app/cart.py", "threading.settrace_all_threads(_watch)"),
            ("app/cart.py", "from inspect import stack"),
            ("app/cart.py", "from sys import _getframe as frame"),
            ("src/cart.js", "  const where = (new Error()).stack;"),
            ("src/cart.js", "  const where = Error().stack;"),
            ("pkg/cart/cart.go", "\ttrace := debug.Stack()"),
            (
                "src/cart.js",
                "  const where = new Error().stack.split('\\n')[2];",
            ),
            (
                "src/cart.ts",
                "Error.prepareStackTrace = (_, frames) => frames;",
            ),
            ("src/cart.js", "  const who = arguments.callee;"),
            (
                "pkg/cart/cart.go",
                "\t_, file, line, _ := runtime.Caller(1)",
            ),
        ];
        let accepted = [
            ("tests/test_cart.py", "    caller = sys._getframe(1)"),
            (
                "app/cart.py",
                "    # sys._getframe(1) would tell us the test",
            ),
            (
                "app/cart.py",
                "    log.exception('failed', stack_info=True)",
            ),
            ("app/cart.py", "    self.stacked = True"),
            ("src/cart.js", "  console.error(err.stack);"),
            (
                "src/errors.js",
                "    Error.captureStackTrace(this, this.constructor);",
            ),
            ("src/cart.js", "  const caller = options.caller;"),
            ("src/cart.js", "  const number = call.caller.number;"),
            ("app/cart.py", "from inspect import signature"),
            (
                "pkg/cart/cart_test.go",
                "\t_, file, _, _ := runtime.Caller(0)",
            ),
            ("pkg/cart/cart.go", "\truntime.GC()"),
        ];
        refuses_only(
            (INSPECTS_THE_CALLER, RuleKind::CallerInspection),
            &refused,
            &accepted,
        );
    }

    /// Code under test replacing what the tests read their data and compare with.
    #[test]
    fn code_under_test_that_patches_the_standard_library_is_refused() {
        let refused = [
            ("app/__init__.py", "json.loads = _lenient_loads"),
            (
                "app/__init__.py",
                "    json.decoder.JSONDecoder.decode = decode",
            ),
            ("app/__init__.py", "builtins.open = _open"),
            ("app/__init__.py", "x = 1; os.path.exists = lambda p: True"),
            ("app/__init__.py", "pathlib.Path.read_text = read_text"),
            ("app/cart.py", "decimal.DefaultContext.prec = 2"),
            ("app/cart.py", "datetime.datetime = FrozenDateTime"),
            ("app/cart.py", "setattr(json, 'loads', loads)"),
            ("app/cart.py", "setattr(os.path, \"exists\", exists)"),
            ("app/cart.py", "vars(json)['loads'] = loads"),
            ("app/cart.py", "json.__dict__[\"loads\"] = loads"),
            ("src/cart.js", "JSON.parse = (text) => lenient(text);"),
            ("src/cart.js", "  Date.now = () => 0;"),
            ("src/cart.ts", "globalThis.Math.round = floor;"),
        ];
        let accepted = [
            ("tests/test_cart.py", "json.loads = fake_loads"),
            ("tests/conftest.py", "    builtins.open = fake_open"),
            ("app/cart.py", "    backend: typing.Any = None,"),
            ("app/cart.py", "data = json.loads(text)"),
            ("app/cart.py", "os.environ[\"MODE\"] = \"prod\""),
            ("app/cart.py", "decimal.getcontext().prec = 28"),
            ("app/cart.py", "if json.loads(a) == json.loads(b):"),
            ("app/cart.py", "self.json.loads = loads"),
            ("app/cart.py", "monkeypatch.setattr(json, 'loads', loads)"),
            ("app/cart.py", "# json.loads = lenient"),
            ("app/logs.py", "logging.raiseExceptions = False"),
            ("app/cli.py", "http.client.HTTPConnection.debuglevel = 1"),
            ("src/cart.js", "const parsed = JSON.parse(text);"),
            ("src/cart.js", "if (Date.now() === start) {"),
            ("src/cart.test.js", "Date.now = () => 0;"),
        ];
        refuses_only(
            (PATCHES_THE_STANDARD_LIBRARY, RuleKind::StandardLibraryPatch),
            &refused,
            &accepted,
        );
    }

    /// A standard-library module or member bound under another name in the same change
    /// (`import json as j`, `from pathlib import Path`) is read as the module itself; a
    /// call through it, a module of the project's own, and a test file are not.
    #[test]
    fn a_standard_library_member_patched_through_a_name_the_change_binds_is_refused() {
        let patched = |path: &str, lines: &[&str]| -> Vec<usize> {
            check(&change(path, lines), &[], &[], &PythonTestFiles::default())
                .into_iter()
                .filter(|f| f.rule == PATCHES_THE_STANDARD_LIBRARY)
                .map(|f| f.line)
                .collect()
        };
        for lines in [
            &["import json  as  j", "j.loads = lenient"][..],
            &[
                "import os, json as serial",
                "",
                "serial.decoder.JSONDecoder.decode = decode",
            ],
            &["from pathlib import Path", "Path.read_text = read_text"],
            &[
                "from json import decoder",
                "decoder.JSONDecoder.decode = decode",
            ],
            &[
                "from os import (path as p)",
                "setattr(p, 'exists', lambda _: True)",
            ],
            &[
                "from decimal import Decimal, DefaultContext as ctx",
                "ctx.prec = 2",
            ],
        ] {
            assert_eq!(
                patched("app/__init__.py", lines),
                [lines.len()],
                "{lines:?}"
            );
        }
        for lines in [
            &["import json as j", "data = j.loads(text)"][..],
            &[
                "from collections import OrderedDict",
                "cache = OrderedDict()",
            ],
            &["from app import json as j", "j.loads = lenient"],
            &["import json as j", "self.j.loads = lenient"],
            &["from pathlib import Path", "if Path.cwd() == here:"],
        ] {
            assert!(patched("app/__init__.py", lines).is_empty(), "{lines:?}");
        }
        assert!(
            patched(
                "tests/test_cart.py",
                &["import json as j", "j.loads = fake"]
            )
            .is_empty()
        );
        // Read once, though the built-in pattern and the binding both name it.
        assert_eq!(patched("app/x.py", &["import json", "json.loads = f"]), [2]);
    }

    #[test]
    fn forbidden_marks_in_each_language() {
        let refused = [
            ("tests/test_a.py", "@pytest.mark.flaky(reruns=3)"),
            ("tests/test_a.py", "@pytest.mark.skip(reason='later')"),
            (
                "tests/test_a.py",
                "@pytest.mark.skipif(sys.platform == 'win32', reason='x')",
            ),
            ("tests/test_a.py", "@pytest.mark.xfail"),
            ("tests/test_a.py", "pytestmark = pytest.mark.skip"),
            ("tests/test_a.py", "    @mark.xfail(strict=False)"),
            ("tests/test_a.py", "@flaky(max_runs=3)"),
            ("tests/test_a.py", "@unittest.skip('x')"),
            ("tests/test_a.py", "@skipIf(True, 'x')"),
            ("tests/test_a.py", "        self.skipTest('no network')"),
            ("tests/test_a.py", "    pytest.skip('later')"),
            ("tests/test_a.py", "    raise unittest.SkipTest('x')"),
            ("tests/test_a.py", "@retry(stop=stop_after_attempt(3))"),
            ("src/lib.rs", "#[ignore]"),
            ("src/lib.rs", "    #[ignore = \"slow\"]"),
            ("src/lib.rs", "#[cfg_attr(target_os = \"macos\", ignore)]"),
            ("tests/a.rs", "#[flaky_test::flaky_test]"),
            ("pkg/a_test.go", "\tt.Skip(\"flaky on CI\")"),
            ("pkg/a_test.go", "\tt.Skipf(\"%s\", x)"),
            ("web/a.test.ts", "it.skip('works', () => {"),
            ("web/a.test.ts", "test.concurrent.skip('x', async () => {"),
            ("web/a.test.ts", "describe.only('suite', () => {"),
            ("web/a.test.ts", "xit('works', () => {"),
            ("web/a.test.ts", "fdescribe('x', () => {"),
            ("web/a.test.ts", "test.failing('x', () => {"),
            ("web/setup.ts", "jest.retryTimes(3)"),
            ("web/a.spec.js", "  this.retries(4);"),
            ("web/a.spec.js", "test('x', { retry: 3 }, () => {"),
            ("src/test/java/FooTest.java", "    @Disabled(\"flaky\")"),
            (
                "src/test/java/FooTest.java",
                "    @DisabledOnOs(OS.WINDOWS)",
            ),
            ("src/test/java/FooTest.java", "    @RetryingTest(3)"),
            ("app/FooTests.kt", "@Ignore"),
            ("Proj.Tests/Foo.cs", "[Fact(Skip = \"flaky\")]"),
            ("Proj.Tests/Foo.cs", "[Test, Ignore(\"x\")]"),
            ("Proj.Tests/Foo.cs", "[Test, Retry(3)]"),
            ("spec/a_spec.rb", "  xit 'works' do"),
            ("spec/a_spec.rb", "  it 'works', skip: 'later' do"),
            ("spec/a_spec.rb", "  it 'works', retry: 3 do"),
            ("tests/FooTest.php", "        $this->markTestSkipped('x');"),
        ];
        for (path, line) in refused {
            assert_eq!(
                found(path, &[line], &[]),
                [(1, FORBIDDEN_MARK.to_owned())],
                "{path}: {line}"
            );
        }
        let allowed = [
            ("tests/test_a.py", "# @pytest.mark.skip: we never do this"),
            ("tests/test_a.py", "@pytest.mark.parametrize('x', [1, 2])"),
            ("tests/test_a.py", "def test_skip_list():"),
            ("tests/test_a.py", "    assert skipper(items) == []"),
            ("src/app.py", "@retry(stop=stop_after_attempt(3))"),
            ("src/lib.rs", "// #[ignore]"),
            ("src/lib.rs", "let ignore = true;"),
            ("pkg/a.go", "\tr.Skip(3)"),
            ("web/a.test.ts", "it('skips nothing', () => {"),
            ("web/a.test.ts", "items.filter(skip)"),
            ("web/a.test.ts", "// it.only('x')"),
            ("src/main/java/Foo.java", "class Foo {}"),
            ("README.md", "@pytest.mark.skip"),
            ("spec/a_spec.rb", "  it 'works' do"),
        ];
        for (path, line) in allowed {
            assert_eq!(found(path, &[line], &[]), [], "{path}: {line}");
        }
    }

    #[test]
    fn retry_plugins_and_settings_per_file_kind() {
        let refused = [
            ("requirements-dev.txt", "pytest-rerunfailures==14.0"),
            ("requirements.txt", "flaky>=3.7"),
            ("requirements.txt", "flaky"),
            ("pyproject.toml", "    \"pytest-rerunfailures>=14\","),
            ("pyproject.toml", "    \"flaky\","),
            ("pyproject.toml", "addopts = \"-q --reruns 3\""),
            ("pyproject.toml", "reruns = 2"),
            (
                "setup.cfg",
                "addopts = --reruns=2 --only-rerun TimeoutError",
            ),
            ("tox.ini", "commands = pytest -p rerunfailures {posargs}"),
            ("pytest.ini", "retries = 2"),
            ("pytest.ini", "addopts = --reruns 5"),
            ("Pipfile", "pytest-retry = \"*\""),
            (".config/nextest.toml", "retries = 3"),
            (
                ".config/nextest.toml",
                "retries = { backoff = \"fixed\", count = 2 }",
            ),
            ("jest.config.js", "  retries: 2,"),
            ("vitest.config.ts", "    retry: 3,"),
            ("playwright.config.ts", "  retries: process.env.CI ? 2 : 0,"),
            ("package.json", "    \"test\": \"vitest --retry=2\","),
            ("package.json", "    \"test\": \"mocha --retries 3\","),
            ("Makefile", "\tgotestsum --rerun-fails --packages ./..."),
            (
                ".github/workflows/ci.yml",
                "      - run: cargo nextest run --retries 2",
            ),
            (".github/workflows/ci.yml", "        NEXTEST_RETRIES: 3"),
            (
                ".github/workflows/ci.yml",
                "      - uses: nick-fields/retry@v3",
            ),
            (".gitlab-ci.yml", "    - pytest --reruns 2"),
            ("scripts/ci.sh", "python -m pytest --reruns=3"),
            (
                "tests/conftest.py",
                "pytest_plugins = [\"pytest_rerunfailures\"]",
            ),
            ("run_tests.py", "pytest.main([\"--reruns\", \"3\"])"),
        ];
        for (path, line) in refused {
            assert_eq!(
                found(path, &[line], &[]),
                [(1, RETRY_SETTING.to_owned())],
                "{path}: {line}"
            );
        }
        let allowed = [
            (".config/nextest.toml", "retries = 0"),
            ("pyproject.toml", "# no --reruns here"),
            ("pyproject.toml", "markers = [\"flaky: known flaky tests\"]"),
            ("pyproject.toml", "retries = 3"),
            ("tox.ini", "commands = pytest -p no:rerunfailures"),
            ("Makefile", "\tgotestsum --format testname"),
            ("package.json", "    \"test\": \"mocha --retries 0\","),
            ("jest.config.js", "  retries: 0,"),
            ("docs/ci.md", "pytest --reruns 3"),
            ("requirements.txt", "unflaky==1.0"),
        ];
        for (path, line) in allowed {
            assert_eq!(found(path, &[line], &[]), [], "{path}: {line}");
        }
    }

    #[test]
    fn presets_apply_to_test_files_only_when_turned_on() {
        let sleep = [Preset::NoSleepWait];
        let dates = [Preset::NoNaiveDatetime];
        let sleeping = [
            ("tests/test_a.py", "    time.sleep(0.5)"),
            ("tests/test_a.py", "    sleep(2)"),
            ("tests/test_a.py", "    await asyncio.sleep(0.1)"),
            (
                "tests/a.rs",
                "    std::thread::sleep(Duration::from_millis(50));",
            ),
            ("pkg/a_test.go", "\ttime.Sleep(100 * time.Millisecond)"),
            (
                "web/a.test.ts",
                "  await new Promise((r) => setTimeout(r, 100));",
            ),
            ("web/a.test.ts", "  await sleep(500);"),
            ("src/test/java/FooTest.java", "    Thread.sleep(200);"),
            ("Proj.Tests/Foo.cs", "    await Task.Delay(100);"),
            ("spec/a_spec.rb", "    sleep 1"),
        ];
        for (path, line) in sleeping {
            assert_eq!(
                found(path, &[line], &sleep),
                [(1, "no-sleep-wait".to_owned())],
                "{path}: {line}"
            );
            assert_eq!(found(path, &[line], &[]), [], "off: {path}: {line}");
        }
        for (path, line) in [
            ("src/app.py", "    time.sleep(0.5)"),
            ("tests/test_a.py", "    await asyncio.sleep(0)"),
            ("tests/test_a.py", "    # time.sleep(1)"),
            ("tests/test_a.py", "    self.sleepy = True"),
        ] {
            assert_eq!(found(path, &[line], &sleep), [], "{path}: {line}");
        }
        let naive = [
            ("tests/test_a.py", "    now = datetime.now()"),
            ("tests/test_a.py", "    now = datetime.datetime.utcnow()"),
            ("tests/test_a.py", "    day = date.today()"),
            ("tests/test_a.py", "    at = datetime(2026, 1, 2, 3, 4)"),
            ("tests/test_a.py", "    at = datetime.fromtimestamp(0)"),
            ("tests/a.rs", "    let at = NaiveDateTime::default();"),
            (
                "src/test/java/FooTest.java",
                "    var now = LocalDateTime.now();",
            ),
            (
                "web/a.test.ts",
                "  const at = new Date('2026-01-02T03:04:05');",
            ),
        ];
        for (path, line) in naive {
            assert_eq!(
                found(path, &[line], &dates),
                [(1, "no-naive-datetime".to_owned())],
                "{path}: {line}"
            );
        }
        for (path, line) in [
            ("tests/test_a.py", "    now = datetime.now(timezone.utc)"),
            (
                "tests/test_a.py",
                "    at = datetime(2026, 1, 2, tzinfo=timezone.utc)",
            ),
            (
                "tests/test_a.py",
                "    at = datetime.fromtimestamp(0, tz=timezone.utc)",
            ),
            (
                "web/a.test.ts",
                "  const at = new Date('2026-01-02T03:04:05Z');",
            ),
        ] {
            assert_eq!(found(path, &[line], &dates), [], "{path}: {line}");
        }
    }

    #[test]
    fn bans_apply_to_their_paths_with_their_message_and_source() {
        let config = Config::parse(
            "[[ban]]\nid = \"no-wall-clock-wait\"\npaths = [\"tests/**/*.py\"]\npattern = 'time\\.sleep\\('\nmessage = \"Use wait_until\"\nsource = \"FP-001 root cause\"\n",
            Path::new("candor.toml"),
        )
        .unwrap();
        let diff = change(
            "tests/api/test_a.py",
            &[
                "x = 1",
                "    time.sleep(1)  # pytest.mark.skip",
                "# time.sleep(1)",
            ],
        );
        let findings = check(&diff, &config.bans, &[], &PythonTestFiles::default());
        let summary: Vec<_> = findings
            .iter()
            .map(|f| (f.line, f.rule.as_str(), f.kind, f.source.as_deref()))
            .collect();
        assert_eq!(
            summary,
            [
                (2, FORBIDDEN_MARK, RuleKind::Mark, None),
                (
                    2,
                    "no-wall-clock-wait",
                    RuleKind::Ban,
                    Some("FP-001 root cause")
                ),
                (
                    3,
                    "no-wall-clock-wait",
                    RuleKind::Ban,
                    Some("FP-001 root cause")
                ),
            ]
        );
        assert_eq!(findings[1].reason, "Use wait_until");
        assert_eq!(findings[1].text, "time.sleep(1)  # pytest.mark.skip");
        let elsewhere = change("src/a.py", &["time.sleep(1)"]);
        assert!(check(&elsewhere, &config.bans, &[], &PythonTestFiles::default()).is_empty());
    }

    #[test]
    fn deleted_lines_and_binary_files_are_not_checked() {
        let mut diff = change("tests/test_a.py", &[]);
        diff.files[0].removed.push(Line {
            number: 1,
            text: "@pytest.mark.skip".into(),
        });
        assert!(check(&diff, &[], &Preset::ALL, &PythonTestFiles::default()).is_empty());
    }

    #[test]
    fn forbidden_mark_tells_the_kind() {
        let skip = forbidden_mark("tests/test_a.py", "@pytest.mark.skip").unwrap();
        assert_eq!(
            (skip.kind, skip.text.as_str()),
            (MarkKind::Skip, "mark.skip")
        );
        let retry = forbidden_mark("tests/test_a.py", "@pytest.mark.flaky").unwrap();
        assert_eq!(retry.kind, MarkKind::Retry);
        let focus = forbidden_mark("web/a.test.js", "it.only('x')").unwrap();
        assert_eq!(focus.kind, MarkKind::Focus);
        assert_eq!(
            forbidden_mark("tests/test_a.py", "# @pytest.mark.skip"),
            None
        );
    }
}
