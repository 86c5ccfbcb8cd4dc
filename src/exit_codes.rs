//! Documented exit codes, as ripgrep and nextest keep them.

/// Everything ran and passed.
pub const OK: u8 = 0;
/// A gate failed or a regression was found (reserved for `check` and `diff`).
pub const FAILED: u8 = 1;
/// Bad input (scenario, arguments) or a runtime error, including a variant that failed.
pub const ERROR: u8 = 2;
