//! What runs beside a provider and must be stopped with it. The registry's embedded wiring
//! starts a simulator for an `endpoint = "embedded"` and hands the provider its URL and a
//! [`Companion`]: the provider stops it when it closes (the simulator writes its world then),
//! without knowing what it is.

use futures::future::BoxFuture;

type Stop = Box<dyn FnOnce() -> BoxFuture<'static, Result<(), String>> + Send>;

pub struct Companion {
    /// What a failed stop means to the user (`cannot save the embedded world`).
    failure: &'static str,
    stop: Stop,
}

impl Companion {
    pub fn new(failure: &'static str, stop: Stop) -> Self {
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
