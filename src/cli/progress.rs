//! Progress while applying: a live view on a terminal (one line per resource in flight, with
//! its elapsed time and current operation or wait), plain timestamped lines otherwise (CI logs).

use std::collections::HashMap;
use std::io::{IsTerminal, Write};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use jiff::Timestamp;

pub use crate::apply::progress::{Event, Progress};

/// The live view when stderr is a terminal (coloured only as decided), plain timestamped
/// lines otherwise.
pub fn progress_for_stderr() -> Box<dyn Progress> {
    if std::io::stderr().is_terminal() {
        let colour = super::colour::decided().stderr;
        Box::new(LiveProgress::new(ProgressDrawTarget::stderr(), colour))
    } else {
        Box::new(PlainProgress::new(std::io::stderr(), Timestamp::now))
    }
}

/// The text of an event without a timestamp, e.g. `load-balancer.web: create pool tcp/http
/// (0.4 s)`.
fn describe(event: &Event<'_>) -> String {
    match *event {
        Event::Started { address, operation } => format!("{address}: {operation} started"),
        Event::Finished {
            address,
            operation,
            elapsed,
        } => format!("{address}: {operation} ({})", seconds(elapsed)),
        Event::Waiting { address, what } => format!("{address}: waiting for {what}"),
        Event::ResourceDone {
            address,
            ok,
            elapsed,
        } => {
            let outcome = if ok { "done" } else { "failed" };
            format!("{address}: {outcome} ({})", seconds(elapsed))
        }
    }
}

/// `0.4 s`, `59.9 s`, `2 min 05 s`.
fn seconds(elapsed: Duration) -> String {
    let secs = elapsed.as_secs_f64();
    if secs < 60.0 {
        format!("{secs:.1} s")
    } else {
        let whole = elapsed.as_secs();
        format!("{} min {:02} s", whole / 60, whole % 60)
    }
}

/// One line per event, `2026-11-21T23:50:01Z load-balancer.web: create pool tcp/http (0.4 s)`.
pub struct PlainProgress<W> {
    out: Mutex<W>,
    /// The clock, a parameter so that tests can fix it.
    now: fn() -> Timestamp,
}

impl<W: Write + Send> PlainProgress<W> {
    pub fn new(out: W, now: fn() -> Timestamp) -> Self {
        PlainProgress {
            out: Mutex::new(out),
            now,
        }
    }

    fn out(&self) -> MutexGuard<'_, W> {
        // A task that panicked mid-line leaves nothing the next line depends on.
        self.out.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl<W: Write + Send> Progress for PlainProgress<W> {
    fn event(&self, event: Event<'_>) {
        let time = (self.now)().strftime("%Y-%m-%dT%H:%M:%SZ");
        // Progress is informational: a closed or full stderr must not fail the apply.
        let _ = writeln!(self.out(), "{time} {}", describe(&event));
    }

    fn finish(&self) {
        let _ = self.out().flush();
    }
}

/// The spinner line of one resource: `⠋ load-balancer.web  12s create pool tcp/http`.
const LINE_TEMPLATE: &str = "{spinner:.cyan} {prefix:.bold} {elapsed:>4} {wide_msg}";
/// The same without colour or bold (indicatif would colour by rules of its own).
const PLAIN_LINE_TEMPLATE: &str = "{spinner} {prefix} {elapsed:>4} {wide_msg}";
const TICK: Duration = Duration::from_millis(120);

/// The terminal view. Finished operations and resources are printed above the spinners with
/// `MultiProgress::println`, so completed lines stay in the scrollback and never interleave
/// with a redraw.
struct LiveProgress {
    multi: MultiProgress,
    style: ProgressStyle,
    in_flight: Mutex<HashMap<String, InFlight>>,
}

struct InFlight {
    bar: ProgressBar,
    /// The current operation, kept so that a wait can say what it waits in.
    operation: String,
}

impl LiveProgress {
    fn new(target: ProgressDrawTarget, colour: bool) -> Self {
        let template = match colour {
            true => LINE_TEMPLATE,
            false => PLAIN_LINE_TEMPLATE,
        };
        LiveProgress {
            multi: MultiProgress::with_draw_target(target),
            style: ProgressStyle::with_template(template).expect("the line template is valid"),
            in_flight: Mutex::new(HashMap::new()),
        }
    }

    fn in_flight(&self) -> MutexGuard<'_, HashMap<String, InFlight>> {
        self.in_flight
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The line of `address`, added (and its clock started) on the resource's first event.
    fn line<'m>(
        &self,
        lines: &'m mut HashMap<String, InFlight>,
        address: &str,
    ) -> &'m mut InFlight {
        lines.entry(address.to_string()).or_insert_with(|| {
            let bar = ProgressBar::new_spinner()
                .with_style(self.style.clone())
                .with_prefix(address.to_string());
            let bar = self.multi.add(bar);
            bar.enable_steady_tick(TICK);
            InFlight {
                bar,
                operation: String::new(),
            }
        })
    }

    fn print_above(&self, event: &Event<'_>) {
        // As for the plain lines: a broken terminal must not fail the apply.
        let _ = self.multi.println(describe(event));
    }
}

impl Progress for LiveProgress {
    fn event(&self, event: Event<'_>) {
        let mut lines = self.in_flight();
        match event {
            Event::Started { address, operation } => {
                let line = self.line(&mut lines, address);
                line.operation = operation.to_string();
                line.bar.set_message(line.operation.clone());
            }
            Event::Waiting { address, what } => {
                let line = self.line(&mut lines, address);
                let message = match line.operation.as_str() {
                    "" => format!("waiting for {what}"),
                    operation => format!("{operation}: waiting for {what}"),
                };
                line.bar.set_message(message);
            }
            Event::Finished { .. } => self.print_above(&event),
            Event::ResourceDone { address, .. } => {
                if let Some(line) = lines.remove(address) {
                    line.bar.finish_and_clear();
                    self.multi.remove(&line.bar);
                }
                self.print_above(&event);
            }
        }
    }

    fn finish(&self) {
        for (_, line) in self.in_flight().drain() {
            line.bar.finish_and_clear();
            self.multi.remove(&line.bar);
        }
        let _ = self.multi.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixed_clock() -> Timestamp {
        "2026-11-21T23:50:01.734Z".parse().unwrap()
    }

    fn plain_lines(events: &[Event<'_>]) -> String {
        let progress = PlainProgress::new(Vec::new(), fixed_clock);
        for &event in events {
            progress.event(event);
        }
        progress.finish();
        String::from_utf8(progress.out.into_inner().unwrap()).unwrap()
    }

    const WEB: &str = "load-balancer.web";

    #[test]
    fn plain_lines_carry_a_utc_timestamp_to_the_second() {
        let text = plain_lines(&[
            Event::Started {
                address: WEB,
                operation: "create pool tcp/http",
            },
            Event::Waiting {
                address: WEB,
                what: "the load balancer to be running",
            },
            Event::Finished {
                address: WEB,
                operation: "create pool tcp/http",
                elapsed: Duration::from_millis(420),
            },
            Event::ResourceDone {
                address: WEB,
                ok: true,
                elapsed: Duration::from_millis(65_300),
            },
            Event::ResourceDone {
                address: "load-balancer.api",
                ok: false,
                elapsed: Duration::from_secs(3),
            },
        ]);
        assert_eq!(
            text,
            "2026-11-21T23:50:01Z load-balancer.web: create pool tcp/http started\n\
             2026-11-21T23:50:01Z load-balancer.web: waiting for the load balancer to be running\n\
             2026-11-21T23:50:01Z load-balancer.web: create pool tcp/http (0.4 s)\n\
             2026-11-21T23:50:01Z load-balancer.web: done (1 min 05 s)\n\
             2026-11-21T23:50:01Z load-balancer.api: failed (3.0 s)\n"
        );
    }

    #[test]
    fn elapsed_time_reads_in_seconds_then_minutes() {
        assert_eq!(seconds(Duration::ZERO), "0.0 s");
        assert_eq!(seconds(Duration::from_millis(59_940)), "59.9 s");
        assert_eq!(seconds(Duration::from_secs(60)), "1 min 00 s");
        assert_eq!(seconds(Duration::from_secs(3725)), "62 min 05 s");
    }

    #[test]
    fn the_live_view_keeps_one_line_per_resource_in_flight() {
        let live = LiveProgress::new(ProgressDrawTarget::hidden(), false);
        let started = |address| Event::Started {
            address,
            operation: "update listener",
        };
        live.event(started(WEB));
        live.event(started("load-balancer.api"));
        live.event(Event::Waiting {
            address: WEB,
            what: "the load balancer to be running",
        });
        assert_eq!(
            live.in_flight()[WEB].bar.message(),
            "update listener: waiting for the load balancer to be running"
        );
        live.event(Event::ResourceDone {
            address: WEB,
            ok: true,
            elapsed: Duration::from_secs(1),
        });
        let remaining: Vec<String> = live.in_flight().keys().cloned().collect();
        assert_eq!(remaining, ["load-balancer.api"]);
        live.finish();
        assert!(live.in_flight().is_empty());
    }
}
