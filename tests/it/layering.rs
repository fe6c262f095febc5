//! The module layering docs/architecture.md states, checked on the source: a lower module
//! never names a higher one. Issue #13 item 5 broke three such back-references
//! (`records` → `gate`, `policy` → `history`, `ledger` → `policy`); this keeps them broken,
//! whatever the form of the path (`use crate::gate::…`, `crate::gate::f(…)` in a body,
//! `use crate::{gate, …}`).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// (module, modules it must not name), as docs/architecture.md's "Layering" lists them.
const FORBIDDEN: &[(&str, &[&str])] = &[
    ("records", &["gate", "cli", "app"]),
    ("policy", &["history", "cli", "app"]),
    ("ledger", &["policy", "gate", "history", "cli", "app"]),
    ("file_hashes", &["gate", "records", "policy", "cli", "app"]),
    (
        "results",
        &["history", "policy", "gate", "ledger", "cli", "app"],
    ),
    (
        "stats",
        &["history", "policy", "gate", "ledger", "cli", "app"],
    ),
];

/// The `.rs` files of a top-level module: `src/NAME.rs` and everything under `src/NAME/`.
fn module_files(name: &str) -> Vec<PathBuf> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    let single = src.join(format!("{name}.rs"));
    if single.is_file() {
        files.push(single);
    }
    let mut folders = vec![src.join(name)];
    while let Some(folder) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries {
            let path = entry.expect("a readable folder entry").path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|ext| ext == "rs") {
                files.push(path);
            }
        }
    }
    assert!(!files.is_empty(), "no source files for module `{name}`");
    files
}

/// The top-level modules `text` names through `crate::`: `crate::x::…` anywhere outside a
/// `//` comment, and each name of a `crate::{x, y::z}` group.
fn named_modules(text: &str) -> BTreeSet<String> {
    let code: String = text
        .lines()
        .map(|line| line.find("//").map_or(line, |at| &line[..at]))
        .collect::<Vec<_>>()
        .join("\n");
    let mut names = BTreeSet::new();
    let mut rest = code.as_str();
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            // Only the names at the group's top level: `{a, b::{c, d}}` names a and b.
            let mut depth = 0;
            let mut start = true;
            for (index, ch) in group.char_indices() {
                match ch {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => start = true,
                    c if start && depth == 0 && (c.is_alphabetic() || c == '_') => {
                        let word: String = group[index..]
                            .chars()
                            .take_while(|c| c.is_alphanumeric() || *c == '_')
                            .collect();
                        names.insert(word);
                        start = false;
                    }
                    _ => {}
                }
            }
            rest = &group[end.min(group.len())..];
        } else {
            let word: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            names.insert(word);
        }
    }
    names
}

#[test]
fn lower_modules_never_name_higher_ones() {
    let mut breaches = Vec::new();
    for (module, forbidden) in FORBIDDEN {
        for file in module_files(module) {
            let text = std::fs::read_to_string(&file).expect("a readable source file");
            for name in named_modules(&text) {
                if forbidden.contains(&name.as_str()) {
                    breaches.push(format!("{} names crate::{name}", file.display()));
                }
            }
        }
    }
    assert!(
        breaches.is_empty(),
        "back-references (see docs/architecture.md, Layering):\n{}",
        breaches.join("\n")
    );
}

#[test]
fn the_check_sees_every_form_of_a_path() {
    // A check that cannot fail proves nothing: each form a back-reference can take is seen.
    let forms = [
        "use crate::gate::locks::ReadError;",
        "let x = crate::gate::locks::hash_folder(root, f)?;",
        "use crate::{results::Outcome, gate};",
        "use crate::{\n    gate::{locks, lane},\n    results,\n};",
    ];
    for form in forms {
        assert!(named_modules(form).contains("gate"), "{form}");
    }
    assert!(!named_modules("// crate::gate::x in a comment").contains("gate"));
    assert_eq!(
        named_modules("use crate::{a::{b, c}, d};"),
        BTreeSet::from(["a".to_owned(), "d".to_owned()])
    );
}
