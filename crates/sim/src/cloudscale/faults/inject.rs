//! Drawing and injecting faults: a middleware on the `/v1` routes that delays each request,
//! then may refuse it (429, 5xx), drop its connection, or perform it and then fail.

use std::sync::Mutex;
use std::time::Duration;

use axum::extract::{ConnectInfo, Request, State};
use axum::http::{header, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::abort::ConnectionAbort;
use super::spec::Faults;
use crate::cloudscale::api::ApiError;
use crate::cloudscale::state::Sim;
use crate::cloudscale::stats::FaultKind;

/// The statuses a failing server or the proxy in front of it answers.
const SERVER_ERRORS: [StatusCode; 4] = [
    StatusCode::INTERNAL_SERVER_ERROR,
    StatusCode::BAD_GATEWAY,
    StatusCode::SERVICE_UNAVAILABLE,
    StatusCode::GATEWAY_TIMEOUT,
];

/// The faults and the random source they are drawn from, shared by all requests.
pub struct Injector {
    faults: Faults,
    rng: Mutex<StdRng>,
}

/// What happens to one request (shared with the PhoenixNAP simulator, whose transport faults
/// are the same).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fault {
    Throttle,
    ServerError(StatusCode),
    Drop,
    /// Perform the request, then drop the connection (`true`) or answer 500.
    AfterCommit {
        drop: bool,
    },
}

impl Injector {
    pub fn new(faults: Faults) -> Self {
        let rng = faults
            .seed
            .map_or_else(StdRng::from_os_rng, StdRng::seed_from_u64);
        Injector {
            faults,
            rng: Mutex::new(rng),
        }
    }

    fn draw(&self, mutating: bool) -> (Duration, Option<Fault>) {
        let mut rng = self
            .rng
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        draw(&self.faults, &mut rng, mutating)
    }
}

/// The delay and the fault for one request. Draws the same number of values whatever the
/// outcome, so a seeded sequence of requests always meets the same faults.
pub(crate) fn draw(
    faults: &Faults,
    rng: &mut impl Rng,
    mutating: bool,
) -> (Duration, Option<Fault>) {
    let delay = faults
        .latency
        .map_or(Duration::ZERO, |(low, high)| rng.random_range(low..=high));
    let roll: f64 = rng.random();
    let status = SERVER_ERRORS[rng.random_range(0..SERVER_ERRORS.len())];
    let drop_after_commit: bool = rng.random();
    let bands = [
        (faults.rate_429, Some(Fault::Throttle)),
        (faults.rate_5xx, Some(Fault::ServerError(status))),
        (faults.rate_drop, Some(Fault::Drop)),
        (
            faults.rate_fail_after_commit,
            // A read changes nothing, so it has nothing to commit.
            mutating.then_some(Fault::AfterCommit {
                drop: drop_after_commit,
            }),
        ),
    ];
    let mut floor = 0.0;
    for (rate, fault) in bands {
        if roll < floor + rate {
            return (delay, fault);
        }
        floor += rate;
    }
    (delay, None)
}

fn is_mutating(method: &Method) -> bool {
    !method.is_safe()
}

/// Middleware (a route layer on the `/v1` routes only) injecting the configured faults.
pub async fn inject(
    State(sim): State<Sim>,
    ConnectInfo(abort): ConnectInfo<ConnectionAbort>,
    request: Request,
    next: Next,
) -> Response {
    let (delay, fault) = sim.injector().draw(is_mutating(request.method()));
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    let Some(fault) = fault else {
        return next.run(request).await;
    };
    match fault {
        Fault::Throttle => {
            sim.stats().record_fault(FaultKind::Throttled);
            throttled()
        }
        Fault::ServerError(status) => {
            sim.stats().record_fault(FaultKind::ServerError);
            server_error(status)
        }
        Fault::Drop => {
            sim.stats().record_fault(FaultKind::Dropped);
            dropped(&abort)
        }
        Fault::AfterCommit { drop } => {
            let response = next.run(request).await;
            // A refused request changed nothing: there is no commit to hide.
            if !response.status().is_success() {
                return response;
            }
            sim.stats().record_fault(FaultKind::AfterCommit);
            if drop {
                dropped(&abort)
            } else {
                server_error(StatusCode::INTERNAL_SERVER_ERROR)
            }
        }
    }
}

/// The real API throttles with 429 and the Django REST framework's message.
fn throttled() -> Response {
    let error = ApiError {
        status: StatusCode::TOO_MANY_REQUESTS,
        detail: "Request was throttled. Expected available in 1 second.".into(),
    };
    ([(header::RETRY_AFTER, "1")], error).into_response()
}

fn server_error(status: StatusCode) -> Response {
    ApiError {
        status,
        detail: "Simulated server error (fault injection).".into(),
    }
    .into_response()
}

/// Trips the connection's switch; the response returned is never written.
fn dropped(abort: &ConnectionAbort) -> Response {
    abort.trip();
    StatusCode::INTERNAL_SERVER_ERROR.into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn faults(spec: &str) -> Faults {
        spec.parse().unwrap()
    }

    fn outcomes(spec: &str, mutating: bool, n: usize) -> Vec<(Duration, Option<Fault>)> {
        let injector = Injector::new(faults(spec));
        (0..n).map(|_| injector.draw(mutating)).collect()
    }

    fn share(outcomes: &[(Duration, Option<Fault>)], kind: fn(&Fault) -> bool) -> f64 {
        let hits = outcomes
            .iter()
            .filter(|(_, fault)| fault.as_ref().is_some_and(kind))
            .count();
        hits as f64 / outcomes.len() as f64
    }

    #[test]
    fn no_faults_never_fault_nor_wait() {
        let outcomes = outcomes("none", true, 1000);
        assert!(outcomes.iter().all(|o| *o == (Duration::ZERO, None)));
    }

    #[test]
    fn rates_are_honoured() {
        let spec = "429=0.1,5xx=0.2,drop=0.05,after-commit=0.15,seed=11";
        let outcomes = outcomes(spec, true, 20_000);
        let near = |actual: f64, expected: f64| (actual - expected).abs() < 0.015;
        assert!(near(share(&outcomes, |f| *f == Fault::Throttle), 0.1));
        assert!(near(
            share(&outcomes, |f| matches!(f, Fault::ServerError(_))),
            0.2
        ));
        assert!(near(share(&outcomes, |f| *f == Fault::Drop), 0.05));
        let after_commit = |f: &Fault| matches!(f, Fault::AfterCommit { .. });
        assert!(near(share(&outcomes, after_commit), 0.15));
        let dropping = |f: &Fault| *f == Fault::AfterCommit { drop: true };
        assert!(near(share(&outcomes, dropping), 0.075));
    }

    #[test]
    fn reads_are_never_failed_after_commit() {
        let outcomes = outcomes("after-commit=1", false, 1000);
        assert!(outcomes.iter().all(|(_, fault)| fault.is_none()));
    }

    #[test]
    fn latency_stays_in_range_and_a_seed_repeats_the_draws() {
        let spec = "latency=5-50ms,5xx=0.5,seed=3";
        let first = outcomes(spec, false, 500);
        assert_eq!(first, outcomes(spec, false, 500));
        let range = Duration::from_millis(5)..=Duration::from_millis(50);
        assert!(first.iter().all(|(delay, _)| range.contains(delay)));
        let statuses: Vec<_> = first.iter().filter_map(|(_, f)| *f).collect();
        assert!(statuses.contains(&Fault::ServerError(StatusCode::BAD_GATEWAY)));
        assert_ne!(first, outcomes("latency=5-50ms,5xx=0.5,seed=4", false, 500));
    }

    #[test]
    fn mutating_means_not_safe() {
        assert!(is_mutating(&Method::POST));
        assert!(is_mutating(&Method::PATCH));
        assert!(is_mutating(&Method::DELETE));
        assert!(!is_mutating(&Method::GET));
        assert!(!is_mutating(&Method::HEAD));
    }
}
