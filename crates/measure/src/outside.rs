//! Another process measured from outside, through `/proc/PID` (Linux): what the kernel
//! knows of any program, whatever its language. Advisory figures: RSS depends on the
//! kernel, on page reclaim and on the program's allocator, CPU time on the machine.
//!
//! A program is read as its process group ([`Group`]): a command that starts the
//! program in turn (`go run`, `npm start`, a shell that does not `exec`) is measured with
//! everything it started, as a container's memory counts every process in it.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::rss::field_kib;
use units::Bytes;

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
    read_files(pid).map(|(reading, _)| reading)
}

/// Reads process `pid`, and its `/proc/PID/stat` line.
fn read_files(pid: u32) -> Option<(ProcessReading, String)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let threads = status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|n| n.trim().parse().ok())?;
    let reading = ProcessReading {
        rss: field_kib(&status, "VmRSS:")?,
        rss_peak: field_kib(&status, "VmHWM:")?,
        threads,
        cpu_ms: cpu_ticks(&stat)? * 1000 / ticks_per_second(),
    };
    Some((reading, stat))
}

/// Resets process `pid`'s `VmHWM` to its RSS now; returns whether the kernel allowed it.
pub fn reset_peak(pid: u32) -> bool {
    std::fs::write(format!("/proc/{pid}/clear_refs"), b"5").is_ok()
}

/// A process group read at one moment: the sum over its processes, and each of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupReading {
    /// RSS, threads and CPU time summed over the processes. The peak is the sum of each
    /// one's high-water mark (never under its RSS): the group's own peak where there is
    /// one process, an upper bound of it where there are more (their peaks need not
    /// coincide). CPU time includes what processes that have exited and been waited for
    /// used (their parents' `cutime` and `cstime`), so a short-lived child still counts.
    pub total: ProcessReading,
    /// Each process, in the order of their ids.
    pub members: Vec<Member>,
}

/// One process of a group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    pub pid: u32,
    /// Its command's name as the kernel keeps it (`/proc/PID/comm`: 15 bytes at most).
    pub command: String,
    pub rss: Bytes,
}

/// How old the list of a [`Group`]'s processes may be when a reading does not ask for a
/// fresh one.
const RESCAN: Duration = Duration::from_secs(2);

/// A process group read again and again: a program through its phases (the group it was
/// started in, whose leader is the program's own process). Finding its processes takes a
/// scan of every `/proc/PID/stat` on the machine, milliseconds where there are hundreds;
/// so the processes found are kept and read directly, and the scan is made again when a
/// reading asks for it (a phase's start and end) or when the last one is older than
/// [`RESCAN`] (the heap sampler's readings, five a second).
#[derive(Debug)]
pub struct Group {
    pgid: u32,
    /// The processes the last scan found, and when.
    found: Mutex<Option<(Instant, Vec<u32>)>>,
}

impl Group {
    pub fn new(pgid: u32) -> Group {
        Group {
            pgid,
            found: Mutex::new(None),
        }
    }

    /// Every live process of the group, found anew when `fresh`; `None` when its leader is
    /// gone.
    pub fn read(&self, fresh: bool) -> Option<GroupReading> {
        let (leader, _) = read_member(self.pgid)?;
        let mut total = leader;
        let mut members = vec![member(self.pgid, &leader)];
        for pid in self.processes(fresh) {
            // One that exited since the scan, or whose id another process now has, is
            // not counted.
            match read_member(pid) {
                Some((reading, pgrp)) if pgrp == self.pgid && pid != self.pgid => {
                    total.rss.0 += reading.rss.0;
                    total.rss_peak.0 += reading.rss_peak.0;
                    total.threads += reading.threads;
                    total.cpu_ms += reading.cpu_ms;
                    members.push(member(pid, &reading));
                }
                _ => {}
            }
        }
        members.sort_by_key(|m| m.pid);
        Some(GroupReading { total, members })
    }

    /// Resets the `VmHWM` of every process of the group (found anew); whether the kernel
    /// allowed it for each one.
    pub fn reset_peak(&self) -> bool {
        let processes = self.processes(true);
        let mut all = !processes.is_empty();
        for pid in processes {
            all &= reset_peak(pid);
        }
        all
    }

    /// The group's processes: the last scan's, or a new one's when `fresh` or stale.
    fn processes(&self, fresh: bool) -> Vec<u32> {
        let mut found = self.found.lock().unwrap_or_else(|e| e.into_inner());
        match &*found {
            Some((at, processes)) if !fresh && at.elapsed() < RESCAN => processes.clone(),
            _ => {
                let processes = group_members(self.pgid);
                *found = Some((Instant::now(), processes.clone()));
                processes
            }
        }
    }
}

/// Process `pid` as a group member, with its group: its peak never under its RSS, its
/// CPU time with its waited-for children's.
fn read_member(pid: u32) -> Option<(ProcessReading, u32)> {
    let (mut reading, stat) = read_files(pid)?;
    reading.rss_peak = reading.rss_peak.max(reading.rss);
    reading.cpu_ms += children_cpu_ticks(&stat)? * 1000 / ticks_per_second();
    Some((reading, process_group(&stat)?))
}

fn member(pid: u32, reading: &ProcessReading) -> Member {
    let command = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
    Member {
        pid,
        command: command.trim_end().to_owned(),
        rss: reading.rss,
    }
}

/// The ids of the processes in group `pgid`, from every `/proc/PID/stat`.
fn group_members(pgid: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|stat| process_group(&stat))
                == Some(pgid)
        })
        .collect()
}

/// `utime + stime` of a `/proc/PID/stat` line, in clock ticks.
fn cpu_ticks(stat: &str) -> Option<u64> {
    Some(stat_field(stat, 14)? + stat_field(stat, 15)?)
}

/// `cutime + cstime` of a `/proc/PID/stat` line: its children's CPU time once waited for.
fn children_cpu_ticks(stat: &str) -> Option<u64> {
    Some(stat_field(stat, 16)? + stat_field(stat, 17)?)
}

/// The process group (`pgrp`) of a `/proc/PID/stat` line.
fn process_group(stat: &str) -> Option<u32> {
    u32::try_from(stat_field(stat, 5)?).ok()
}

/// Field `number` of a `/proc/PID/stat` line as proc(5) numbers them (from 1, the pid), a
/// number after the command's name (field 2). The name may hold spaces and parentheses, so
/// fields are counted after its last `)`.
fn stat_field(stat: &str, number: usize) -> Option<u64> {
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_ascii_whitespace()
        .nth(number.checked_sub(3)?)?
        .parse()
        .ok()
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
        // pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt
        // cmajflt utime stime cutime cstime priority ...
        let stat = "4242 (a) b (c)) S 1 4240 4240 0 -1 4194560 100 0 0 0 250 50 7 3 20 0 9 0";
        assert_eq!(cpu_ticks(stat), Some(300));
        assert_eq!(cpu_ticks("4242 (a) S 1"), None);
        assert_eq!(children_cpu_ticks(stat), Some(10));
        assert_eq!(process_group(stat), Some(4240));
        assert_eq!(process_group("4242 (a) S 1"), None);
    }

    #[test]
    fn a_group_is_read_with_every_process_in_it() {
        use std::os::unix::process::CommandExt;
        // A shell that waits for a child of its own (a `sleep` it does not `exec`), in a
        // group of its own as an external variant's program is.
        let mut shell = std::process::Command::new("sh")
            .args(["-c", "sleep 30; true"])
            .process_group(0)
            .spawn()
            .unwrap();
        let pgid = shell.id();
        let watched = Group::new(pgid);
        let mut group = None;
        // Until the shell's child has exec'd `sleep`: forked, it is a second `sh`.
        let started = |g: &GroupReading| {
            g.members.len() == 2 && g.members.iter().any(|m| m.command == "sleep")
        };
        for _ in 0..500 {
            group = watched.read(true).filter(started);
            if group.is_some() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let group = group.expect("the shell and its sleep");
        let mut commands: Vec<&str> = group.members.iter().map(|m| m.command.as_str()).collect();
        commands.sort_unstable();
        assert_eq!(commands, ["sh", "sleep"]);
        let rss: u64 = group.members.iter().map(|m| m.rss.0).sum();
        assert_eq!(group.total.rss.0, rss, "the sum of its processes'");
        assert!(group.total.rss_peak.0 >= group.total.rss.0);
        assert_eq!(group.total.threads, 2);
        assert!(watched.reset_peak() || !reset_peak(std::process::id()));
        assert_eq!(
            watched.read(false).map(|g| g.members.len()),
            Some(2),
            "the processes found, read again"
        );
        // SAFETY: kill has no memory preconditions; the group is the test's own.
        unsafe { libc::kill(-(pgid as i32), libc::SIGKILL) };
        shell.wait().unwrap();
        assert_eq!(watched.read(false), None, "its leader is gone");
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
