//! The CloudStack API client: request signing exactly as the server verifies it, response
//! envelopes, error codes, paging, async jobs and safe retries. It knows the wire protocol and
//! nothing about skyplan's resources.
//!
//! INTERFACE (fixed; the rest of the provider codes against it):
//! - [`Credentials`] — api url, api key, secret key (a [`Secret`]), project id, zone,
//!   ssl-no-verify; `Credentials::from_cloud_config(path)` reads the CCM's / `cs`'s INI file.
//! - [`CloudstackClient::new`], [`CloudstackClient::call`] (one synchronous command → the
//!   object under `<command lower-case>response`), [`CloudstackClient::list`] (every page of a
//!   list command → the items under `item_key`), [`CloudstackClient::run_job`] (an async
//!   command, polled to the end → its `jobresult`), [`CloudstackClient::request_count`].
//! - [`Error`] with `is_uncertain()` (the call may have been carried out) and `code()` (the
//!   CloudStack errorcode, e.g. 431, 530, 537).
//!
//! Files: `sign.rs` (the canonical string and HMAC), `credentials.rs` (the cloud-config),
//! `transport.rs` (the client, one signed POST per attempt, retries), `envelope.rs` (response
//! and error envelopes), `retry.rs` (what may be repeated), `paging.rs` (`list`), `jobs.rs`
//! (`run_job`), `error.rs`.

mod credentials;
mod envelope;
mod error;
mod jobs;
mod paging;
mod retry;
mod sign;
mod transport;

#[cfg(test)]
mod test_support;

pub use credentials::Credentials;
pub use error::Error;
pub use jobs::JobPolicy;
pub use retry::RetryPolicy;
pub use skyplan_core::model::Secret;
pub use transport::CloudstackClient;

/// The API's page size: `default.page.size`, 500 unless an operator changed it.
pub const PAGE_SIZE: usize = 500;

/// Request parameters as (name, value) pairs; lists are already comma-joined and maps spelled
/// `name[i].key` by the caller. A name given twice keeps its last value; the names the client
/// sets itself (`command`, `apiKey`, `response`, `signatureversion`, `expires`, `signature`)
/// cannot be overridden.
pub type Params = Vec<(String, String)>;
