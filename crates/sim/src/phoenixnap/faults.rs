//! Faults injected on purpose: the cloudscale simulator's transport faults (latency, 429, 5xx,
//! dropped connections, calls carried out whose answer is lost; same spec syntax, same draw),
//! plus `tags-put-fail=P`: a share of `PUT /ip-blocks/{id}/tags` answered 500 without changing
//! anything — the CCM's leak path (b) (research §6.5). Only the four APIs are faulted, not the
//! token endpoint.

use std::fmt;
use std::str::FromStr;
use std::sync::Mutex;
use std::time::Duration;

use axum::extract::{ConnectInfo, Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::api::ApiError;
use super::state::Sim;
use super::stats::FaultKind;
use crate::cloudscale::{
    draw_transport_fault, ConnectionAbort, Faults as TransportFaults, FaultsError, TransportFault,
};

const TAGS_PUT_FAIL: &str = "tags-put-fail";

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Faults {
    pub transport: TransportFaults,
    /// Share of `PUT /ip-blocks/{id}/tags` that fail with 500 and change nothing.
    pub tags_put_fail: f64,
}

impl FromStr for Faults {
    type Err = FaultsError;

    fn from_str(spec: &str) -> Result<Self, FaultsError> {
        let mut tags_put_fail = None;
        let mut rest = Vec::new();
        for entry in spec.split(',') {
            match entry.split_once('=') {
                Some((key, value)) if key.trim() == TAGS_PUT_FAIL => {
                    match value.trim().parse::<f64>() {
                        Ok(rate) if (0.0..=1.0).contains(&rate) && tags_put_fail.is_none() => {
                            tags_put_fail = Some(rate)
                        }
                        // Let the transport parser word the refusal the usual way.
                        _ => rest.push("tags-put-fail=invalid"),
                    }
                }
                _ => rest.push(entry),
            }
        }
        Ok(Faults {
            transport: rest.join(",").parse()?,
            tags_put_fail: tags_put_fail.unwrap_or(0.0),
        })
    }
}

impl fmt::Display for Faults {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.transport.is_none(), self.tags_put_fail) {
            (_, 0.0) => write!(f, "{}", self.transport),
            (true, rate) => write!(f, "{TAGS_PUT_FAIL}={rate}"),
            (false, rate) => write!(f, "{},{TAGS_PUT_FAIL}={rate}", self.transport),
        }
    }
}

/// The faults and the random source they are drawn from, shared by all requests.
pub struct Injector {
    faults: Faults,
    rng: Mutex<StdRng>,
}

impl Injector {
    pub fn new(faults: Faults) -> Self {
        let rng = faults
            .transport
            .seed
            .map_or_else(StdRng::from_os_rng, StdRng::seed_from_u64);
        Injector {
            faults,
            rng: Mutex::new(rng),
        }
    }

    fn draw(&self, mutating: bool) -> (Duration, Option<TransportFault>) {
        draw_transport_fault(&self.faults.transport, &mut *self.rng(), mutating)
    }

    /// Whether this tags PUT is to fail.
    pub fn tags_put_fails(&self) -> bool {
        self.faults.tags_put_fail > 0.0 && self.rng().random::<f64>() < self.faults.tags_put_fail
    }

    fn rng(&self) -> std::sync::MutexGuard<'_, StdRng> {
        self.rng.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Middleware (a route layer on the four APIs) injecting the transport faults.
pub async fn inject(
    State(sim): State<Sim>,
    ConnectInfo(abort): ConnectInfo<ConnectionAbort>,
    request: Request,
    next: Next,
) -> Response {
    let (delay, fault) = sim.injector().draw(!request.method().is_safe());
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    let Some(fault) = fault else {
        return next.run(request).await;
    };
    match fault {
        TransportFault::Throttle => {
            sim.stats().record_fault(FaultKind::Throttled);
            let error = ApiError::new(StatusCode::TOO_MANY_REQUESTS, "Too many requests.");
            ([(header::RETRY_AFTER, "1")], error).into_response()
        }
        TransportFault::ServerError(status) => {
            sim.stats().record_fault(FaultKind::ServerError);
            simulated_error(status)
        }
        TransportFault::Drop => {
            sim.stats().record_fault(FaultKind::Dropped);
            dropped(&abort)
        }
        TransportFault::AfterCommit { drop } => {
            let response = next.run(request).await;
            // A refused request changed nothing: there is no commit to hide.
            if !response.status().is_success() {
                return response;
            }
            sim.stats().record_fault(FaultKind::AfterCommit);
            match drop {
                true => dropped(&abort),
                false => simulated_error(StatusCode::INTERNAL_SERVER_ERROR),
            }
        }
    }
}

/// The error a fault answers with.
pub fn simulated(status: StatusCode) -> ApiError {
    ApiError::new(status, "Simulated server error (fault injection).")
}

fn simulated_error(status: StatusCode) -> Response {
    simulated(status).into_response()
}

/// Trips the connection's switch; the response returned is never written.
fn dropped(abort: &ConnectionAbort) -> Response {
    abort.trip();
    StatusCode::INTERNAL_SERVER_ERROR.into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_put_fail_sits_beside_the_transport_faults() {
        let faults: Faults = "5xx=0.1,tags-put-fail=0.5,seed=3".parse().unwrap();
        assert_eq!(faults.tags_put_fail, 0.5);
        assert_eq!(faults.transport.rate_5xx, 0.1);
        assert_eq!(faults.to_string(), "5xx=0.1,seed=3,tags-put-fail=0.5");
        assert_eq!(faults.to_string().parse::<Faults>().unwrap(), faults);
        let alone: Faults = "tags-put-fail=1".parse().unwrap();
        assert_eq!(alone.to_string(), "tags-put-fail=1");
        assert_eq!("none".parse::<Faults>().unwrap(), Faults::default());
    }

    #[test]
    fn bad_specs_are_refused() {
        for spec in [
            "tags-put-fail=2",
            "tags-put-fail=x",
            "tags-put-fail=0.1,tags-put-fail=0.2",
            "job-fail=1",
        ] {
            assert!(spec.parse::<Faults>().is_err(), "{spec}");
        }
    }

    #[test]
    fn tags_put_failures_follow_the_rate_and_reads_never_fail_after_commit() {
        let injector = Injector::new("tags-put-fail=0.3,seed=5".parse().unwrap());
        let failed = (0..10_000).filter(|_| injector.tags_put_fails()).count();
        assert!((2700..3300).contains(&failed), "{failed}");
        assert!((0..100).all(|_| !Injector::new(Faults::default()).tags_put_fails()));
        let injector = Injector::new("after-commit=1".parse().unwrap());
        assert!((0..100).all(|_| injector.draw(false).1.is_none()));
        assert!(matches!(
            injector.draw(true).1,
            Some(TransportFault::AfterCommit { .. })
        ));
    }
}
