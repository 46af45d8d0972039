//! SIGINT and SIGTERM: the CLI owns the signals; what they mean is each command's (`sim serve`
//! stops, `apply` is interrupted, see `commands/apply_interrupt.rs`). Listened for from the
//! moment [`StopSignals::listen`] returns: a signal before that ends the process at once.

use miette::{IntoDiagnostic, Report};

pub struct StopSignals {
    #[cfg(unix)]
    interrupt: tokio::signal::unix::Signal,
    #[cfg(unix)]
    terminate: tokio::signal::unix::Signal,
}

impl StopSignals {
    pub fn listen() -> Result<StopSignals, Report> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            Ok(StopSignals {
                interrupt: signal(SignalKind::interrupt()).into_diagnostic()?,
                terminate: signal(SignalKind::terminate()).into_diagnostic()?,
            })
        }
        #[cfg(not(unix))]
        Ok(StopSignals {})
    }

    /// Resolves on the next SIGINT or SIGTERM.
    pub async fn next(&mut self) -> Result<(), Report> {
        #[cfg(unix)]
        tokio::select! {
            _ = self.interrupt.recv() => {}
            _ = self.terminate.recv() => {}
        }
        #[cfg(not(unix))]
        tokio::signal::ctrl_c().await.into_diagnostic()?;
        Ok(())
    }

    /// Resolves on the first SIGINT or SIGTERM.
    pub async fn wait(mut self) -> Result<(), Report> {
        self.next().await
    }
}
