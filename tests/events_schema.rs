//! Issue #13 item 2: the JSON Schema of candor's lines cannot drift from the code. The
//! committed `docs/events.schema.json` equals the one generated from `candor::events`, and
//! every line the commands print with `--format json` validates against it.

mod triage_support;

use std::path::Path;

/// (b): regenerate with `cargo run --example events_schema > docs/events.schema.json`.
#[test]
fn the_committed_schema_is_the_generated_one() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/events.schema.json");
    let committed =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let generated = candor::events::schema_text();
    assert!(
        committed == generated,
        "{} is not the schema the code generates: run `cargo run --example events_schema > docs/events.schema.json` and commit it\n--- first difference at line {}",
        path.display(),
        committed
            .lines()
            .zip(generated.lines())
            .position(|(a, b)| a != b)
            .map_or_else(
                || committed.lines().count().min(generated.lines().count()) + 1,
                |i| i + 1
            )
    );
}
