//! A small shop, for `candor demo`: a connection pool that is slow when cold (the timing
//! flake), a plugin registry shared by the whole process (the order-dependent test), and
//! discount codes (where the change under review breaks something).

pub mod checkout;
pub mod discount;
pub mod plugins;
pub mod pool;
pub mod receipts;
pub mod search;
