//! Documented exit codes, as ripgrep and nextest keep them.

/// Everything ran and passed.
pub const OK: u8 = 0;
/// A check failed: an informer's store did not match the server at a phase's end
/// (`run`), or a gate found a regression (`check`).
pub const FAILED: u8 = 1;
/// Bad input (scenario, arguments) or a runtime error, including a variant that failed.
pub const ERROR: u8 = 2;
