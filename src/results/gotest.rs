//! TODO(gotest): streaming parser.

use std::io::BufRead;

use super::{ParseError, ParseOptions, ParseSummary, Sink};

/// Parses a gotest stream, handing each execution to `sink`.
pub fn parse<R: BufRead>(
    reader: R,
    options: &ParseOptions,
    sink: &mut Sink<'_>,
) -> Result<ParseSummary, ParseError> {
    let _ = (reader, options, sink);
    Ok(ParseSummary::default())
}

/// Whether a non-JSON line is `go test`'s report of a package that failed to build
/// (`# pkg [pkg.test]` or `FAIL\tpkg [build failed]`).
pub fn is_build_failure_line(line: &[u8]) -> bool {
    line.starts_with(b"# ") || (line.starts_with(b"FAIL\t") && line.ends_with(b"[build failed]"))
}
