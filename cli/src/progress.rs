//! Progress bars for commands that can take a while (`check`, `sample`, `plot`, and `bench`).
//!
//! A bar is drawn on stderr only when
//! - the command is not in `--json` mode,
//! - both stdout and stderr are terminals (piped or redirected output never gets bar characters),
//! - `PINV_PROGRESS` is not `0`/`never`/`off`, and
//! - the work has taken more than a moment ([`DELAY`]): quick commands never flash a bar
//!   (`PINV_PROGRESS=always` shows it at once, as the tests do).
//!
//! It is cleared when the work ends, so the command's own output is all that stays.
//!
//! Use it from any command (`bench` included) like this:
//!
//! ```ignore
//! let progress = Progress::new(total, json, "checking");
//! for (i, case) in cases.iter().enumerate() {
//!     progress.set_message(name);
//!     work(case);
//!     progress.set_position(i as u64 + 1);
//! }
//! progress.finish();
//! ```

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::borrow::Cow;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How long work runs before its bar appears.
pub const DELAY: Duration = Duration::from_millis(400);

/// How long to wait before showing a bar: [`DELAY`], or nothing with `PINV_PROGRESS=always`.
fn delay() -> Duration {
    match std::env::var("PINV_PROGRESS").as_deref() {
        Ok("always" | "1" | "on" | "true") => Duration::ZERO,
        _ => DELAY,
    }
}

/// A progress bar that shows itself only when it should (see the module docs).
pub struct Progress {
    /// `None` when bars are off for this run.
    bar: Option<ProgressBar>,
    start: Instant,
    shown: AtomicBool,
}

/// Whether this run may draw progress bars at all.
pub fn allowed(json: bool) -> bool {
    if json {
        return false;
    }
    if let Ok(setting) = std::env::var("PINV_PROGRESS") {
        if matches!(setting.as_str(), "0" | "never" | "off" | "false") {
            return false;
        }
    }
    std::io::stdout().is_terminal() && std::io::stderr().is_terminal()
}

impl Progress {
    /// A bar over `total` steps, labelled with `what` (`checking`, `sampling`, ...).
    pub fn new(total: u64, json: bool, what: &str) -> Progress {
        let bar = allowed(json).then(|| {
            let style = ProgressStyle::with_template(
                "{prefix:>10.cyan.bold} [{bar:30.cyan/blue}] {pos}/{len} {msg} ({elapsed}, eta {eta})",
            )
            .expect("a valid progress template")
            .progress_chars("=> ");
            ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden())
                .with_style(style)
                .with_prefix(what.to_string())
        });
        Progress {
            bar,
            start: Instant::now(),
            shown: AtomicBool::new(false),
        }
    }

    /// The text after the counts, such as the function being checked.
    pub fn set_message(&self, message: impl Into<Cow<'static, str>>) {
        if let Some(bar) = &self.bar {
            bar.set_message(message);
            self.reveal();
        }
    }

    /// Sets the position (for work counted by results rather than steps).
    pub fn set_position(&self, pos: u64) {
        if let Some(bar) = &self.bar {
            bar.set_position(pos);
            self.reveal();
        }
    }

    /// Advances the position by `delta` (work done by several threads at once).
    pub fn inc(&self, delta: u64) {
        if let Some(bar) = &self.bar {
            bar.inc(delta);
            self.reveal();
        }
    }

    /// Removes the bar from the screen.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }

    fn reveal(&self) {
        let Some(bar) = &self.bar else { return };
        if !self.shown.load(Ordering::Relaxed)
            && self.start.elapsed() >= delay()
            && !self.shown.swap(true, Ordering::Relaxed)
        {
            bar.set_draw_target(ProgressDrawTarget::stderr());
            bar.enable_steady_tick(Duration::from_millis(200));
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}
