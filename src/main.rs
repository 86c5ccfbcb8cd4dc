use std::process::ExitCode;

use clap::Parser;
use informer_mem::cli::Cli;
use informer_mem::exit_codes;
#[cfg(not(feature = "dhat-heap"))]
use measure::CountingJemalloc;

// Every figure in a report comes from this allocator: jemalloc, as most Rust services that
// care about memory run it, behind a counting wrapper (see `measure::alloc`).
#[cfg(not(feature = "dhat-heap"))]
#[global_allocator]
static GLOBAL: CountingJemalloc = CountingJemalloc;

// The heap-profiling build: dhat's allocator instead, which records where every block was
// allocated (see `measure::dhat`).
#[cfg(feature = "dhat-heap")]
#[global_allocator]
static GLOBAL: dhat::Alloc = dhat::Alloc;

fn main() -> ExitCode {
    #[cfg(feature = "dhat-heap")]
    measure::dhat::declare_installed();
    let command = Cli::parse().into_command();
    match informer_mem::commands::run(command) {
        Ok(code) => code,
        Err(err) => {
            files::say!("error: {err:#}");
            ExitCode::from(exit_codes::ERROR)
        }
    }
}
