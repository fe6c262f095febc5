//! The hashes of the packed forms: the 64-bit hash a test name is found by (XXH64 from
//! `xxhash-rust`; part of the stored data) and the cheap hasher of the in-memory maps
//! keyed by block (never stored).

use xxhash_rust::xxh64::xxh64;

/// Hashes the integer keys of in-memory maps of blocks (a multiply: the keys are dense
/// small integers, and std's SipHash cost more than the map's work).
#[derive(Debug, Default, Clone, Copy)]
pub struct BlockHasher(u64);

impl std::hash::Hasher for BlockHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(byte)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_i64(&mut self, value: i64) {
        self.0 = (self.0 ^ value as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// A map keyed by block.
pub type BlockMap<V> =
    std::collections::HashMap<i64, V, std::hash::BuildHasherDefault<BlockHasher>>;

/// A set of blocks.
pub type BlockSet = std::collections::HashSet<i64, std::hash::BuildHasherDefault<BlockHasher>>;

/// The hash a test name is found by: XXH64 with seed 0 of its UTF-8 bytes (Yann Collet's
/// xxHash, <https://github.com/Cyan4973/xxHash/blob/dev/doc/xxhash_spec.md>), as the
/// signed integer SQLite stores. Fixed forever: every stored name's hash was made by it
/// (the tests pin the values the hand-written XXH64 of earlier releases gave).
pub fn name_hash(name: &str) -> i64 {
    xxh64(name.as_bytes(), 0) as i64
}
