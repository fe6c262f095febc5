//! How each command's events read for people: one [`Render`](super::Render) per command,
//! today's text and colors.

mod classify;
mod clean;
mod compare;
mod freeze;
mod gate;
mod ingest;
mod ledger;
mod lint;
mod lint_diff;
mod lock;
mod order;
mod reliability;
mod show;
mod tests;
mod verdicts;

pub use self::classify::Classify;
pub use self::clean::Clean;
pub use self::compare::{Compare, repro};
pub use self::freeze::Freeze;
pub use self::gate::Gate;
pub use self::ingest::Ingest;
pub use self::ledger::Ledger;
pub use self::lint::Lint;
pub use self::lint_diff::LintDiff;
pub use self::lock::Lock;
pub use self::order::order;
pub use self::reliability::Reliability;
pub use self::show::show;
pub use self::tests::tests;
pub use self::verdicts::Verdicts;

/// For a command whose text needs more than its event holds (`order`, `repro`): the
/// event is left to the command, which prints the workflow's result after the sink.
#[derive(Debug, Default)]
pub struct Later;

impl super::Render for Later {
    fn render(
        &mut self,
        printer: &mut super::Printer,
        event: &crate::events::Event,
    ) -> std::io::Result<()> {
        match event {
            crate::events::Event::Text(text) => super::text(printer, text),
            _ => Ok(()),
        }
    }
}
