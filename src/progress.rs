//! What `run` shows while it works, on standard error: a progress bar per variant on a
//! terminal (indicatif; colour unless NO_COLOR is set), one plain line per phase when
//! standard error is a file or a pipe (CI logs), nothing with `--quiet`.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::runner::Message;
use crate::runner::Progress;
use report::Shown;

/// How progress is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Progress bars, redrawn in place.
    Bars,
    /// One line per variant and phase.
    Lines,
    /// Nothing.
    Quiet,
}

impl Mode {
    /// Bars on a terminal, lines otherwise, nothing when `quiet`.
    pub fn detect(quiet: bool) -> Mode {
        if quiet {
            Mode::Quiet
        } else if std::io::stderr().is_terminal() {
            Mode::Bars
        } else {
            Mode::Lines
        }
    }
}

/// Shows the progress of one run.
#[derive(Debug)]
pub struct Reporter {
    mode: Mode,
    phases: Vec<String>,
    bar: Option<ProgressBar>,
    done: usize,
}

impl Reporter {
    /// A reporter for a run of `phases` (their names, in order).
    pub fn new(mode: Mode, phases: Vec<String>) -> Reporter {
        Reporter {
            mode,
            phases,
            bar: None,
            done: 0,
        }
    }

    /// Shows one step of the run.
    pub fn show(&mut self, progress: Progress<'_>) {
        match self.mode {
            Mode::Quiet => {}
            Mode::Lines => print_line(progress),
            Mode::Bars => self.draw(progress),
        }
    }

    /// Ends the last bar, leaving it on screen.
    pub fn finish(&mut self) {
        if let Some(bar) = self.bar.take()
            && !bar.is_finished()
        {
            bar.abandon();
        }
    }

    fn draw(&mut self, progress: Progress<'_>) {
        match progress {
            Progress::VariantStarted { index, total, name } => {
                self.finish();
                let bar = ProgressBar::with_draw_target(
                    Some(self.phases.len() as u64),
                    ProgressDrawTarget::stderr(),
                )
                .with_style(
                    ProgressStyle::with_template(
                        "{prefix} {spinner:.green} [{bar:24.cyan/blue}] {pos}/{len} phases \
                         {msg} ({elapsed})",
                    )
                    .expect("the template is valid")
                    .progress_chars("=> "),
                )
                .with_prefix(format!("[{}/{total}] {name}", index + 1));
                bar.set_message(self.phases.first().cloned().unwrap_or_default());
                bar.enable_steady_tick(Duration::from_millis(120));
                self.bar = Some(bar);
                self.done = 0;
            }
            Progress::Message(Message::Setup(_) | Message::Subject { .. }) => {}
            Progress::Message(Message::Phase(_)) => {
                self.done += 1;
                if let Some(bar) = &self.bar {
                    bar.inc(1);
                    match self.phases.get(self.done) {
                        Some(next) => bar.set_message(next.clone()),
                        None => bar.finish_with_message("done"),
                    }
                }
            }
            Progress::Message(Message::Failed(e)) => {
                if let Some(bar) = &self.bar {
                    bar.abandon_with_message(format!("failed: {e}"));
                }
            }
        }
    }
}

fn print_line(progress: Progress<'_>) {
    match progress {
        Progress::VariantStarted { index, total, name } => {
            files::say!("[{}/{total}] {name}", index + 1);
        }
        Progress::Message(Message::Setup(_)) => {}
        Progress::Message(Message::Subject {
            implementation,
            setup,
        }) => files::say!(
            "      {} connected: RSS {}{}",
            implementation.as_deref().unwrap_or("the program"),
            setup.rss_bytes,
            setup
                .live_heap()
                .map(|b| format!(", heap {b}"))
                .unwrap_or_default()
        ),
        Progress::Message(Message::Phase(p)) => match &p.subject {
            // The table's figures, in the table's words: a program's objects only when its
            // store was read (the status protocol), its heap as the program gave it.
            Some(s) => files::say!(
                "      {:<12} {:>10} objects  RSS {:>10}  heap {:>10}  ({:.0} ms)",
                p.name,
                if s.store_checked {
                    p.objects.to_string()
                } else {
                    "-".to_owned()
                },
                s.rss_shown(),
                s.live_heap()
                    .map_or_else(|| "-".to_owned(), |b| b.to_string()),
                p.measurement.duration_ms
            ),
            None => {
                let shown = Shown::of(p);
                files::say!(
                    "      {:<12} {:>10} objects  live {:>10}  peak {:>10}  ({:.0} ms)",
                    p.name,
                    p.objects,
                    shown.live.to_string(),
                    shown.peak.to_string(),
                    p.measurement.duration_ms
                )
            }
        },
        Progress::Message(Message::Failed(e)) => files::say!("      failed: {e}"),
    }
}
