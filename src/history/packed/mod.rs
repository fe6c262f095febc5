//! The packed forms the SQLite store keeps executions and test names in: test ids grouped
//! in blocks, one run's executions of one block as one blob, their outcomes apart as half
//! a byte each, the 64-bit hash a test name is found by, and the filter that tells an
//! ingest which names are new. Pure: no SQL, no I/O. docs/storage-layout.md says why.
//! Here: the block arithmetic, outcome codes, the error and varints every form shares;
//! each form in its own submodule.

mod blocks;
mod details;
mod filter;
mod hash;
mod index;
mod names;
#[cfg(test)]
mod tests;

pub use blocks::{BlockBuilder, Entries, Narrow, outcome_nibble, outcome_of_nibble};
pub use details::{
    Details, find_details, open_details, put_details, seal_details, seal_details_in,
};
pub use filter::NameFilter;
pub use hash::{BlockMap, BlockSet, name_hash};
pub use index::{
    IndexEntry, NewNames, decode_index, encode_index, index_lookup, merged_rows, write_merged_rows,
};
pub use names::{NamesPacking, decode_names, encode_names};

use crate::results::Outcome;

/// Test ids per block. A run's executions of the tests `block * BLOCK_TESTS ..
/// (block + 1) * BLOCK_TESTS` are one row of `execution_blocks` and one of
/// `outcome_blocks`. Test ids are handed out densely in first-seen order, so a run's tests
/// fill few blocks and fill them well. Part of the schema: changing it needs a migration.
pub const BLOCK_TESTS: usize = 256;

/// The block a test id falls in, and its slot there.
pub fn block_and_slot(test: i64) -> (i64, usize) {
    let size = BLOCK_TESTS as i64;
    (test.div_euclid(size), test.rem_euclid(size) as usize)
}

/// The test id of `slot` in `block`.
pub fn test_of(block: i64, slot: usize) -> i64 {
    block * BLOCK_TESTS as i64 + slot as i64
}

/// The stored code of an outcome: its index in [`Outcome::ALL`], spelled out so that the
/// stored data does not change if that list is reordered.
pub fn outcome_code(outcome: Outcome) -> u8 {
    match outcome {
        Outcome::Pass => 0,
        Outcome::Fail => 1,
        Outcome::Error => 2,
        Outcome::Skip => 3,
        Outcome::FlakyPass => 4,
    }
}

/// The outcome of a stored code.
pub fn outcome_of(code: u8) -> Option<Outcome> {
    match code {
        0 => Some(Outcome::Pass),
        1 => Some(Outcome::Fail),
        2 => Some(Outcome::Error),
        3 => Some(Outcome::Skip),
        4 => Some(Outcome::FlakyPass),
        _ => None,
    }
}

/// Packed data this build cannot read: a damaged database, or one written by a candor
/// that packs differently under the same schema version (which a release must not do).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unreadable packed executions: {0}")]
pub struct Corrupt(&'static str);

impl Corrupt {
    /// An outcome row names an execution that its block's entries do not hold.
    pub fn missing() -> Corrupt {
        Corrupt("an outcome row names an execution its block does not hold")
    }

    /// A test id with no name.
    pub fn unnamed() -> Corrupt {
        Corrupt("a test id with no name")
    }

    /// A blob that ends in the middle of an entry.
    pub fn truncated() -> Corrupt {
        Corrupt("a blob ends in the middle of an entry")
    }

    /// An outcome code no build of candor writes.
    pub fn unknown_outcome() -> Corrupt {
        Corrupt("unknown outcome code")
    }
}

fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

fn take_varint(input: &mut &[u8]) -> Result<u64, Corrupt> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let (&byte, rest) = input.split_first().ok_or(Corrupt("varint past the end"))?;
        *input = rest;
        value |= u64::from(byte & 0x7F) << shift;
        if byte & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err(Corrupt("varint too long"))
}
