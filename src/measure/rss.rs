//! Process resident set size from `/proc/self/status` (Linux). Advisory: it depends on the
//! kernel, on page decay and on what else the process mapped.

use crate::units::Bytes;

/// Resident memory of the process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rss {
    /// `VmRSS`: resident now.
    pub current: Bytes,
    /// `VmHWM`: highest resident since the process started or [`reset_peak`] last succeeded.
    pub peak: Bytes,
}

/// Reads `VmRSS` and `VmHWM`; `None` where `/proc` is not available.
pub fn read() -> Option<Rss> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    Some(Rss {
        current: field_kib(&status, "VmRSS:")?,
        peak: field_kib(&status, "VmHWM:")?,
    })
}

/// Resets `VmHWM` to the current RSS (writing `5` to `/proc/self/clear_refs`), so the next
/// [`read`] gives the peak since now. Returns whether the kernel allowed it.
pub fn reset_peak() -> bool {
    std::fs::write("/proc/self/clear_refs", b"5").is_ok()
}

fn field_kib(status: &str, name: &str) -> Option<Bytes> {
    let line = status.lines().find(|l| l.starts_with(name))?;
    let kib: u64 = line[name.len()..]
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(Bytes(kib * 1024))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_kib_fields() {
        let status = "Name:\tx\nVmHWM:\t   2048 kB\nVmRSS:\t   1024 kB\n";
        assert_eq!(field_kib(status, "VmRSS:"), Some(Bytes(1024 * 1024)));
        assert_eq!(field_kib(status, "VmHWM:"), Some(Bytes(2048 * 1024)));
        assert_eq!(field_kib(status, "VmSwap:"), None);
    }
}
