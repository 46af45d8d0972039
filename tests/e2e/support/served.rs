//! A project planned against a cloudscale simulator served over HTTP (`SimServer`), which a
//! test changes behind skyplan's back through the API, as an operator would.

use serde_json::Value;

use super::{http, run, Output, Project, SimServer, SIM_TOKEN};

pub struct ServedCloud {
    pub project: Project,
    pub sim: SimServer,
}

/// Two load balancers: web on port 80, api on port 443.
const TWO_LOAD_BALANCERS: &str = "[load-balancer.web]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\nmembers = [\"10.0.0.11\"]\n\n\
     [[load-balancer.web.ports]]\nname = \"http\"\nport = 80\nnode-port = 30080\n\n\
     [load-balancer.api]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\nmembers = [\"10.0.0.12\"]\n\n\
     [[load-balancer.api.ports]]\nname = \"grpc\"\nport = 443\nnode-port = 30443\n";

impl ServedCloud {
    /// A served simulator that settles at once, and a project with no config yet.
    pub fn start() -> ServedCloud {
        let project = Project::new();
        let sim = SimServer::start_settling(&project.path().join("world.json"), 0);
        ServedCloud { project, sim }
    }

    /// web and api configured and applied.
    pub fn two_applied() -> ServedCloud {
        let cloud = ServedCloud::start();
        cloud.configure(TWO_LOAD_BALANCERS);
        cloud.apply_ok();
        cloud
    }

    /// The config: the served cloudscale provider, then `resources`.
    pub fn configure(&self, resources: &str) {
        self.project.config(&format!(
            "[provider.cloudscale]\nendpoint = \"{}\"\n\n{resources}",
            self.sim.base_url
        ));
    }

    pub fn skyplan(&self, args: &[&str]) -> Output {
        run(self
            .project
            .command(args)
            .env("CLOUDSCALE_API_TOKEN", SIM_TOKEN))
    }

    pub fn apply_ok(&self) {
        let out = self.skyplan(&["apply", "--auto-approve"]);
        assert_eq!(out.code, 0, "{out:?}");
    }

    /// A request to the simulated API, as an operator would send one to the real one.
    pub fn call(&self, method: &str, path: &str, body: Option<&str>) -> String {
        let url = format!("{}{path}", self.sim.base_url);
        let request = http::request(method, &url).bearer(SIM_TOKEN);
        let request = match body {
            Some(body) => request.body("application/json", body),
            None => request.header("Content-Type", "application/json"),
        };
        request
            .ok()
            .unwrap_or_else(|e| panic!("{method} {path}: {e}"))
    }

    /// The UUID of the object named `name` in the collection at `path`.
    pub fn uuid_of(&self, path: &str, name: &str) -> String {
        let list: Vec<Value> = serde_json::from_str(&self.call("GET", path, None)).unwrap();
        list.iter().find(|o| o["name"] == name).unwrap()["uuid"]
            .as_str()
            .unwrap()
            .to_string()
    }
}
