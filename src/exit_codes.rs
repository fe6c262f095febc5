//! Exit codes, named once: every command maps its outcome to one of these.

/// Success, or the verdict is positive (accepted, no regression).
pub const OK: u8 = 0;
/// The command worked and its verdict is negative (regression, rejected, budget exceeded).
pub const NEGATIVE: u8 = 1;
/// Usage, configuration or input error: nothing was decided and nothing half-written.
pub const USAGE_OR_INPUT: u8 = 2;
/// Added to a signal number for a child killed by that signal, as shells do.
pub const SIGNAL_BASE: u8 = 128;
