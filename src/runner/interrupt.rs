//! A plain run's answer to SIGINT (Ctrl-C) and SIGTERM: every variant ended, each with its
//! program's process group, their scratch folders removed, and the run's exit as a shell
//! reports a death by that signal (130, 143), with no report written. A run against a
//! real server answers them in its session, which removes its namespaces too.

use std::sync::OnceLock;

use super::process;

/// Set once the handler is in place: one per process, whatever the points of a sweep.
static INSTALLED: OnceLock<()> = OnceLock::new();

/// Puts the handler in place (once; later calls do nothing). The signals are taken from
/// here on: without the handler, SIGTERM would kill the run and leave its variants
/// running under init.
pub fn end_on_signal() -> std::io::Result<()> {
    if INSTALLED.get().is_some() {
        return Ok(());
    }
    use tokio::signal::unix::{SignalKind, signal};
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()?;
    let (mut interrupt, mut terminate) = {
        let _entered = runtime.enter();
        (
            signal(SignalKind::interrupt())?,
            signal(SignalKind::terminate())?,
        )
    };
    std::thread::Builder::new()
        .name("signals".to_owned())
        .spawn(move || {
            let code = runtime.block_on(async {
                tokio::select! {
                    _ = interrupt.recv() => 128 + libc::SIGINT,
                    _ = terminate.recv() => 128 + libc::SIGTERM,
                }
            });
            files::say!("interrupted: stopping the variants and their programs");
            process::end_variants();
            std::process::exit(code);
        })?;
    let _ = INSTALLED.set(());
    Ok(())
}

/// After a signal, waits for the handler to end the variants and exit: an interrupted
/// run writes no report. Returns at once otherwise.
pub fn stop_if_interrupted() {
    while process::stopping() {
        std::thread::park();
    }
}
