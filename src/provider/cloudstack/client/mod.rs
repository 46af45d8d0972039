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

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

pub use crate::model::Secret;

/// The API's page size: `default.page.size`, 500 unless an operator changed it.
pub const PAGE_SIZE: usize = 500;

/// Request parameters as (name, value) pairs; lists are already comma-joined and maps spelled
/// `name[i].key` by the caller.
pub type Params = Vec<(String, String)>;

/// What a client needs to talk to one CloudStack account.
#[derive(Clone, Debug)]
pub struct Credentials {
    /// e.g. `https://cloud.example.com/client/api`.
    pub api_url: String,
    pub api_key: String,
    pub secret_key: Secret,
    pub project_id: Option<String>,
    pub zone: Option<String>,
    /// Skip TLS verification (a warning is logged when set).
    pub ssl_no_verify: bool,
}

/// How async jobs are awaited.
#[derive(Clone, Copy, Debug)]
pub struct JobPolicy {
    pub first_poll: Duration,
    pub max_poll: Duration,
    pub timeout: Duration,
}

impl Default for JobPolicy {
    fn default() -> Self {
        JobPolicy {
            first_poll: Duration::from_secs(1),
            max_poll: Duration::from_secs(15),
            timeout: Duration::from_secs(3600),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("placeholder")]
    Todo,
}

impl Error {
    /// The CloudStack error code (HTTP status / `errorcode`, or a failed job's errorcode).
    pub fn code(&self) -> Option<u16> {
        None
    }

    /// Whether the call may have been carried out although it failed (5xx, connection lost
    /// after sending): a create must look for what it may have made before trying again.
    pub fn is_uncertain(&self) -> bool {
        false
    }
}

pub struct CloudstackClient {}

impl CloudstackClient {
    pub fn new(_credentials: Credentials) -> Result<CloudstackClient, Error> {
        Err(Error::Todo)
    }

    /// Polls quicker or slower than the default (the embedded simulator finishes jobs fast).
    pub fn with_job_policy(self, _policy: JobPolicy) -> CloudstackClient {
        self
    }

    /// One synchronous command; returns the object under `<command>response`.
    pub async fn call(&self, _command: &str, _params: &Params) -> Result<Value, Error> {
        Err(Error::Todo)
    }

    /// Every item of a list command, page by page (`page`, `pagesize` = [`PAGE_SIZE`]) until
    /// `count` items are read: ceil(N/500) calls. `listall=true` and the project id are added.
    pub async fn list(
        &self,
        _command: &str,
        _params: &Params,
        _item_key: &str,
    ) -> Result<Vec<Value>, Error> {
        Err(Error::Todo)
    }

    /// An async command, polled with `queryAsyncJobResult` until it ends; returns `jobresult`
    /// of a successful job, and a failed job (jobstatus 2) as an error with its text.
    pub async fn run_job(&self, _command: &str, _params: &Params) -> Result<Value, Error> {
        Err(Error::Todo)
    }

    /// API requests made so far (every HTTP request, polls included).
    pub fn request_count(&self) -> u64 {
        0
    }
}

impl Credentials {
    /// Reads the `[Global]` section of a cloud-config INI file.
    pub fn from_cloud_config(_path: &Path) -> Result<Credentials, Error> {
        Err(Error::Todo)
    }
}
