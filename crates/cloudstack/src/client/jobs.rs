//! Async commands: the command answers a `jobid`, then `queryAsyncJobResult` is polled with a
//! growing pause until the job ends or the overall timeout passes.

use std::time::{Duration, Instant};

use serde_json::Value;

use super::envelope::{code_field, error_text, number};
use super::{CloudstackClient, Error, Params};

/// What a failed job without an errorcode is taken for: CloudStack's internal error.
const INTERNAL_ERROR: u16 = 530;

/// How async jobs are awaited: the first poll after `first_poll`, each pause twice the last up
/// to `max_poll`, and no longer than `timeout` in all.
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

impl CloudstackClient {
    /// An async command, polled with `queryAsyncJobResult` until it ends; returns `jobresult`
    /// of a successful job, and a failed job (jobstatus 2) as an error with its text.
    pub async fn run_job(&self, command: &str, params: &Params) -> Result<Value, Error> {
        let answer = self.call(command, params).await?;
        let jobid = text(answer.get("jobid")).ok_or_else(|| Error::Decode {
            command: command.to_string(),
            detail: format!("no `jobid` in the answer of an async command: {answer}"),
        })?;
        self.await_job(command, &jobid).await
    }

    /// Polls the job `jobid` that `command` started until it ends (also for a job whose
    /// answer an earlier run recorded).
    pub async fn await_job(&self, command: &str, jobid: &str) -> Result<Value, Error> {
        let policy = self.job_policy;
        let started = Instant::now();
        let mut pause = policy.first_poll;
        let query = vec![("jobid".to_string(), jobid.to_string())];
        loop {
            let remaining = policy.timeout.saturating_sub(started.elapsed());
            tokio::time::sleep(pause.min(remaining)).await;
            let status = self
                .call("queryAsyncJobResult", &query)
                .await
                .map_err(|source| Error::JobLost {
                    command: command.to_string(),
                    jobid: jobid.to_string(),
                    source: Box::new(source),
                })?;
            if let Some(outcome) = job_outcome(command, jobid, status) {
                return outcome;
            }
            if started.elapsed() >= policy.timeout {
                return Err(Error::JobTimeout {
                    command: command.to_string(),
                    jobid: jobid.to_string(),
                    waited: started.elapsed(),
                });
            }
            pause = (pause * 2).min(policy.max_poll);
        }
    }
}

/// None while the job is pending (jobstatus 0); else its result or its failure.
fn job_outcome(command: &str, jobid: &str, status: Value) -> Option<Result<Value, Error>> {
    let Value::Object(mut status) = status else {
        return Some(Err(undecodable(command, "the job status is not an object")));
    };
    match number(status.get("jobstatus")) {
        Some(0) => None,
        Some(1) => Some(Ok(status.remove("jobresult").unwrap_or(Value::Null))),
        Some(2) => {
            let result = match status.get("jobresult") {
                Some(Value::Object(result)) => result.clone(),
                _ => Default::default(),
            };
            Some(Err(Error::JobFailed {
                command: command.to_string(),
                jobid: jobid.to_string(),
                errorcode: code_field(&result, "errorcode")
                    .or_else(|| code_field(&status, "jobresultcode"))
                    .unwrap_or(INTERNAL_ERROR),
                cserrorcode: number(result.get("cserrorcode")).and_then(|n| u32::try_from(n).ok()),
                text: error_text(&result),
            }))
        }
        _ => Some(Err(undecodable(command, "no jobstatus 0, 1 or 2"))),
    }
}

fn undecodable(command: &str, detail: &str) -> Error {
    Error::Decode {
        command: command.to_string(),
        detail: detail.to_string(),
    }
}

/// An id, which is a string but might come as a number.
fn text(value: Option<&Value>) -> Option<String> {
    match value? {
        Value::String(text) if !text.is_empty() => Some(text.clone()),
        Value::Number(number) => Some(number.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::sync::Arc;

    use serde_json::json;

    use super::super::test_support::{fake_api, param, quick_client};
    use super::*;

    /// An API where `createKubernetesCluster` starts job `j-1`, which is pending for
    /// `pending_polls` polls and then ends with `end`.
    async fn api_with_job(pending_polls: u32, end: Value) -> super::super::test_support::FakeApi {
        let polls = Arc::new(AtomicU32::new(0));
        fake_api(move |request| match param(request, "command") {
            "createKubernetesCluster" => (
                200,
                json!({"createkubernetesclusterresponse": {"id": "c-1", "jobid": "j-1"}}),
            ),
            "queryAsyncJobResult" => {
                assert_eq!(param(request, "jobid"), "j-1");
                let mut status = if polls.fetch_add(1, Ordering::SeqCst) < pending_polls {
                    json!({"jobid": "j-1", "jobstatus": 0})
                } else {
                    end.clone()
                };
                status["jobid"] = json!("j-1");
                (200, json!({"queryasyncjobresultresponse": status}))
            }
            other => panic!("unexpected {other}"),
        })
        .await
    }

    #[tokio::test]
    async fn a_successful_job_returns_its_result() {
        let end = json!({"jobstatus": 1, "jobresult": {"kubernetescluster": {"id": "c-1"}}});
        let api = api_with_job(2, end).await;
        let client = quick_client(&api.url);
        let result = client
            .run_job("createKubernetesCluster", &Params::new())
            .await
            .unwrap();
        assert_eq!(result, json!({"kubernetescluster": {"id": "c-1"}}));
        assert_eq!(client.request_count(), 4, "the command and three polls");
    }

    #[tokio::test]
    async fn a_failed_job_is_an_error_with_its_code_and_text() {
        let end = json!({"jobstatus": 2, "jobresultcode": 530, "jobresult": {
            "errorcode": 530, "errortext": "Kubernetes cluster cannot be created with service offering ID: o-1"
        }});
        let api = api_with_job(0, end).await;
        let client = quick_client(&api.url);
        let error = client
            .run_job("createKubernetesCluster", &Params::new())
            .await
            .unwrap_err();
        assert_eq!(error.code(), Some(530));
        assert!(!error.is_uncertain());
        assert_eq!(
            error.to_string(),
            "CloudStack createKubernetesCluster: job j-1 failed: 530: \
             Kubernetes cluster cannot be created with service offering ID: o-1"
        );
    }

    #[tokio::test]
    async fn a_job_still_pending_at_the_timeout_is_uncertain() {
        let api = api_with_job(u32::MAX, json!({})).await;
        let client = quick_client(&api.url).with_job_policy(JobPolicy {
            first_poll: Duration::from_millis(10),
            max_poll: Duration::from_millis(20),
            timeout: Duration::from_millis(100),
        });
        let started = Instant::now();
        let error = client
            .run_job("createKubernetesCluster", &Params::new())
            .await
            .unwrap_err();
        assert!(matches!(error, Error::JobTimeout { .. }), "{error:?}");
        assert!(error.is_uncertain());
        let elapsed = started.elapsed();
        assert!(elapsed >= Duration::from_millis(100), "{elapsed:?}");
        // 10, 20, 20, 20, 20, 10 ms: about six polls, far fewer than with no pause.
        let polls = client.request_count() - 1;
        assert!((2..=8).contains(&polls), "{polls} polls");
    }

    #[test]
    fn outcome_reads_statuses_sent_as_strings() {
        assert!(job_outcome("c", "j", json!({"jobstatus": "0"})).is_none());
        let done = job_outcome("c", "j", json!({"jobstatus": "1", "jobresult": {"a": 1}}));
        assert_eq!(done.unwrap().unwrap(), json!({"a": 1}));
        let failed = job_outcome("c", "j", json!({"jobstatus": 2}))
            .unwrap()
            .unwrap_err();
        assert_eq!(failed.code(), Some(530));
        let odd = job_outcome("c", "j", json!({"jobstatus": 7}))
            .unwrap()
            .unwrap_err();
        assert!(matches!(odd, Error::Decode { .. }));
    }

    #[tokio::test]
    async fn an_answer_without_jobid_is_uncertain() {
        let api = fake_api(|_| (200, json!({"deployresponse": {"id": "x"}}))).await;
        let error = quick_client(&api.url)
            .run_job("deploy", &Params::new())
            .await
            .unwrap_err();
        assert!(
            error.is_uncertain() && error.to_string().contains("no `jobid`"),
            "{error}"
        );
    }
}
