//! TODO(junit): streaming parser.

use std::io::BufRead;

use super::{ParseError, ParseOptions, ParseSummary, Sink};

/// Parses a junit stream, handing each execution to `sink`.
pub fn parse<R: BufRead>(
    reader: R,
    options: &ParseOptions,
    sink: &mut Sink<'_>,
) -> Result<ParseSummary, ParseError> {
    let _ = (reader, options, sink);
    Ok(ParseSummary::default())
}
