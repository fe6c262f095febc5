//! The packed forms give back what was put in, refuse damaged bytes, and hash names as
//! stored histories expect.

use super::blocks::stored_duration;
use super::index::{INDEX_ROW_ENTRIES, encode_index, merge_index, split_index};
use super::*;
use crate::results::{Failure, Frame};
use crate::test_support::proptest_config;
use proptest::prelude::*;

/// Issue #13 item 5: the hand-written XXH64 gave way to `xxhash-rust`. Every name hash in
/// a stored history was made by the old code, so `name_hash` must give exactly what it
/// gave: these values were computed by the hand-written XXH64 before it was removed
/// (every length class of the algorithm: empty, under 4, 4..8, 8..32, 32 and over,
/// non-ASCII), and the first four are the reference implementation's `xxhsum -H64`.
#[test]
fn name_hashes_are_the_ones_stored_histories_hold() {
    let pinned: [(&str, u64); 16] = [
        ("", 0xEF46_DB37_51D8_E999),
        ("a", 0xD24E_C4F1_A98C_6E5B),
        ("abc", 0x44BC_2CF5_AD77_0999),
        (
            "Nobody inspects the spammish repetition",
            0xFBCE_A83C_8A37_8BF1,
        ),
        ("abcd", 0xDE03_27B0_D25D_92CC),
        ("abcdefg", 0x1860_940E_2902_822D),
        ("abcdefgh", 0x3AD3_5177_5B46_34B7),
        ("tests/test_a.py::test_one", 0x52C7_E100_1210_731F),
        (
            "tests/pkg3/test_module17.py::TestClass::test_name_with_a_long_suffix[param-1]",
            0x45F8_9585_357D_BB5F,
        ),
        ("crate::module::tests::it_works", 0x4877_462B_19AC_AF89),
        (
            "github.com/acme/pkg/TestSomething/sub_case#01",
            0x1B7E_76A5_F7B5_E507,
        ),
        ("ünïcödé::テスト::🦀", 0xD118_EB33_BC3C_57A5),
        ("xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", 0x60DD_0D01_083B_99F0),
        ("yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy", 0x64DA_1F1D_3495_CE66),
        ("zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz", 0xC524_1253_C64E_0268),
        (WS, 0x5674_932B_2390_D9D1),
    ];
    for (name, hash) in pinned {
        assert_eq!(name_hash(name), hash as i64, "name_hash({name:?})");
    }
}

/// A hundred `w`s: the 32-byte stripes and the tail after them.
const WS: &str = "wwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwww";

#[test]
fn blocks_and_slots_cover_the_ids() {
    assert_eq!(block_and_slot(0), (0, 0));
    assert_eq!(block_and_slot(255), (0, 255));
    assert_eq!(block_and_slot(256), (1, 0));
    assert_eq!(test_of(3, 7), 3 * 256 + 7);
    assert_eq!(block_and_slot(test_of(1234, 200)), (1234, 200));
}

#[test]
fn the_filter_never_forgets_and_seldom_imagines() {
    let mut filter = NameFilter::with_capacity(20_000);
    for n in 0..20_000 {
        filter.insert(name_hash(&format!("known {n}")));
    }
    assert!((0..20_000).all(|n| filter.may_contain(name_hash(&format!("known {n}")))));
    let imagined = (0..100_000)
        .filter(|n| filter.may_contain(name_hash(&format!("new {n}"))))
        .count();
    assert!(imagined < 1_000, "{imagined} false maybes in 100,000");
}

fn narrow() -> impl Strategy<Value = Narrow> {
    (
        proptest::sample::select(Outcome::ALL.to_vec()),
        proptest::option::of(prop_oneof![
            0.0..1.0e6f64,
            (0..100_000_000u64).prop_map(|ms| ms as f64 / 1e3),
            (0..100_000_000u64).prop_map(|us| us as f64 / 1e6),
            (0..100_000u64)
                .prop_map(|ms| format!("{}.{:03}", ms / 1000, ms % 1000).parse().unwrap()),
            Just(0.0),
            Just(-0.0),
            Just(f64::NAN),
            Just(f64::INFINITY),
            any::<f64>(),
        ]),
        prop_oneof![Just(1u32), any::<u32>()],
        proptest::option::of("(?s).{0,12}|tests/a.py|tests/b.py"),
        any::<Option<u32>>(),
    )
        .prop_map(|(outcome, duration, attempts, file, line)| Narrow {
            outcome,
            duration,
            attempts,
            file,
            line,
        })
}

proptest! {
    #![proptest_config(proptest_config(256))]

    #[test]
    fn blocks_give_back_what_was_put_in(
        puts in proptest::collection::vec(
            (0..BLOCK_TESTS, narrow(), proptest::option::of(0..i64::MAX)),
            0..300,
        ),
    ) {
        let mut builder = BlockBuilder::default();
        let mut expected: Vec<Option<(Narrow, Option<i64>)>> = vec![None; BLOCK_TESTS];
        for (slot, narrow, part) in puts {
            let mut kept = narrow.clone();
            kept.duration = stored_duration(kept.duration);
            expected[slot] = Some((kept, part));
            builder.set(slot, narrow);
            builder.set_details(slot, part);
        }
        let present = expected.iter().flatten().count();
        prop_assert_eq!(builder.len(), present);
        prop_assert_eq!(builder.is_full(), present == BLOCK_TESTS);
        let entries = builder.entries();
        let outcomes = builder.outcomes();
        let mut reader = Entries::new(&entries).unwrap();
        let mut read: Vec<Option<(Narrow, Option<i64>)>> = vec![None; BLOCK_TESTS];
        while let Some((slot, narrow, part)) = reader.next_entry().unwrap() {
            read[slot] = Some((narrow, part));
        }
        let decoded = BlockBuilder::decode(&entries).unwrap();
        for slot in 0..BLOCK_TESTS {
            let want = &expected[slot];
            let same = |got: &Option<(Narrow, Option<i64>)>| match (got, want) {
                (Some((a, pa)), Some((b, pb))) => {
                    a.outcome == b.outcome
                        && a.attempts == b.attempts
                        && a.file == b.file
                        && a.line == b.line
                        && a.duration.map(f64::to_bits) == b.duration.map(f64::to_bits)
                        && pa == pb
                }
                (None, None) => true,
                _ => false,
            };
            prop_assert!(same(&read[slot]), "slot {}: {:?} vs {:?}", slot, read[slot], want);
            let held = |b: &BlockBuilder| b.get(slot).map(|n| (n, b.details_row(slot)));
            prop_assert!(same(&held(&builder)), "builder slot {}", slot);
            prop_assert!(same(&held(&decoded)), "decoded slot {}", slot);
            let found = Entries::new(&entries).unwrap().find(slot).unwrap();
            prop_assert!(same(&found), "find {}", slot);
            let nibble = outcome_nibble(&outcomes, slot);
            match want {
                None => prop_assert_eq!(nibble, 0),
                Some((narrow, _)) => prop_assert_eq!(outcome_of_nibble(nibble).unwrap(), narrow.outcome),
            }
        }
        prop_assert_eq!(decoded.entries(), entries);
    }
}

fn text() -> impl Strategy<Value = String> {
    "(?s).{0,24}"
}

fn frame() -> impl Strategy<Value = Frame> {
    (text(), any::<Option<u32>>(), proptest::option::of(text())).prop_map(
        |(file, line, function)| Frame {
            file,
            line,
            function,
        },
    )
}

fn details() -> impl Strategy<Value = Details> {
    let failure = (
        proptest::option::of(text()),
        text(),
        text(),
        proptest::collection::vec(frame(), 0..4),
        proptest::option::of(frame()),
    )
        .prop_map(
            |(exception, message, text, frames, failing_frame)| Failure {
                exception,
                message,
                text,
                frames,
                failing_frame,
            },
        );
    (
        proptest::option::of(text()),
        proptest::option::of(failure),
        proptest::option::of(text()),
        proptest::option::of(text()),
        proptest::option::of(text()),
    )
        .prop_map(
            |(signature, failure, skip_message, stdout, stderr)| Details {
                signature,
                failure: failure.map(Box::new),
                skip_message,
                stdout,
                stderr,
            },
        )
}

proptest! {
    #![proptest_config(proptest_config(128))]

    #[test]
    fn details_give_back_what_was_put_in(
        puts in proptest::collection::vec((0..BLOCK_TESTS, details()), 0..40),
    ) {
        let mut part = Vec::new();
        for (slot, details) in &puts {
            put_details(&mut part, *slot, details);
        }
        for slot in 0..BLOCK_TESTS {
            let want = puts.iter().rev().find(|(at, _)| *at == slot).map(|(_, d)| d.clone());
            prop_assert_eq!(find_details(&part, slot).unwrap(), want);
        }
        for cut in 0..part.len() {
            // A part cut short is an error, never a panic (it may read as shorter).
            let _ = find_details(&part[..cut], 0);
        }
        let sealed = seal_details(&part);
        prop_assert_eq!(open_details(&sealed).unwrap(), part.clone());
        for cut in 0..sealed.len() {
            let _ = open_details(&sealed[..cut]);
        }
    }

    #[test]
    fn names_give_back_what_was_put_in(
        names in proptest::collection::vec("(?s).{0,20}|tests/a.py::T::test_[a-c]{1,3}", 0..BLOCK_TESTS),
    ) {
        let compressed = encode_names(&names, NamesPacking::Lz4);
        prop_assert_eq!(decode_names(&compressed).unwrap(), names.clone());
        for cut in 0..compressed.len() {
            let _ = decode_names(&compressed[..cut]);
        }
        let front_coded = encode_names(&names, NamesPacking::FrontCoded);
        prop_assert_eq!(decode_names(&front_coded).unwrap(), names);
        // No count in front of the names would read a cut block as fewer names.
        for cut in 0..front_coded.len() {
            prop_assert!(decode_names(&front_coded[..cut]).is_err(), "cut at {}", cut);
        }
    }

    #[test]
    fn the_name_index_finds_every_entry(
        old in proptest::collection::vec((-40i64..40, any::<u32>()), 0..1500),
        new in proptest::collection::vec((-40i64..40, any::<u32>()), 0..1500),
    ) {
        let mut old = old;
        old.sort_unstable();
        let mut new = new;
        new.sort_unstable();
        let merged = merge_index(&old, &new);
        let mut all = [old.as_slice(), new.as_slice()].concat();
        all.sort_unstable();
        prop_assert_eq!(&merged, &all);
        let pieces = split_index(&merged);
        prop_assert_eq!(pieces.concat(), merged.clone());
        for piece in &pieces {
            prop_assert!(!piece.is_empty());
            prop_assert!(piece.len() <= INDEX_ROW_ENTRIES || piece.iter().all(|e| e.0 == piece[0].0));
        }
        for pair in pieces.windows(2) {
            prop_assert!(pair[0].last().unwrap().0 < pair[1][0].0, "a hash split across rows");
        }
        // The rows both stores write (#17, pgnames): the first keeps the row's key (or
        // starts at the smallest hash when the index was empty), the others start at
        // their first hash, and together they hold every entry.
        let first = old.first().map(|e| e.0);
        let rows = merged_rows(first, &old, &new);
        prop_assert_eq!(rows.first().map(|row| row.0), (!merged.is_empty()).then(|| first.unwrap_or(i64::MIN)));
        prop_assert_eq!(rows.len(), pieces.len());
        for ((key, blob), piece) in rows.iter().zip(&pieces).skip(1) {
            prop_assert_eq!(*key, piece[0].0);
            prop_assert_eq!(&decode_index(blob).unwrap(), piece);
        }
        let held: Vec<IndexEntry> =
            rows.iter().flat_map(|(_, blob)| decode_index(blob).unwrap()).collect();
        prop_assert_eq!(held, merged.clone());
        for piece in &pieces {
            let blob = encode_index(piece);
            prop_assert_eq!(&decode_index(&blob).unwrap(), piece);
            for &(hash, _) in *piece {
                let mut want: Vec<u32> = merged.iter().filter(|e| e.0 == hash).map(|e| e.1).collect();
                want.sort_unstable();
                prop_assert_eq!(index_lookup(&blob, hash).unwrap(), want);
            }
        }
    }

    #[test]
    fn new_names_are_found_by_hash(
        hashes in proptest::collection::vec(prop_oneof![-300i64..300, any::<i64>()], 0..3000),
    ) {
        let mut names = NewNames::new(17);
        for (position, &hash) in hashes.iter().enumerate() {
            prop_assert_eq!(names.push(hash), 17 + position as i64);
        }
        for hash in (-300i64..300).chain(hashes.iter().copied()) {
            let mut found = names.find(hash);
            found.sort_unstable();
            let want: Vec<i64> = hashes
                .iter()
                .enumerate()
                .filter(|&(_, &h)| h == hash)
                .map(|(position, _)| 17 + position as i64)
                .collect();
            prop_assert_eq!(found, want);
        }
        let taken = names.take_sorted().unwrap();
        prop_assert_eq!(taken.len(), hashes.len());
        let mut sorted = taken.clone();
        sorted.sort_unstable();
        prop_assert_eq!(&taken, &sorted);
        prop_assert!(names.is_empty());
        prop_assert_eq!(names.next_id(), 17 + hashes.len() as i64);
    }
}

/// Below and above the size where the sort of a first ingest's names switches from
/// comparisons to digits, the entries come out the same: by hash, equal hashes (a few of
/// them here) in id order.
#[test]
fn new_names_sort_the_same_on_either_side_of_the_radix_threshold() {
    const SEED: u64 = 0x0005_EED0_F1D5;
    let mut state = SEED;
    let mut next = move || {
        // splitmix64
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    // The last size again with every hash in one bucket of the first pass (names made
    // to share their hash's top bits).
    let sizes = [1, 1000, (1 << 14) - 1, 1 << 14, 3 << 14];
    for (round, count) in sizes.into_iter().chain([3 << 14]).enumerate() {
        let one_bucket = round == sizes.len();
        let mut names = NewNames::new(5);
        let mut pushed = Vec::with_capacity(count);
        for position in 0..count {
            let hash = if position % 97 == 3 {
                // A repeat of an earlier hash: two names with one hash.
                pushed[position / 2]
            } else if one_bucket {
                ((next() >> 16) | 0xBEEF_0000_0000_0000) as i64
            } else {
                next() as i64
            };
            names.push(hash);
            pushed.push(hash);
        }
        let mut want: Vec<IndexEntry> = pushed
            .iter()
            .enumerate()
            .map(|(position, &hash)| (hash, 5 + position as u32))
            .collect();
        want.sort_by_key(|&(hash, _)| hash);
        assert_eq!(
            names.take_sorted().unwrap(),
            want,
            "{count} names (in one bucket: {one_bucket}), seed {SEED:#x}"
        );
    }
}

/// Index entries hold ids as u32: names whose ids would pass 4,294,967,295 are refused
/// (and stay held), while an empty set is taken at any id.
#[test]
fn new_names_past_the_last_u32_id_are_refused() {
    let mut empty = NewNames::new(i64::from(u32::MAX) + 10);
    assert_eq!(empty.take_sorted().unwrap(), Vec::new());

    let mut last_fits = NewNames::new(i64::from(u32::MAX) - 1);
    last_fits.push(7);
    last_fits.push(-7);
    assert_eq!(
        last_fits.take_sorted().unwrap(),
        vec![(-7, u32::MAX), (7, u32::MAX - 1)]
    );

    let mut one_past = NewNames::new(i64::from(u32::MAX) - 1);
    for hash in [1, 2, 3] {
        one_past.push(hash);
    }
    assert!(one_past.take_sorted().is_err());
    assert_eq!(one_past.len(), 3, "a refused set is kept as it was");
}

#[test]
fn damaged_blobs_are_errors_not_panics() {
    let mut builder = BlockBuilder::default();
    for slot in [0, 5, 255] {
        builder.set(
            slot,
            Narrow {
                outcome: Outcome::Fail,
                duration: Some(1.5),
                attempts: 3,
                file: Some("tests/x.py".into()),
                line: Some(9),
            },
        );
    }
    let entries = builder.entries();
    for cut in 0..entries.len() {
        let short = &entries[..cut];
        let read = Entries::new(short).and_then(|mut reader| {
            while reader.next_entry()?.is_some() {}
            Ok(())
        });
        assert!(read.is_err(), "cut at {cut}");
    }
    assert!(Entries::new(&[2]).is_err());
}

/// Issue 15 item 5: a part sealed in a kept scratch buffer (left longer, and holding
/// another part's bytes, by the part before) is byte for byte what the stored histories'
/// `lz4_flex::compress_prepend_size` wrote: small parts and parts past 64 KiB (LZ4's
/// other hash table), repetitive and not, longest first.
#[test]
fn a_part_sealed_in_a_kept_buffer_is_sealed_as_before() {
    const SEED: u64 = 0x15_0005;
    let mut state = SEED;
    let mut noise = |length: usize| -> Vec<u8> {
        (0..length)
            .map(|_| {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                (state >> 59) as u8 + b'a'
            })
            .collect()
    };
    let traceback =
        b"E   AssertionError: assert 1 == 2\ntests/test_a.py:10: in test\n".repeat(2_000);
    let parts = [
        noise(300_000),
        traceback.clone(),
        noise(70_000),
        traceback[..5_000].to_vec(),
        noise(10),
        Vec::new(),
    ];
    let mut scratch = Vec::new();
    for (index, part) in parts.iter().enumerate() {
        let mut before = vec![1u8];
        before.extend_from_slice(&lz4_flex::compress_prepend_size(part));
        assert_eq!(
            seal_details_in(part, &mut scratch),
            before.as_slice(),
            "part {index} of {} bytes, seed {SEED}",
            part.len()
        );
        assert_eq!(seal_details(part), before, "part {index}, seed {SEED}");
        assert_eq!(open_details(&before).unwrap(), *part, "part {index}");
    }
}
