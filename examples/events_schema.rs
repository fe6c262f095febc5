//! Prints the JSON Schema of candor's event lines. `docs/events.schema.json` is its output:
//! `cargo run --example events_schema > docs/events.schema.json` after changing an event
//! (`tests/events_schema.rs` fails until the committed file matches).

fn main() {
    print!("{}", candor::events::schema_text());
}
