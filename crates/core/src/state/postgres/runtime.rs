//! The PostgreSQL client is async (tokio-postgres) while the state interface is synchronous
//! and called from inside skyplan's own runtime, where blocking on that runtime would
//! deadlock. So the backend runs its connections on a small runtime of its own, and each call
//! waits for its answer on a channel.

use std::future::Future;

use tokio::runtime::{Builder, Handle, Runtime};

use crate::state::StateError;

pub(super) struct Executor {
    /// Always `Some` until dropped.
    runtime: Option<Runtime>,
}

impl Executor {
    pub(super) fn new() -> Result<Executor, StateError> {
        let runtime = Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("skyplan-postgres")
            .enable_all()
            .build()
            .map_err(|e| StateError::PostgresSetup(format!("cannot start its runtime: {e}")))?;
        Ok(Executor {
            runtime: Some(runtime),
        })
    }

    pub(super) fn handle(&self) -> &Handle {
        self.runtime.as_ref().expect("alive until dropped").handle()
    }

    /// Runs `future` on the backend's runtime and waits for its output; callable from any
    /// thread, inside another runtime or not.
    pub(super) fn run<T, F>(&self, future: F) -> T
    where
        T: Send + 'static,
        F: Future<Output = T> + Send + 'static,
    {
        let (sender, receiver) = std::sync::mpsc::sync_channel(1);
        self.handle().spawn(async move {
            let _ = sender.send(future.await);
        });
        receiver
            .recv()
            .expect("the backend's runtime runs every task it is given to the end")
    }
}

impl Drop for Executor {
    fn drop(&mut self) {
        // Dropping a runtime blocks, which panics inside another runtime; this does not.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}
