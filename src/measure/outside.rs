//! Another process measured from outside, through `/proc/PID` (Linux): what the kernel
//! knows of any program, whatever its language. Advisory figures: RSS depends on the
//! kernel, on page reclaim and on the program's allocator, CPU time on the machine.

use serde::{Deserialize, Serialize};

use super::rss::field_kib;
use crate::units::Bytes;

/// What the kernel says of a process at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessReading {
    /// `VmRSS`: resident now.
    pub rss: Bytes,
    /// `VmHWM`: the highest resident since it started or its peak was last reset.
    pub rss_peak: Bytes,
    /// Threads now.
    pub threads: u64,
    /// User and system CPU time since it started, in ms (the kernel counts in clock
    /// ticks, 10 ms on most machines).
    pub cpu_ms: u64,
}

impl ProcessReading {
    /// The RSS peak between `start` (read just after the peak was reset) and this reading:
    /// the kernel's high-water mark, and never less than what either reading saw. The
    /// kernel keeps `VmHWM` lazily (its mark is raised when pages are unmapped, and a
    /// process that grows and gives pages back through `madvise` can leave it behind), so
    /// a busy server's mark has been read about 270 KB under the RSS read just after the
    /// reset.
    pub fn peak_since(&self, start: &ProcessReading) -> Bytes {
        self.rss_peak.max(self.rss).max(start.rss)
    }
}

/// Reads process `pid`; `None` when it is gone (or `/proc` is not there).
pub fn read(pid: u32) -> Option<ProcessReading> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let threads = status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|n| n.trim().parse().ok())?;
    Some(ProcessReading {
        rss: field_kib(&status, "VmRSS:")?,
        rss_peak: field_kib(&status, "VmHWM:")?,
        threads,
        cpu_ms: cpu_ticks(&stat)? * 1000 / ticks_per_second(),
    })
}

/// Resets process `pid`'s `VmHWM` to its RSS now; returns whether the kernel allowed it.
pub fn reset_peak(pid: u32) -> bool {
    std::fs::write(format!("/proc/{pid}/clear_refs"), b"5").is_ok()
}

/// `utime + stime` of a `/proc/PID/stat` line, in clock ticks. The command name (field 2)
/// may hold spaces and parentheses, so fields are counted after its last `)`.
fn cpu_ticks(stat: &str) -> Option<u64> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_ascii_whitespace();
    // After the name: state is field 3, utime field 14, stime field 15.
    let utime: u64 = fields.nth(11)?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some(utime + stime)
}

fn ticks_per_second() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    u64::try_from(ticks).ok().filter(|&t| t > 0).unwrap_or(100)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_time_is_read_after_the_name_whatever_it_holds() {
        let stat = "4242 (a) b (c)) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 9 0";
        assert_eq!(cpu_ticks(stat), Some(300));
        assert_eq!(cpu_ticks("4242 (a) S 1"), None);
    }

    #[test]
    fn reads_a_live_process_and_not_a_gone_one() {
        let me = read(std::process::id()).expect("this process is alive");
        assert!(me.rss.0 > 0 && me.rss_peak.0 >= me.rss.0);
        assert!(me.threads >= 1);
        let start = ProcessReading {
            rss: Bytes(me.rss_peak.0 + 4096),
            ..me
        };
        assert_eq!(me.peak_since(&start), start.rss, "never under a reading");
        assert_eq!(me.peak_since(&me), me.rss_peak);
        // Process ids wrap far below this.
        assert_eq!(read(u32::MAX - 1), None);
    }
}
