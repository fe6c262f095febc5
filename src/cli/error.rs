//! The command line's errors are the workflows' ([`crate::app::error`]): one enum, so that
//! a hint is written once for every sink that shows it.

pub use crate::app::error::{AppError as CliError, history_hint};
