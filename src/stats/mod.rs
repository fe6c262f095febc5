//! Statistics: pure functions over outcomes — rolling windows, Wilson intervals and the
//! reliability tier state machine. Each method names its source; nothing here does I/O.

pub mod tiers;
pub mod wilson;
pub mod window;
