//! CPU time by component: the calling thread's CPU clock (`CLOCK_THREAD_CPUTIME_ID`),
//! read each time the current component changes and charged to the one that was working.
//!
//! The informer and the built-in apiserver share one thread, so the process's CPU time
//! cannot tell them apart; this can. Advisory, as any CPU time: the clock is the kernel's
//! accounting of the thread (nanoseconds on Linux), it moves with the machine, and each
//! read costs a system call (the vDSO serves only the wall clocks), which is charged to
//! whichever component the clock is read for. Reading it allocates nothing, so the exact
//! figures do not move.

use std::cell::Cell;

use super::Component;

struct Clock {
    /// The thread's CPU time when the current component became current.
    mark: Cell<u64>,
    /// CPU time charged so far, per component.
    by_component: [Cell<u64>; 3],
}

thread_local! {
    static CLOCK: Clock = const {
        Clock {
            mark: Cell::new(0),
            by_component: [const { Cell::new(0) }; 3],
        }
    };
}

/// Notes that the calling thread stops working for `from` and starts working for `to`.
#[inline]
pub(super) fn switched(from: Component, to: Component) {
    if from != to {
        charge(from);
    }
}

/// CPU time the calling thread has spent working for `component`, in nanoseconds, up to
/// now; `current` is the component working now.
pub(super) fn spent(component: Component, current: Component) -> u64 {
    charge(current);
    CLOCK.with(|c| c.by_component[component as usize].get())
}

/// Charges the time since the last mark to `component`, and marks now.
fn charge(component: Component) {
    let now = thread_cpu_ns();
    CLOCK.with(|c| {
        let spent = now.saturating_sub(c.mark.replace(now));
        let total = &c.by_component[component as usize];
        total.set(total.get() + spent);
    });
}

/// The calling thread's CPU time in nanoseconds (0 if the clock cannot be read).
fn thread_cpu_ns() -> u64 {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid, writable timespec; the call writes it and nothing else.
    if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &raw mut now) } != 0 {
        return 0;
    }
    now.tv_sec as u64 * 1_000_000_000 + now.tv_nsec as u64
}
