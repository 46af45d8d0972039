//! The few Kubernetes API calls the cluster's kubelets and the CloudStack CCM make on their
//! Nodes, over plain HTTP: the simulated cloud is a client of the simulated cluster, as the
//! real controllers are of the real one.

use std::time::Duration;

use reqwest::Method;
use serde_json::Value;

const CALL_TIMEOUT: Duration = Duration::from_secs(5);
const MERGE_PATCH: &str = "application/merge-patch+json";

pub struct Kube {
    root: String,
    http: reqwest::Client,
}

impl Kube {
    pub fn new(root: &str) -> Kube {
        Kube {
            root: root.trim_end_matches('/').to_owned(),
            http: reqwest::Client::builder()
                .timeout(CALL_TIMEOUT)
                .build()
                .expect("a client without custom TLS always builds"),
        }
    }

    pub async fn nodes(&self) -> Result<Vec<Value>, String> {
        let list = self.send(Method::GET, "/api/v1/nodes", None, None).await?;
        Ok(list["items"].as_array().cloned().unwrap_or_default())
    }

    pub async fn create_node(&self, node: &Value) -> Result<(), String> {
        self.send(Method::POST, "/api/v1/nodes", None, Some(node))
            .await
            .map(drop)
    }

    /// A merge patch of the node (`status`: of its status subresource).
    pub async fn patch_node(&self, name: &str, status: bool, body: &Value) -> Result<(), String> {
        let path = match status {
            true => format!("/api/v1/nodes/{name}/status"),
            false => format!("/api/v1/nodes/{name}"),
        };
        self.send(Method::PATCH, &path, Some(MERGE_PATCH), Some(body))
            .await
            .map(drop)
    }

    pub async fn delete_node(&self, name: &str) -> Result<(), String> {
        let path = format!("/api/v1/nodes/{name}");
        self.send(Method::DELETE, &path, None, None).await.map(drop)
    }

    async fn send(
        &self,
        method: Method,
        path: &str,
        content_type: Option<&str>,
        body: Option<&Value>,
    ) -> Result<Value, String> {
        let mut request = self.http.request(method, format!("{}{path}", self.root));
        if let Some(body) = body {
            request = request
                .header("content-type", content_type.unwrap_or("application/json"))
                .body(body.to_string());
        }
        let response = request.send().await.map_err(|e| e.to_string())?;
        let status = response.status();
        let text = response.text().await.map_err(|e| e.to_string())?;
        if !status.is_success() {
            return Err(format!("{path}: HTTP {status}: {text}"));
        }
        match text.trim().is_empty() {
            true => Ok(Value::Null),
            false => serde_json::from_str(&text).map_err(|e| e.to_string()),
        }
    }
}
