//! The names of one block of test ids, front-coded, and LZ4-compressed where the bytes
//! cross a network.

use super::{Corrupt, put_varint, take_varint};

/// First byte of a block of names compressed as one LZ4 block (the PostgreSQL store's,
/// and the SQLite store's before its schema 4); a new packing gets a new one.
const NAMES_LZ4: u8 = 1;

/// First byte of a block of names stored front-coded only, their count before them (the
/// SQLite store's since its schema 4).
const NAMES_FRONT_CODED: u8 = 2;

/// How a block of names is sealed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NamesPacking {
    /// Front-coded, then compressed as one LZ4 block with its length before it: a tenth
    /// of the names' bytes, for a store whose bytes cross the network to a shared server.
    Lz4,
    /// Front-coded only: a quarter of the names' bytes. A test's name is written once in
    /// the history's life and its executions once per run, so the names are a small
    /// share of a history that has seen a few runs, and compressing them was 2% of a
    /// first ingest's CPU time (docs/benchmarks.md, "Issue #15 item 5").
    FrontCoded,
}

/// The names of one block of test ids (`test_names.names`), in id order: a format byte,
/// then each name as the length of the prefix it shares with the one before, the length
/// of the rest, and the rest (both lengths varints). [`NamesPacking::Lz4`] compresses
/// those bytes as one LZ4 block with their length before it; [`NamesPacking::FrontCoded`]
/// puts the number of names before them (a varint), so that a cut block is an error
/// rather than fewer names. Ids follow first
/// sight, so neighbours mostly share their module and class.
pub fn encode_names<S: AsRef<str>>(names: &[S], packing: NamesPacking) -> Vec<u8> {
    match packing {
        NamesPacking::Lz4 => {
            let mut coded = Vec::with_capacity(names.len() * 24);
            front_code(names, &mut coded);
            let compressed = lz4_flex::compress_prepend_size(&coded);
            let mut sealed = Vec::with_capacity(compressed.len() + 1);
            sealed.push(NAMES_LZ4);
            sealed.extend_from_slice(&compressed);
            sealed
        }
        NamesPacking::FrontCoded => {
            let mut sealed = Vec::with_capacity(1 + names.len() * 24);
            sealed.push(NAMES_FRONT_CODED);
            put_varint(&mut sealed, names.len() as u64);
            front_code(names, &mut sealed);
            sealed
        }
    }
}

fn front_code<S: AsRef<str>>(names: &[S], blob: &mut Vec<u8>) {
    let mut previous: &[u8] = &[];
    for name in names {
        let name = name.as_ref().as_bytes();
        let shared = shared_prefix(previous, name);
        put_varint(blob, shared as u64);
        put_varint(blob, (name.len() - shared) as u64);
        blob.extend_from_slice(&name[shared..]);
        previous = name;
    }
}

/// Bytes at the start of `a` and `b` that are the same, eight at a time while they last.
fn shared_prefix(a: &[u8], b: &[u8]) -> usize {
    let mut shared = 0;
    for (x, y) in a.chunks_exact(8).zip(b.chunks_exact(8)) {
        if x != y {
            break;
        }
        shared += 8;
    }
    shared
        + a[shared..]
            .iter()
            .zip(&b[shared..])
            .take_while(|(x, y)| x == y)
            .count()
}

/// The names [`encode_names`] stored, in id order, whichever the packing.
pub fn decode_names(sealed: &[u8]) -> Result<Vec<String>, Corrupt> {
    match sealed.split_first() {
        Some((&NAMES_LZ4, compressed)) => {
            let coded = lz4_flex::decompress_size_prepended(compressed)
                .map_err(|_| Corrupt("names not LZ4"))?;
            decode_front_coded(&coded)
        }
        Some((&NAMES_FRONT_CODED, mut coded)) => {
            let count = take_varint(&mut coded)?;
            let names = decode_front_coded(coded)?;
            if names.len() as u64 == count {
                Ok(names)
            } else {
                Err(Corrupt("a block of names cut short"))
            }
        }
        _ => Err(Corrupt("unknown names format")),
    }
}

fn decode_front_coded(mut rest: &[u8]) -> Result<Vec<String>, Corrupt> {
    let mut names: Vec<String> = Vec::new();
    let mut previous: Vec<u8> = Vec::new();
    while !rest.is_empty() {
        let shared = usize::try_from(take_varint(&mut rest)?).map_err(|_| Corrupt("name"))?;
        let length = usize::try_from(take_varint(&mut rest)?).map_err(|_| Corrupt("name"))?;
        if shared > previous.len() || length > rest.len() {
            return Err(Corrupt("name past the end"));
        }
        previous.truncate(shared);
        previous.extend_from_slice(&rest[..length]);
        rest = &rest[length..];
        let name = std::str::from_utf8(&previous).map_err(|_| Corrupt("name not UTF-8"))?;
        names.push(name.to_owned());
    }
    Ok(names)
}
