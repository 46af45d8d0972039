use reqwest::StatusCode;
use serde_json::{json, Value};

use super::{uuid, Harness};

#[tokio::test]
async fn servers_in_a_group_are_kept_apart_from_each_other() {
    let h = Harness::start().await;
    let (status, group) = h
        .post("/server-groups", json!({"name": "db", "zone": "rma1"}))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{group}");
    assert_eq!(
        (&group["type"], &group["servers"]),
        (&json!("anti-affinity"), &json!([]))
    );
    let mut servers = Vec::new();
    for name in ["db-1", "db-2"] {
        let body = json!({"name": name, "flavor": "flex-4-2", "image": "debian-12",
            "zone": "rma1", "server_groups": [uuid(&group)]});
        let (status, server) = h.post("/servers", body).await;
        assert_eq!(status, StatusCode::CREATED, "{server}");
        servers.push(server);
    }
    let first = format!("/servers/{}", uuid(&servers[0]));
    let (_, db1) = h.get(&first).await;
    let joined = json!([{"href": group["href"], "uuid": group["uuid"], "name": "db"}]);
    assert_eq!(db1["server_groups"], joined);
    assert_eq!(
        db1["anti_affinity_with"],
        json!([{"href": servers[1]["href"], "uuid": servers[1]["uuid"]}])
    );
    let (_, listed) = h.get(&format!("/server-groups/{}", uuid(&group))).await;
    let members: Vec<&Value> = listed["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| &s["uuid"])
        .collect();
    assert_eq!(members, [&servers[0]["uuid"], &servers[1]["uuid"]]);
    let elsewhere = json!({"name": "x", "flavor": "flex-4-2", "image": "debian-12",
        "zone": "lpg1", "server_groups": [uuid(&group)]});
    assert_eq!(
        h.post("/servers", elsewhere).await.0,
        StatusCode::BAD_REQUEST,
        "another zone"
    );
    assert_eq!(
        h.delete(&format!("/server-groups/{}", uuid(&group))).await,
        StatusCode::NO_CONTENT
    );
    let (_, db1) = h.get(&first).await;
    assert_eq!(
        (&db1["server_groups"], &db1["anti_affinity_with"]),
        (&json!([]), &json!([]))
    );
}
