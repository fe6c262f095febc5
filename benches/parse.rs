//! Parser benchmarks (placeholder until the parsers land).

fn main() {}
