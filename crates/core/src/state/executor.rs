//! The remote backends' clients are async (tokio-postgres, kube) while the state interface is
//! synchronous and called from inside skyplan's own runtime, where blocking on that runtime
//! would deadlock. So such a backend runs its connections on a small runtime of its own, and
//! each call waits for its answer on a channel.

use std::future::Future;

use tokio::runtime::{Builder, Handle, Runtime};

/// A backend's own runtime.
pub struct Executor {
    /// Always `Some` until dropped.
    runtime: Option<Runtime>,
}

impl Executor {
    /// A runtime of one worker thread named `thread_name`.
    pub fn new(thread_name: &str) -> std::io::Result<Executor> {
        let runtime = Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name(thread_name)
            .enable_all()
            .build()?;
        Ok(Executor {
            runtime: Some(runtime),
        })
    }

    pub fn handle(&self) -> &Handle {
        self.runtime.as_ref().expect("alive until dropped").handle()
    }

    /// Runs `future` on the backend's runtime and waits for its output; callable from any
    /// thread, inside another runtime or not.
    pub fn run<T, F>(&self, future: F) -> T
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
