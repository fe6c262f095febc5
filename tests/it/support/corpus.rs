//! Where the shared corpus of real result files is, for the tests that read it:
//! `CANDOR_CORPUS`, else `../shared/corpus/results` beside the clone (where CI lays it).
//! A clone without it still passes `cargo test`: each corpus test says in one line that it
//! was skipped and why. Under CI (`CI` set) the corpus must be there, and its absence fails.

use std::path::{Path, PathBuf};

/// The corpus folder, wherever it is or would be.
pub fn corpus() -> PathBuf {
    match std::env::var_os("CANDOR_CORPUS") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/results"),
    }
}

/// Whether `test` can run: the corpus is there. Absent, prints why `test` was skipped (or,
/// under CI, fails).
pub fn present(test: &str) -> bool {
    let dir = corpus();
    if dir.join("MANIFEST.tsv").is_file() {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{test}: no shared corpus at {}; CI must run the corpus tests: lay shared/ beside the clone or set CANDOR_CORPUS",
        dir.display()
    );
    // Written to stderr itself, not through `eprintln!`, which the test harness captures
    // and shows only for failures: a skip must be seen.
    // libtest names each test's thread after its full path (`corpus_junit::hand_checked_tallies`),
    // which says which module of the one test binary skipped.
    let current = std::thread::current();
    let name = current
        .name()
        .filter(|name| name.ends_with(test))
        .unwrap_or(test);
    let line = format!(
        "skipped {name}: no shared corpus at {} (set CANDOR_CORPUS to its `results` folder to run it)\n",
        dir.display()
    );
    let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
    false
}
