//! Statistics: pure functions over outcomes — rolling windows, Wilson intervals and the
//! reliability tier state machine, and the sequential branch-vs-base test of `compare`.
//! Each method names its source; nothing here does I/O.

pub mod sequential;
pub mod tiers;
pub mod wilson;
pub mod window;
