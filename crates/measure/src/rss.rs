//! Process resident set size from `/proc/self/status` (Linux). Advisory: it depends on the
//! kernel, on page decay and on what else the process mapped.

use units::Bytes;

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

/// The process's resident bytes now, from `/proc/self/statm`, read into a stack buffer:
/// nothing is allocated, so it may be called from inside the allocator. `None` where
/// `/proc` is not available.
pub fn current_without_allocating() -> Option<Bytes> {
    use std::io::Read;
    // The path is short enough for std to build its C string on the stack.
    let mut file = std::fs::File::open("/proc/self/statm").ok()?;
    let mut buf = [0u8; 128];
    let mut len = 0;
    while len < buf.len() {
        match file.read(&mut buf[len..]) {
            Ok(0) => break,
            Ok(n) => len += n,
            Err(_) => return None,
        }
    }
    statm_resident_pages(&buf[..len]).map(|pages| Bytes(pages * PAGE_BYTES))
}

/// The page size `statm` counts in (4 KiB on the platforms this tool runs on).
const PAGE_BYTES: u64 = 4096;

/// The second field of `statm`: resident pages.
fn statm_resident_pages(statm: &[u8]) -> Option<u64> {
    let text = std::str::from_utf8(statm).ok()?;
    text.split_ascii_whitespace().nth(1)?.parse().ok()
}

/// Resets `VmHWM` to the current RSS (writing `5` to `/proc/self/clear_refs`), so the next
/// [`read`] gives the peak since now. Returns whether the kernel allowed it.
pub fn reset_peak() -> bool {
    std::fs::write("/proc/self/clear_refs", b"5").is_ok()
}

pub(super) fn field_kib(status: &str, name: &str) -> Option<Bytes> {
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
    fn statm_gives_resident_pages() {
        assert_eq!(
            statm_resident_pages(b"5000 1234 300 10 0 900 0\n"),
            Some(1234)
        );
        assert_eq!(statm_resident_pages(b"5000"), None);
        let now = current_without_allocating().expect("Linux has /proc/self/statm");
        let status = read().expect("and /proc/self/status");
        // Both read the same kernel counter, moments apart.
        assert!(
            now.0.abs_diff(status.current.0) < 64 << 20,
            "{now} vs {}",
            status.current
        );
    }

    #[test]
    fn parses_kib_fields() {
        let status = "Name:\tx\nVmHWM:\t   2048 kB\nVmRSS:\t   1024 kB\n";
        assert_eq!(field_kib(status, "VmRSS:"), Some(Bytes(1024 * 1024)));
        assert_eq!(field_kib(status, "VmHWM:"), Some(Bytes(2048 * 1024)));
        assert_eq!(field_kib(status, "VmSwap:"), None);
    }
}
