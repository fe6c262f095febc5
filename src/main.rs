//! The `candor` binary: everything lives in the library; this only turns its result into
//! an exit code.

/// mimalloc rather than the system allocator: an ingest allocates each execution's texts
/// on the reading thread and frees them on the storing thread, which glibc's allocator
/// pays for in arena locking (docs/storage-layout.md has the measurement).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    candor::cli::run()
}
