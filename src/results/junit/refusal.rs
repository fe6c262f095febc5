//! Why the reader refused a file: the refusal of one event, placed relative to its start
//! until a line is worked out, and the wording of quick-xml's errors for a person.

use super::content;
use super::markup;
use super::markup::MarkupError;
use super::source::Mark;
use super::source::Relative;
use crate::results::ParseError;
use quick_xml::errors::IllFormedError;
use quick_xml::errors::SyntaxError;

/// Why an event could not be read, placed relative to the event's start: most events are
/// read without ever counting their line, which is only worked out for a refusal.
#[derive(Debug)]
pub(super) enum Refusal {
    Syntax(Relative, String),
    NotResults(Relative, String),
    Placed(ParseError),
}

impl Refusal {
    pub(super) fn placed(self, event: Mark) -> ParseError {
        match self {
            Refusal::Syntax(relative, message) => ParseError::Syntax {
                position: event.at(relative),
                message,
            },
            Refusal::NotResults(relative, message) => ParseError::NotResults {
                position: event.at(relative),
                message,
            },
            Refusal::Placed(error) => error,
        }
    }
}

impl From<ParseError> for Refusal {
    fn from(error: ParseError) -> Refusal {
        Refusal::Placed(error)
    }
}

pub(super) const REFUSED_DOCTYPE: &str =
    "a <!DOCTYPE> declaration: candor refuses DTDs so that no entity is ever expanded or fetched";

pub(super) fn syntax(relative: Relative, message: impl Into<String>) -> Refusal {
    Refusal::Syntax(relative, message.into())
}

pub(super) fn markup_error(error: &MarkupError, skip: usize, bytes: &[u8]) -> Refusal {
    syntax(
        Relative::within(skip, bytes, error.at),
        error.message.clone(),
    )
}

/// Refuses the first character XML forbids in an event's `bytes`, which start `skip`
/// bytes after the event does.
pub(super) fn refuse_forbidden(bytes: &[u8], skip: usize) -> Result<(), Refusal> {
    match markup::first_forbidden(bytes) {
        Some(at) => Err(syntax(
            Relative::within(skip, bytes, at),
            markup::forbidden_message(bytes[at]),
        )),
        None => Ok(()),
    }
}

pub(super) fn outside_root() -> Refusal {
    syntax(Relative::START, content::OUTSIDE_ROOT)
}

pub(super) fn xml_error(error: &quick_xml::Error) -> Refusal {
    let message = match error {
        quick_xml::Error::Io(io) => {
            return Refusal::Placed(ParseError::Io(std::io::Error::new(
                io.kind(),
                io.to_string(),
            )));
        }
        quick_xml::Error::Syntax(syntax) => match syntax {
            SyntaxError::UnclosedCData => {
                "a CDATA section that never ends (no `]]>`): the file was cut short".into()
            }
            SyntaxError::UnclosedComment => "a comment that never ends (no `-->`)".into(),
            SyntaxError::UnclosedDoctype => REFUSED_DOCTYPE.into(),
            SyntaxError::UnclosedPIOrXmlDecl => {
                "a processing instruction or XML declaration that never ends (no `?>`)".into()
            }
            SyntaxError::UnclosedTag => {
                "a tag that never ends (no `>`): the file was cut short".into()
            }
            SyntaxError::InvalidBangMarkup => "unknown markup after `<!`".into(),
        },
        quick_xml::Error::IllFormed(ill) => match ill {
            IllFormedError::MismatchedEndTag { expected, found } => {
                format!("the closing tag </{found}> does not match the open <{expected}>")
            }
            IllFormedError::UnmatchedEndTag(tag) => {
                format!("the closing tag </{tag}> closes nothing")
            }
            IllFormedError::MissingEndTag(tag) => {
                format!("the file ends inside <{tag}>: it was cut short")
            }
            IllFormedError::UnclosedReference => content::UNCLOSED_REFERENCE.into(),
            IllFormedError::MissingDoctypeName => REFUSED_DOCTYPE.into(),
            IllFormedError::MissingDeclVersion(_) => "the XML declaration has no version".into(),
            IllFormedError::DoubleHyphenInComment => "`--` inside a comment".into(),
        },
        other => format!("malformed XML: {other}"),
    };
    syntax(Relative::START, message)
}
