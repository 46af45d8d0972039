//! What runs beside a provider and must be stopped with it. The registry's embedded wiring
//! starts a simulator for an `endpoint = "embedded"` and hands the provider its URL and a
//! [`Companion`]: the provider stops it when it closes (the simulator writes its world then),
//! without knowing what it is.

use std::future::Future;

use futures::future::BoxFuture;
use futures::FutureExt;

type Stop = Box<dyn FnOnce() -> BoxFuture<'static, Result<(), String>> + Send>;

pub struct Companion {
    /// What a failed stop means to the user (`cannot save the embedded world`).
    failure: &'static str,
    stop: Stop,
}

impl Companion {
    /// `stop` makes the future that stops it; its error is shown after `failure`.
    pub fn new<S, F, E>(failure: &'static str, stop: S) -> Self
    where
        S: FnOnce() -> F + Send + 'static,
        F: Future<Output = Result<(), E>> + Send + 'static,
        E: std::fmt::Display,
    {
        let stop: Stop = Box::new(move || stop().map(|r| r.map_err(|e| e.to_string())).boxed());
        Companion { failure, stop }
    }

    /// Stops it; the error says what failing to means, and why it failed.
    pub async fn stop(self) -> Result<(), String> {
        (self.stop)()
            .await
            .map_err(|e| format!("{}: {e}", self.failure))
    }
}

impl std::fmt::Debug for Companion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Companion")
            .field("failure", &self.failure)
            .finish()
    }
}
