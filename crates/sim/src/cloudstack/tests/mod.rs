//! The simulator over HTTP, as a client sees it: signed requests, envelopes, jobs.

mod cks;
mod health;
mod jobs;
mod lb;
mod protocol;

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

use super::signing::{java_url_encode, signature_of};
use super::{spawn, SimHandle, SimOptions, DEFAULT_API_KEY, DEFAULT_SECRET_KEY};

pub const JOB_TIME: Duration = Duration::from_millis(40);

pub struct TestSim {
    pub handle: SimHandle,
    pub world: PathBuf,
    _dir: tempfile::TempDir,
    client: reqwest::Client,
}

pub struct Answer {
    pub status: u16,
    pub body: Value,
}

impl Answer {
    /// The object under the response key.
    pub fn inner(&self) -> &Value {
        self.body
            .as_object()
            .and_then(|o| o.values().next())
            .expect("an envelope")
    }
}

impl TestSim {
    pub async fn start() -> TestSim {
        Self::with(SimOptions::default()).await
    }

    pub async fn with(options: SimOptions) -> TestSim {
        let dir = tempfile::tempdir().unwrap();
        let world = dir.path().join("world.json");
        // Tests that care about job timing say so; the others run on short jobs.
        let default_time = SimOptions::default().job_time;
        let options = SimOptions {
            job_time: if options.job_time == default_time {
                JOB_TIME
            } else {
                options.job_time
            },
            ..options
        };
        let handle = spawn(world.clone(), "127.0.0.1:0".parse().unwrap(), options)
            .await
            .unwrap();
        TestSim {
            handle,
            world,
            _dir: dir,
            client: reqwest::Client::new(),
        }
    }

    /// Stops the server (writing its world) and starts another on the same world file.
    pub async fn restart(self, options: SimOptions) -> TestSim {
        let TestSim {
            handle,
            world,
            _dir,
            client,
        } = self;
        handle.shutdown().await.unwrap();
        let handle = spawn(world.clone(), "127.0.0.1:0".parse().unwrap(), options)
            .await
            .unwrap();
        TestSim {
            handle,
            world,
            _dir,
            client,
        }
    }

    /// A signed call (as cs signs: signatureversion 3, expires in ten minutes).
    pub async fn call(&self, command: &str, params: &[(&str, &str)]) -> Answer {
        self.call_with_secret(command, params, DEFAULT_SECRET_KEY)
            .await
    }

    pub async fn call_with_secret(
        &self,
        command: &str,
        params: &[(&str, &str)],
        secret: &str,
    ) -> Answer {
        let expires = jiff::Timestamp::now() + jiff::SignedDuration::from_mins(10);
        let expires = expires.strftime("%Y-%m-%dT%H:%M:%S%z").to_string();
        let mut pairs: Vec<(String, String)> = vec![
            ("command".into(), command.into()),
            ("response".into(), "json".into()),
            ("apiKey".into(), DEFAULT_API_KEY.into()),
            ("signatureVersion".into(), "3".into()),
            ("expires".into(), expires),
        ];
        pairs.extend(params.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        let signature = signature_of(&pairs, secret);
        pairs.push(("signature".into(), signature));
        self.send(&pairs).await
    }

    /// Sends the pairs as they are, unsigned unless they carry a signature.
    pub async fn send(&self, pairs: &[(String, String)]) -> Answer {
        let query: Vec<String> = pairs
            .iter()
            .map(|(k, v)| format!("{}={}", java_url_encode(k), java_url_encode(v)))
            .collect();
        let url = format!("{}?{}", self.handle.base_url(), query.join("&"));
        let Ok(response) = self.client.get(url).send().await else {
            // A dropped connection (fault injection): no status, no body.
            return Answer {
                status: 0,
                body: Value::Null,
            };
        };
        let status = response.status().as_u16();
        let body = response.json().await.unwrap_or(Value::Null);
        Answer { status, body }
    }

    /// A call that must succeed; the object under the response key.
    pub async fn ok(&self, command: &str, params: &[(&str, &str)]) -> Value {
        let answer = self.call(command, params).await;
        assert_eq!(answer.status, 200, "{command}: {}", answer.body);
        answer.inner().clone()
    }

    /// Waits for the job to end; its queryAsyncJobResult answer.
    pub async fn wait(&self, jobid: &str) -> Value {
        for _ in 0..200 {
            let job = self.ok("queryAsyncJobResult", &[("jobid", jobid)]).await;
            if job["jobstatus"] != 0 {
                return job;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("job {jobid} never ended");
    }

    /// An async call that must start; the ended job.
    pub async fn run(&self, command: &str, params: &[(&str, &str)]) -> Value {
        let started = self.ok(command, params).await;
        let jobid = started["jobid"].as_str().expect("a jobid").to_owned();
        self.wait(&jobid).await
    }

    /// An async call whose job must succeed; the job's result.
    pub async fn done(&self, command: &str, params: &[(&str, &str)]) -> Value {
        let job = self.run(command, params).await;
        assert_eq!(job["jobstatus"], 1, "{command}: {job}");
        job["jobresult"].clone()
    }

    /// An async call whose job must fail; its errortext.
    pub async fn job_error(&self, command: &str, params: &[(&str, &str)]) -> String {
        let job = self.run(command, params).await;
        assert_eq!(job["jobstatus"], 2, "{command}: {job}");
        assert_eq!(job["jobresult"]["errorcode"], job["jobresultcode"]);
        job["jobresult"]["errortext"].as_str().unwrap().to_owned()
    }

    /// The items of a list call.
    pub async fn list(&self, command: &str, key: &str, params: &[(&str, &str)]) -> Vec<Value> {
        let body = self.ok(command, params).await;
        body[key].as_array().cloned().unwrap_or_default()
    }

    pub async fn id_of(&self, command: &str, key: &str, name: &str) -> String {
        let items = self.list(command, key, &[]).await;
        let item = items.iter().find(|i| i["name"] == name);
        let item = item.unwrap_or_else(|| panic!("no {key} named {name}"));
        item["id"].as_str().unwrap().to_owned()
    }

    pub async fn network(&self) -> String {
        self.id_of("listNetworks", "network", "k8s-net").await
    }

    pub async fn offering(&self, name: &str) -> String {
        self.id_of("listServiceOfferings", "serviceoffering", name)
            .await
    }

    pub async fn version(&self, semver: &str) -> String {
        let items = self
            .list(
                "listKubernetesSupportedVersions",
                "kubernetessupportedversion",
                &[],
            )
            .await;
        let item = items
            .iter()
            .find(|i| i["semanticversion"] == semver)
            .unwrap();
        item["id"].as_str().unwrap().to_owned()
    }

    /// A newly associated public IP of k8s-net.
    pub async fn new_ip(&self) -> Value {
        let network = self.network().await;
        self.done("associateIpAddress", &[("networkid", &network)])
            .await["ipaddress"]
            .clone()
    }
}

pub fn id(value: &Value) -> String {
    value["id"].as_str().expect("an id").to_owned()
}
