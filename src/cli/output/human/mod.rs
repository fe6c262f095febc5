//! How each command's events read for people: one [`Render`](super::Render) per command,
//! today's text and colors.

mod clean;
mod ingest;
mod verdicts;

pub use self::clean::Clean;
pub use self::ingest::Ingest;
pub use self::verdicts::Verdicts;
