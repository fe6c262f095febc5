//! How each command's events read for people: one [`Render`](super::Render) per command,
//! today's text and colors.

mod clean;
mod ingest;
mod show;
mod tests;
mod verdicts;

pub use self::clean::Clean;
pub use self::ingest::Ingest;
pub use self::show::Show;
pub use self::tests::Tests;
pub use self::verdicts::Verdicts;
