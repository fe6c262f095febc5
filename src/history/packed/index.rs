//! The name index (`test_name_index`): rows of (name hash, test id) sorted by hash, and
//! the names an ingest has added and not yet written to it.

use super::Corrupt;

/// Entries of a `test_name_index` row at most: 6 KiB, and a row of the index is read
/// whole for each lookup.
pub const INDEX_ROW_ENTRIES: usize = 512;

/// Bytes of one name index entry: the name hash (i64) and the test id (u32), little-endian.
const INDEX_ENTRY_BYTES: usize = 12;

/// One entry of the name index: a name hash and the test it names.
pub type IndexEntry = (i64, u32);

/// A `test_name_index` row's entries, sorted by hash then id.
pub fn encode_index(entries: &[IndexEntry]) -> Vec<u8> {
    let mut blob = Vec::with_capacity(entries.len() * INDEX_ENTRY_BYTES);
    encode_index_into(entries, &mut blob);
    blob
}

/// [`encode_index`] appended to `blob`.
fn encode_index_into(entries: &[IndexEntry], blob: &mut Vec<u8>) {
    blob.reserve(entries.len() * INDEX_ENTRY_BYTES);
    for &(hash, id) in entries {
        blob.extend_from_slice(&hash.to_le_bytes());
        blob.extend_from_slice(&id.to_le_bytes());
    }
}

/// The entries [`encode_index`] stored.
pub fn decode_index(blob: &[u8]) -> Result<Vec<IndexEntry>, Corrupt> {
    if !blob.len().is_multiple_of(INDEX_ENTRY_BYTES) {
        return Err(Corrupt("name index row of a partial entry"));
    }
    Ok(blob
        .chunks_exact(INDEX_ENTRY_BYTES)
        .map(|entry| {
            let (hash, id) = entry.split_at(8);
            let mut raw_hash = [0u8; 8];
            raw_hash.copy_from_slice(hash);
            let mut raw_id = [0u8; 4];
            raw_id.copy_from_slice(id);
            (i64::from_le_bytes(raw_hash), u32::from_le_bytes(raw_id))
        })
        .collect())
}

/// The test ids a name index row holds for `hash`: a binary search, then the run of
/// equal hashes (names that share one).
pub fn index_lookup(blob: &[u8], hash: i64) -> Result<Vec<u32>, Corrupt> {
    let entries = decode_index(blob)?;
    let start = entries.partition_point(|&(known, _)| known < hash);
    Ok(entries[start..]
        .iter()
        .take_while(|&&(known, _)| known == hash)
        .map(|&(_, id)| id)
        .collect())
}

/// Merges two sorted entry lists into one.
pub fn merge_index(old: &[IndexEntry], new: &[IndexEntry]) -> Vec<IndexEntry> {
    let mut merged = Vec::with_capacity(old.len() + new.len());
    let (mut a, mut b) = (old.iter().peekable(), new.iter().peekable());
    loop {
        let next = match (a.peek(), b.peek()) {
            (Some(x), Some(y)) if x <= y => a.next(),
            (Some(_) | None, Some(_)) => b.next(),
            (Some(_), None) => a.next(),
            (None, None) => break,
        };
        merged.extend(next.copied());
    }
    merged
}

/// Cuts sorted entries into rows of at most [`INDEX_ROW_ENTRIES`], about evenly, never
/// between two entries of the same hash (a lookup reads the one row its hash falls in).
pub fn split_index(entries: &[IndexEntry]) -> Vec<&[IndexEntry]> {
    let rows = entries.len().div_ceil(INDEX_ROW_ENTRIES * 3 / 4).max(1);
    let target = entries.len().div_ceil(rows);
    let mut pieces = Vec::with_capacity(rows);
    let mut rest = entries;
    while rest.len() > INDEX_ROW_ENTRIES {
        let mut cut = target.min(rest.len());
        while cut < rest.len() && rest[cut].0 == rest[cut - 1].0 {
            cut += 1;
        }
        let (piece, after) = rest.split_at(cut);
        pieces.push(piece);
        rest = after;
    }
    if !rest.is_empty() {
        pieces.push(rest);
    }
    pieces
}

/// The rows a name index row holds once `new` (sorted, every hash at or above `first`
/// and below the next row's first hash) is merged into its entries `old`: the first
/// keeps the row's key, the others are new rows keyed by their first hash. `None` for
/// `first`: the index is empty, and its first row starts at the smallest hash there is.
/// Both stores write what this returns (an update of the first, inserts of the rest).
pub fn merged_rows(
    first: Option<i64>,
    old: &[IndexEntry],
    new: &[IndexEntry],
) -> Vec<(i64, Vec<u8>)> {
    let mut rows = Vec::new();
    let collected: Result<(), std::convert::Infallible> =
        write_merged_rows(first, old, new, |_, key, entries| {
            rows.push((key, entries.to_vec()));
            Ok(())
        });
    let Ok(()) = collected;
    rows
}

/// The rows of [`merged_rows`] handed to `write` in the same order (with whether it is
/// the first, the row that keeps its key), each encoded in one
/// buffer kept for the next: a first ingest's 200,000 new names are neither copied into
/// a merged list (nothing to merge them with) nor held as rows all at once, memory the
/// kernel would fault in page by page.
pub fn write_merged_rows<E>(
    first: Option<i64>,
    old: &[IndexEntry],
    new: &[IndexEntry],
    mut write: impl FnMut(bool, i64, &[u8]) -> Result<(), E>,
) -> Result<(), E> {
    let merged_list;
    let merged = if old.is_empty() {
        new
    } else {
        merged_list = merge_index(old, new);
        &merged_list
    };
    let mut blob = Vec::new();
    for (index, piece) in split_index(merged).into_iter().enumerate() {
        let key = if index == 0 {
            first.unwrap_or(i64::MIN)
        } else {
            piece[0].0
        };
        blob.clear();
        encode_index_into(piece, &mut blob);
        write(index == 0, key, &blob)?;
    }
    Ok(())
}

/// Names from which [`sorted_entries`] deals by digits before it compares.
const RADIX_FROM: usize = 1 << 14;

/// The index entries of names with these hashes and the ids from `first_id` on, sorted
/// by hash, equal hashes by id (the order they were added in). Name hashes are spread
/// evenly, so one pass that deals the entries out by their hash's top 16 bits leaves
/// buckets of a few entries each, which a comparison sort finishes at once. Four passes
/// of 16 bits each (the LSD radix sort this replaced) wrote each entry to one of 65,536
/// places four times: the sort went from 3.0% to 2.0% of a one-core first ingest's
/// samples. Names made to share their top bits only make one bucket large: it is sorted
/// in O(n log n) like any other.
fn sorted_entries(hashes: &[i64], first_id: u32) -> Vec<IndexEntry> {
    let entry = |(position, &hash): (usize, &i64)| (hash, first_id + position as u32);
    // Below this, the pass over the table of counts costs more than it saves.
    if hashes.len() < RADIX_FROM {
        let mut entries: Vec<IndexEntry> = hashes.iter().enumerate().map(entry).collect();
        entries.sort_unstable();
        return entries;
    }
    let bucket = |hash: i64| (((hash as u64) ^ (1 << 63)) >> 48) as usize;
    // `ends[b]`: where bucket `b` starts, and once dealt, where it ends.
    let mut ends = vec![0usize; 1 << 16];
    for &hash in hashes {
        ends[bucket(hash)] += 1;
    }
    let mut total = 0;
    for end in &mut ends {
        let count = *end;
        *end = total;
        total += count;
    }
    // Dealt straight from the hashes: no list of entries in id order is made first.
    let mut dealt = vec![(0i64, 0u32); hashes.len()];
    for (position, hash) in hashes.iter().enumerate() {
        let at = &mut ends[bucket(*hash)];
        dealt[*at] = entry((position, hash));
        *at += 1;
    }
    let mut start = 0;
    for &end in &ends {
        if end - start > 1 {
            dealt[start..end].sort_unstable();
        }
        start = end;
    }
    dealt
}

/// The names an ingest has added and not yet written to the name index: their hashes in
/// id order, found again by an open-addressing table of positions (8 bytes a name beside
/// the hash), so that a second execution of a new test finds its id without SQL.
#[derive(Debug, Clone)]
pub struct NewNames {
    first_id: i64,
    hashes: Vec<i64>,
    /// The low half of a name's hash above its position in `hashes` plus one; 0 is
    /// free. Never more than half full. A probe compares the halves before it reads
    /// `hashes`, whose line is a second cache miss.
    slots: Vec<u64>,
}

impl NewNames {
    /// None yet; the first one added gets `first_id`.
    pub fn new(first_id: i64) -> NewNames {
        NewNames {
            first_id,
            hashes: Vec::new(),
            slots: vec![0; 1024],
        }
    }

    /// Names held.
    pub fn len(&self) -> usize {
        self.hashes.len()
    }

    /// No name held.
    pub fn is_empty(&self) -> bool {
        self.hashes.is_empty()
    }

    /// The id the next name gets.
    pub fn next_id(&self) -> i64 {
        self.first_id + self.hashes.len() as i64
    }

    fn home_slot(&self, hash: i64) -> usize {
        (((hash as u64 >> 32) * self.slots.len() as u64) >> 32) as usize
    }

    /// What the first slot a name with this hash is looked for in holds: a cheap read
    /// that brings its place in the table into the cache before a lookup or a push.
    pub fn home(&self, hash: i64) -> u32 {
        self.slots
            .get(self.home_slot(hash))
            .map_or(0, |&slot| slot as u32)
    }

    /// Adds a name with this hash; returns its id.
    pub fn push(&mut self, hash: i64) -> i64 {
        if (self.hashes.len() + 1) * 2 > self.slots.len() {
            self.slots = vec![0; self.slots.len() * 2];
            for position in 0..self.hashes.len() {
                self.place(position);
            }
        }
        self.hashes.push(hash);
        self.place(self.hashes.len() - 1);
        self.next_id() - 1
    }

    fn place(&mut self, position: usize) {
        let hash = self.hashes[position];
        let mut at = self.home_slot(hash);
        while self.slots[at] != 0 {
            at = (at + 1) % self.slots.len();
        }
        self.slots[at] = (u64::from(hash as u32) << 32) | (position as u64 + 1);
    }

    /// The ids of the names held with this hash.
    pub fn find(&self, hash: i64) -> Vec<i64> {
        let mut found = Vec::new();
        let mut at = self.home_slot(hash);
        let tag = u64::from(hash as u32);
        while let Some(&slot) = self.slots.get(at).filter(|&&slot| slot != 0) {
            let position = (slot & 0xFFFF_FFFF) as usize - 1;
            if slot >> 32 == tag && self.hashes[position] == hash {
                found.push(self.first_id + position as i64);
            }
            at = (at + 1) % self.slots.len();
        }
        found
    }

    /// The held names as index entries, sorted; and empties the set, whose next name
    /// gets the id after the last one.
    pub fn take_sorted(&mut self) -> Result<Vec<IndexEntry>, Corrupt> {
        let beyond = |_| Corrupt("test id beyond 4,294,967,295");
        let first_id = if self.hashes.is_empty() {
            0
        } else {
            // The last id must fit as well as the first.
            u32::try_from(self.next_id() - 1).map_err(beyond)?;
            u32::try_from(self.first_id).map_err(beyond)?
        };
        self.first_id = self.next_id();
        // Freed before the sort's buffer is made: a merge of a million names is the
        // ingest's largest moment in memory.
        self.slots = vec![0; 1024];
        let hashes = std::mem::take(&mut self.hashes);
        Ok(sorted_entries(&hashes, first_id))
    }

    /// Every hash held.
    pub fn hashes(&self) -> &[i64] {
        &self.hashes
    }
}
