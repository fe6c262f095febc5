//! The filter that tells an ingest which test names a history cannot hold.

/// Which names a history may hold: no false "absent", about one false "maybe" in 200 at
/// the filter's capacity. An ingest asks it first, so that a test the history has never
/// seen costs no lookup; a "maybe" is settled by the index on the name hash. Each name
/// sets four bits of one 64-bit word (one cache miss per question), 16 bits per name of
/// capacity: memory grows with the history's tests, two bytes each, not with the file.
#[derive(Debug, Clone)]
pub struct NameFilter {
    words: Vec<u64>,
    capacity: usize,
    len: usize,
}

impl NameFilter {
    const BITS_PER_NAME: usize = 16;

    /// A filter for up to `capacity` names.
    pub fn with_capacity(capacity: usize) -> NameFilter {
        let capacity = capacity.max(1024);
        NameFilter {
            words: vec![0; capacity * Self::BITS_PER_NAME / 64],
            capacity,
            len: 0,
        }
    }

    /// Names the filter is sized for.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Names added.
    pub fn len(&self) -> usize {
        self.len
    }

    fn place(&self, hash: i64) -> (usize, u64) {
        let hash = hash as u64;
        // The high half picks the word (a multiply instead of a division), the low bits
        // the four bits in it.
        let word = ((hash >> 32) * self.words.len() as u64) >> 32;
        let mask = (1u64 << (hash & 63))
            | (1u64 << ((hash >> 6) & 63))
            | (1u64 << ((hash >> 12) & 63))
            | (1u64 << ((hash >> 18) & 63));
        (word as usize, mask)
    }

    /// Adds the name with this [`name_hash`].
    pub fn insert(&mut self, hash: i64) {
        let (word, mask) = self.place(hash);
        if let Some(bits) = self.words.get_mut(word) {
            *bits |= mask;
        }
        self.len += 1;
    }

    /// False only when no name with this hash was added.
    pub fn may_contain(&self, hash: i64) -> bool {
        let (word, mask) = self.place(hash);
        self.words.get(word).is_none_or(|bits| bits & mask == mask)
    }
}
