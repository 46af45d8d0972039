//! Ctrl-C (or SIGTERM) during `apply`, taken as Terraform takes it: the first asks the run to
//! start no new change and to let the ones in flight finish (core's `Interrupt`: a resource's
//! operations are never cut in two); the second ends the process at once. The journal is
//! written before and after every cloud call, so what a stop at once leaves in flight is known
//! to the next plan or apply, which recovers from it.

use std::sync::Arc;

use miette::Report;

use super::super::colour;
use super::super::exit;
use super::super::signals::StopSignals;
use crate::apply::interrupt::Interrupt;
use crate::invocation::skyplan;

/// Listens while it lives: dropped once the run ended, it stops listening.
pub(super) struct Listening {
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Listening {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Listens for the signals that interrupt `interrupt`'s run.
pub(super) fn listen(interrupt: Arc<Interrupt>) -> Result<Listening, Report> {
    let mut signals = StopSignals::listen()?;
    let task = tokio::spawn(async move {
        if signals.next().await.is_err() {
            return;
        }
        interrupt.ask();
        colour::eprintln(format_args!(
            "Interrupt received: apply starts no new change and lets the ones in flight finish. Press Ctrl-C again to stop at once."
        ));
        if signals.next().await.is_ok() {
            stop_at_once();
        }
    });
    Ok(Listening { task })
}

/// Ends the process now, without waiting for what is in flight: the journal already holds it.
fn stop_at_once() -> ! {
    colour::eprintln(format_args!(
        "Stopped at once: what was in flight may or may not have been done, and the apply journal records it; `{}` (or plan) recovers from it.",
        skyplan("apply")
    ));
    std::process::exit(exit::ERROR.into())
}
