//! The names of one block of test ids, front-coded and LZ4-compressed.

use super::{Corrupt, put_varint, take_varint};

/// First byte of a stored block of names; a new packing gets a new one.
const NAMES_FORMAT: u8 = 1;

/// The names of one block of test ids (`test_names.names`), in id order: a format byte,
/// then, compressed as one LZ4 block with its length before it, each name as the length
/// of the prefix it shares with the one before, the length of the rest, and the rest
/// (both lengths varints). Ids follow first sight, so neighbours mostly share their
/// module and class; the two together take a tenth of the bytes of the names.
pub fn encode_names<S: AsRef<str>>(names: &[S]) -> Vec<u8> {
    let coded = front_code(names);
    let compressed = lz4_flex::compress_prepend_size(&coded);
    let mut sealed = Vec::with_capacity(compressed.len() + 1);
    sealed.push(NAMES_FORMAT);
    sealed.extend_from_slice(&compressed);
    sealed
}

fn front_code<S: AsRef<str>>(names: &[S]) -> Vec<u8> {
    let mut blob = Vec::with_capacity(names.len() * 24);
    let mut previous: &[u8] = &[];
    for name in names {
        let name = name.as_ref().as_bytes();
        let shared = shared_prefix(previous, name);
        put_varint(&mut blob, shared as u64);
        put_varint(&mut blob, (name.len() - shared) as u64);
        blob.extend_from_slice(&name[shared..]);
        previous = name;
    }
    blob
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

/// The names [`encode_names`] stored, in id order.
pub fn decode_names(sealed: &[u8]) -> Result<Vec<String>, Corrupt> {
    let coded = match sealed.split_first() {
        Some((&NAMES_FORMAT, compressed)) => {
            lz4_flex::decompress_size_prepended(compressed).map_err(|_| Corrupt("names not LZ4"))?
        }
        _ => return Err(Corrupt("unknown names format")),
    };
    let mut names: Vec<String> = Vec::new();
    let mut rest = coded.as_slice();
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
