//! How the PostgreSQL store packs one run's executions into rows of `execution_blocks`:
//! the same entries and outcomes blobs as the SQLite store (`history::packed`), plus the
//! block's failure signatures and compressed details in one blob. Pure: rows in, rows out.

use crate::history::packed::{BlockBuilder, Corrupt, Narrow, block_and_slot};

/// One stored row of `execution_blocks` (without the run's id and start, which the
/// caller knows).
#[derive(Debug, Clone, PartialEq)]
pub struct BlockRow {
    /// `test_id / 256`.
    pub block: i64,
    /// Half a byte per slot: 0 absent, else the outcome code plus one.
    pub outcomes: Vec<u8>,
    /// [`BlockBuilder::entries`].
    pub entries: Vec<u8>,
    /// [`DetailsBlob`]: `None` when no execution of the block has a signature or details.
    pub details: Option<Vec<u8>>,
}

/// Gathers one run's executions given in ascending test id order into block rows; only
/// the block being filled is held.
#[derive(Debug, Default)]
pub struct BlockWriter {
    current: Option<(i64, BlockBuilder, DetailsBlob)>,
    done: Vec<BlockRow>,
    executions: u64,
}

impl BlockWriter {
    /// Adds the execution of test `test`, which must not be below the previous one's.
    /// A test given twice keeps the later execution (the caller merges retries first).
    pub fn add(
        &mut self,
        test: i64,
        narrow: Narrow,
        signature: Option<&[u8]>,
        details: Option<&[u8]>,
    ) {
        let (block, slot) = block_and_slot(test);
        if self
            .current
            .as_ref()
            .is_none_or(|(held, _, _)| *held != block)
        {
            self.finish_block();
            self.current = Some((block, BlockBuilder::default(), DetailsBlob::default()));
        }
        if let Some((_, builder, blob)) = &mut self.current {
            builder.set(slot, narrow);
            if signature.is_some() || details.is_some() {
                blob.push(slot, signature, details);
            }
        }
        self.executions += 1;
    }

    fn finish_block(&mut self) {
        if let Some((block, builder, blob)) = self.current.take()
            && !builder.is_empty()
        {
            self.done.push(BlockRow {
                block,
                outcomes: builder.outcomes(),
                entries: builder.entries(),
                details: blob.into_bytes(),
            });
        }
    }

    /// The rows finished so far (every block before the one being filled).
    pub fn take_done(&mut self) -> Vec<BlockRow> {
        std::mem::take(&mut self.done)
    }

    /// Every row not taken yet, the last block included.
    pub fn finish(mut self) -> (Vec<BlockRow>, u64) {
        self.finish_block();
        (self.done, self.executions)
    }
}

/// The row of one block gathered out of order (the ingest's [`BlockBuilder`] and its
/// slots' signatures and details, ascending by slot).
pub fn block_row<'a>(
    block: i64,
    builder: &BlockBuilder,
    details: impl Iterator<Item = (usize, Option<&'a [u8]>, Option<&'a [u8]>)>,
) -> BlockRow {
    let mut blob = DetailsBlob::default();
    for (slot, signature, details) in details {
        if signature.is_some() || details.is_some() {
            blob.push(slot, signature, details);
        }
    }
    BlockRow {
        block,
        outcomes: builder.outcomes(),
        entries: builder.entries(),
        details: blob.into_bytes(),
    }
}

/// A block's signatures and details: per execution that has either, in slot order,
/// `slot: u8`, then the signature and the details (already LZ4-compressed JSON) each as a
/// `u32` little-endian length plus one (0: none) and the bytes.
#[derive(Debug, Default)]
pub struct DetailsBlob {
    bytes: Vec<u8>,
}

impl DetailsBlob {
    fn push(&mut self, slot: usize, signature: Option<&[u8]>, details: Option<&[u8]>) {
        // A slot is below `BLOCK_TESTS` (256): one byte.
        self.bytes.push(u8::try_from(slot).unwrap_or(u8::MAX));
        for part in [signature, details] {
            match part {
                Some(bytes) => {
                    let len = u32::try_from(bytes.len()).unwrap_or(u32::MAX - 1);
                    self.bytes.extend_from_slice(&(len + 1).to_le_bytes());
                    self.bytes.extend_from_slice(bytes);
                }
                None => self.bytes.extend_from_slice(&0u32.to_le_bytes()),
            }
        }
    }

    fn into_bytes(self) -> Option<Vec<u8>> {
        (!self.bytes.is_empty()).then_some(self.bytes)
    }
}

/// One execution's signature and compressed details, as a [`DetailsBlob`] holds them.
pub type SlotDetails<'a> = (Option<&'a [u8]>, Option<&'a [u8]>);

/// Reads a [`DetailsBlob`]: what each slot that has a signature or details holds.
pub fn read_details(blob: &[u8]) -> Result<Vec<(usize, SlotDetails<'_>)>, Corrupt> {
    fn part<'a>(input: &mut &'a [u8]) -> Result<Option<&'a [u8]>, Corrupt> {
        let (len, rest) = input
            .split_first_chunk::<4>()
            .ok_or_else(Corrupt::truncated)?;
        let len = u32::from_le_bytes(*len) as usize;
        *input = rest;
        if len == 0 {
            return Ok(None);
        }
        let (bytes, rest) = input
            .split_at_checked(len - 1)
            .ok_or_else(Corrupt::truncated)?;
        *input = rest;
        Ok(Some(bytes))
    }
    let mut input = blob;
    let mut found = Vec::new();
    while let Some((&slot, rest)) = input.split_first() {
        input = rest;
        let signature = part(&mut input)?;
        let details = part(&mut input)?;
        found.push((usize::from(slot), (signature, details)));
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::packed::{Entries, outcome_nibble};
    use crate::results::Outcome;

    fn narrow(outcome: Outcome) -> Narrow {
        Narrow {
            outcome,
            duration: Some(0.25),
            attempts: 1,
            file: Some("t.py".into()),
            line: None,
        }
    }

    #[test]
    fn tests_in_id_order_fill_one_row_per_block_and_read_back() {
        let mut writer = BlockWriter::default();
        writer.add(3, narrow(Outcome::Pass), None, None);
        writer.add(255, narrow(Outcome::Fail), Some(b"sig"), Some(b"lz4"));
        assert!(
            writer.take_done().is_empty(),
            "block 0 is open until a later block comes"
        );
        writer.add(256, narrow(Outcome::Skip), None, Some(b"skip"));
        let mut rest = writer.take_done();
        assert_eq!(rest.len(), 1, "block 0 is done once block 1 begins");
        writer.add(600, narrow(Outcome::Error), Some(b""), None);
        let (last, executions) = writer.finish();
        rest.extend(last);
        assert_eq!(executions, 4);
        let blocks: Vec<i64> = rest.iter().map(|row| row.block).collect();
        assert_eq!(blocks, [0, 1, 2]);
        assert_eq!(outcome_nibble(&rest[0].outcomes, 3), 1);
        assert_eq!(outcome_nibble(&rest[0].outcomes, 255), 2);
        assert_eq!(outcome_nibble(&rest[0].outcomes, 4), 0);
        let mut entries = Entries::new(&rest[0].entries).unwrap();
        assert_eq!(entries.next_entry().unwrap().unwrap().0, 3);
        assert_eq!(entries.next_entry().unwrap().unwrap().0, 255);
        assert!(entries.next_entry().unwrap().is_none());
        assert_eq!(
            read_details(rest[0].details.as_deref().unwrap()).unwrap(),
            [(255, (Some(&b"sig"[..]), Some(&b"lz4"[..])))]
        );
        assert_eq!(
            read_details(rest[1].details.as_deref().unwrap()).unwrap(),
            [(0, (None, Some(&b"skip"[..])))]
        );
        // An empty signature is not no signature.
        assert_eq!(
            read_details(rest[2].details.as_deref().unwrap()).unwrap(),
            [(600 - 512, (Some(&b""[..]), None))]
        );
    }

    #[test]
    fn a_truncated_details_blob_is_corrupt_not_a_panic() {
        let mut blob = DetailsBlob::default();
        blob.push(7, Some(b"signature"), Some(b"details"));
        let bytes = blob.into_bytes().unwrap();
        for cut in 1..bytes.len() {
            assert!(read_details(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        assert_eq!(read_details(&bytes).unwrap().len(), 1);
    }
}
