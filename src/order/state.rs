//! The shared state a failure shows, when it shows one: a module in `sys.modules`, an
//! environment variable, a path, an attribute. Read from the failure's message and text
//! (pytest prints the failing source line after `>`), by patterns, so it names only what
//! the failure itself names; nothing is guessed from the polluter's code.

use std::fmt;
use std::sync::LazyLock;

use regex::Regex;
use serde::Serialize;

use crate::results::Failure;

/// One piece of state two tests share.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, schemars::JsonSchema)]
#[serde(tag = "kind", content = "name", rename_all = "kebab-case")]
pub enum SharedState {
    /// A module in `sys.modules`.
    Module(String),
    /// An environment variable.
    EnvVar(String),
    /// A file or directory.
    Path(String),
    /// An attribute of a module, class or object (`settings.MODE`).
    Attribute(String),
}

impl fmt::Display for SharedState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SharedState::Module(name) => write!(f, "module `{name}` in sys.modules"),
            SharedState::EnvVar(name) => write!(f, "environment variable `{name}`"),
            SharedState::Path(path) => write!(f, "path `{path}`"),
            SharedState::Attribute(name) => write!(f, "attribute `{name}`"),
        }
    }
}

fn pattern(text: &str) -> Regex {
    Regex::new(text).expect("the shared-state patterns are valid")
}

/// A module named in `sys.modules`: subscripted, looked up, or tested with `in`, either
/// by name or as pytest's assertion rewriting expands it, a dict of modules
/// (`'html.parser' not in {'sys': <module 'sys' (built-in)>, …}`): a dict whose first
/// value is a `<module …>` repr is `sys.modules` seen through the expansion.
static MODULE: LazyLock<Regex> = LazyLock::new(|| {
    pattern(
        r#"sys\.modules\s*(?:\[|\.get\(|\.pop\()\s*['"]([\w.]+)['"]|['"]([\w.]+)['"]\s+(?:not\s+)?in\s+(?:sys\.modules|\{\s*['"][\w.]+['"]\s*:\s*<module\b)"#,
    )
});
static ENV_VAR: LazyLock<Regex> = LazyLock::new(|| {
    pattern(
        r#"(?:os\.environ\s*(?:\[|\.get\(|\.pop\()|os\.getenv\(|os\.Getenv\(|os\.LookupEnv\(|std::env::var\()\s*['"]([A-Za-z_]\w*)['"]|['"]([A-Za-z_]\w*)['"]\s+(?:not\s+)?in\s+os\.environ"#,
    )
});
static PATH_CALL: LazyLock<Regex> = LazyLock::new(|| {
    pattern(
        r#"(?:exists|isfile|isdir|open|Path|remove|unlink|rmtree|makedirs|mkdir|Stat|ReadFile|WriteFile)\(\s*r?['"]([^'"\s]+)['"]"#,
    )
});
static PATH_ERROR: LazyLock<Regex> = LazyLock::new(|| {
    pattern(
        r#"(?:File exists|No such file or directory|Directory not empty|Is a directory): ['"]([^'"]+)['"]"#,
    )
});
static MISSING_ATTRIBUTE: LazyLock<Regex> =
    LazyLock::new(|| pattern(r"(?:type object|module) '([\w.]+)' has no attribute '(\w+)'"));
/// A dotted name on the failing source line, not called (`settings.MODE`, not
/// `os.path.exists(`), not a string's content.
static DOTTED: LazyLock<Regex> =
    LazyLock::new(|| pattern(r"\b([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)\b(\s*\()?"));
static QUOTED: LazyLock<Regex> = LazyLock::new(|| pattern(r#"'[^']*'|"[^"]*""#));

/// Modules whose dotted names on a source line are calls into them, not shared state.
/// `os.environ` and `sys.modules` are read by the patterns above, with the key.
const NOT_STATE: [&str; 8] = [
    "os.path",
    "os.environ",
    "sys.modules",
    "self.",
    "pytest.",
    "math.",
    "json.",
    "re.",
];

/// What the failure shows, most specific first, without repeats.
pub fn shared_state(failure: &Failure) -> Vec<SharedState> {
    let text = format!("{}\n{}", failure.message, failure.text);
    let mut found: Vec<SharedState> = Vec::new();
    let add = |found: &mut Vec<SharedState>, state: SharedState| {
        if !found.contains(&state) {
            found.push(state);
        }
    };
    for caps in MODULE.captures_iter(&text) {
        if let Some(name) = caps.get(1).or_else(|| caps.get(2)) {
            add(&mut found, SharedState::Module(name.as_str().to_owned()));
        }
    }
    for caps in ENV_VAR.captures_iter(&text) {
        if let Some(name) = caps.get(1).or_else(|| caps.get(2)) {
            add(&mut found, SharedState::EnvVar(name.as_str().to_owned()));
        }
    }
    for caps in PATH_CALL
        .captures_iter(&text)
        .chain(PATH_ERROR.captures_iter(&text))
    {
        if let Some(path) = caps.get(1) {
            add(&mut found, SharedState::Path(path.as_str().to_owned()));
        }
    }
    for caps in MISSING_ATTRIBUTE.captures_iter(&text) {
        if let (Some(owner), Some(name)) = (caps.get(1), caps.get(2)) {
            add(
                &mut found,
                SharedState::Attribute(format!("{}.{}", owner.as_str(), name.as_str())),
            );
        }
    }
    for line in failing_source_lines(&failure.text) {
        let code = QUOTED.replace_all(line, "''");
        for caps in DOTTED.captures_iter(&code) {
            let (Some(name), called) = (caps.get(1), caps.get(2).is_some()) else {
                continue;
            };
            let name = name.as_str();
            let skipped = NOT_STATE
                .iter()
                .any(|prefix| name.starts_with(prefix) || name == prefix.trim_end_matches('.'));
            let already = found.iter().any(|state| match state {
                SharedState::Module(module) => name.starts_with(module.as_str()),
                _ => false,
            });
            if !called && !skipped && !already {
                add(&mut found, SharedState::Attribute(name.to_owned()));
            }
        }
    }
    found
}

/// pytest's failing source lines: `>` then the line.
fn failing_source_lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines()
        .filter_map(|line| line.strip_prefix('>'))
        .map(str::trim)
        .filter(|line| !line.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failure(message: &str, text: &str) -> Failure {
        Failure {
            exception: None,
            message: message.to_owned(),
            text: text.to_owned(),
            frames: Vec::new(),
            failing_frame: None,
        }
    }

    #[test]
    fn modules_env_vars_paths_and_attributes() {
        let seen = shared_state(&failure(
            "AssertionError: assert 'plugins.extra' not in {...}",
            "    def test_x():\n>       assert \"plugins.extra\" not in sys.modules\nE       AssertionError",
        ));
        assert_eq!(seen, vec![SharedState::Module("plugins.extra".into())]);

        let seen = shared_state(&failure(
            "AssertionError: assert 'eu' is None",
            ">       assert os.environ.get(\"APP_REGION\") is None",
        ));
        assert_eq!(seen, vec![SharedState::EnvVar("APP_REGION".into())]);
        let seen = shared_state(&failure(
            "KeyError: 'APP_CACHE_DIR'",
            ">       assert os.environ[\"APP_CACHE_DIR\"]",
        ));
        assert_eq!(seen, vec![SharedState::EnvVar("APP_CACHE_DIR".into())]);

        let seen = shared_state(&failure(
            "FileExistsError: [Errno 17] File exists: '/tmp/app/lock'",
            ">       os.mkdir(LOCK)",
        ));
        assert_eq!(seen, vec![SharedState::Path("/tmp/app/lock".into())]);

        let seen = shared_state(&failure(
            "AssertionError: assert 'strict' == 'default'",
            "    def test_reads_default_mode():\n>       assert settings.MODE == \"default\"\nE       AssertionError: assert 'strict' == 'default'",
        ));
        assert_eq!(seen, vec![SharedState::Attribute("settings.MODE".into())]);

        let seen = shared_state(&failure(
            "AttributeError: type object 'Registry' has no attribute 'ready'",
            "",
        ));
        assert_eq!(seen, vec![SharedState::Attribute("Registry.ready".into())]);
    }

    /// Issue 16 item 7: pytest expands `sys.modules` into a dict in the message, and the
    /// source line names the module through a variable.
    #[test]
    fn a_module_is_seen_through_pytest_s_expansion_of_sys_modules() {
        let expanded = "assert 'html.parser' not in {'sys': <module 'sys' (built-in)>, 'builtins': <module 'builtins' (built-in)>, '_frozen_importlib': <module '_frozen_importlib' (frozen)>, ...}";
        let seen = shared_state(&failure(
            expanded,
            &format!(
                "    def test_parser_is_lazy():\n        name = \"html.parser\"\n>       assert name not in sys.modules\nE       {expanded}\nE        +  where {{'sys': <module 'sys' (built-in)>, ...}} = sys.modules"
            ),
        ));
        assert_eq!(seen, vec![SharedState::Module("html.parser".into())]);
        // A dict of plain values is not `sys.modules`.
        let seen = shared_state(&failure("assert 'a.b' not in {'a.b': 1}", ""));
        assert!(seen.is_empty(), "{seen:?}");
    }

    #[test]
    fn calls_and_string_contents_are_not_state() {
        let seen = shared_state(&failure(
            "AssertionError",
            ">       assert os.path.join(\"a.b\", x) == helper.compute(1)",
        ));
        assert!(seen.is_empty(), "{seen:?}");
        let seen = shared_state(&failure("registry has 1 entries, want 0", ""));
        assert!(seen.is_empty(), "{seen:?}");
    }

    #[test]
    fn states_read_as_sentences() {
        assert_eq!(
            SharedState::Module("m".into()).to_string(),
            "module `m` in sys.modules"
        );
        assert_eq!(
            SharedState::EnvVar("X".into()).to_string(),
            "environment variable `X`"
        );
    }
}
