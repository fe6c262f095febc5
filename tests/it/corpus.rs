//! Every file of the shared corpus (`MANIFEST.tsv`), whatever its folder: the bytes are the
//! ones the manifest lists, and candor either reads the file or refuses it with a located,
//! clear error — the same call `candor ingest` makes. The per-format tests
//! (`corpus_junit.rs`, `corpus_json.rs`) check what is read; this one checks that nothing
//! falls between them.

use crate::corpus_support;

use corpus_support::corpus;

use candor::results::{ParseError, ParseOptions, Position, parse_all};
use sha2::{Digest, Sha256};

/// The one `other/` report candor reads natively: Playwright's JSON (#20).
const READ_FROM_OTHER: [&str; 1] = ["other/launchable__playwright__report.json"];

/// Files the corpus keeps as "must not crash" fixtures (NOTES.md), and the other tools'
/// reports candor does not read yet: each must be refused.
fn expected_refusal(file: &str) -> bool {
    const BROKEN: [&str; 9] = [
        "junit/launchable__cucumber__report__dummy.xml",
        "junit/launchable__broken_xml__broken.xml",
        "junit/launchable__maven__reports__dummy.xml",
        "junit/mikepenz__corrupt-junit__e2e-tests__corrupt__target__sf-reports__TEST-test.CorruptTest.xml",
        "junit/mikepenz__junit-web-test__expected.xml",
        "junit/mikepenz__junit-web-test__expectedRetries.xml",
        "junit/jenkins-junit__testXxe-xxe.xml",
        "junit/cargo2junit__expected_outputs__azfunc.xml",
        "libtest-json/cargo2junit__test_inputs__compile_fail.jsonl",
    ];
    (file.starts_with("other/") && !READ_FROM_OTHER.contains(&file)) || BROKEN.contains(&file)
}

#[test]
fn every_manifest_file_is_read_or_refused_clearly() {
    if !corpus_support::present("every_manifest_file_is_read_or_refused_clearly") {
        return;
    }
    let root = corpus();
    let manifest = fs_err::read_to_string(root.join("MANIFEST.tsv")).expect("the manifest");
    let mut read = 0;
    let mut refused = 0;
    for line in manifest.lines().skip(1).filter(|l| !l.trim().is_empty()) {
        let fields: Vec<&str> = line.split('\t').collect();
        let (file, sha256) = (fields[0], fields[6]);
        let bytes = fs_err::read(root.join(file)).expect("a manifest file");
        assert_eq!(
            hex::encode(Sha256::digest(&bytes)),
            sha256,
            "{file} is not the manifest's"
        );
        match parse_all(bytes.as_slice(), &ParseOptions::default()) {
            Ok((executions, _)) => {
                // `102-broken` (a go build failure, no JSON at all) is read: an error
                // execution for the package, not a refusal.
                assert!(!expected_refusal(file), "{file} should have been refused");
                assert!(
                    executions.iter().all(|e| !e.test_id.is_empty()),
                    "{file}: an empty test id"
                );
                read += 1;
            }
            Err(error) => {
                assert!(expected_refusal(file), "{file} was refused: {error}");
                match &error {
                    ParseError::Syntax { position, message }
                    | ParseError::NotResults { position, message } => {
                        assert!(
                            matches!(position, Position::LineColumn { line, column } if *line >= 1 && *column >= 1),
                            "{file}: {position:?}"
                        );
                        assert!(!message.trim().is_empty(), "{file}: an empty message");
                    }
                    other => panic!("{file}: refused without a position: {other}"),
                }
                refused += 1;
            }
        }
    }
    assert_eq!(read + refused, 199, "the manifest lists 199 files");
    eprintln!("{read} read, {refused} refused");
}
