//! The `candor` binary: everything lives in the library; this only turns its result into
//! an exit code.

/// mimalloc rather than the system allocator: an ingest allocates and frees every
/// execution's texts, hundreds of thousands of small blocks, faster with mimalloc
/// (docs/storage-layout.md has the measurements).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    candor::cli::run()
}
