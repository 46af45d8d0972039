use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use super::*;

#[tokio::test]
async fn a_ccm_block_carries_every_field_and_its_four_tags() {
    let h = Harness::start().await;
    h.tag_names(&USAGE_TAGS).await;
    let block = h.ccm_block("PHX", "web").await;
    assert_eq!(block["cidr"], "198.19.0.0/29");
    assert_eq!(block["cidrBlockSize"], "/29");
    assert_eq!(block["status"], "unassigned");
    assert_eq!(block["id"].as_str().unwrap().len(), 24);
    for field in [
        "location",
        "ipVersion",
        "isSystemManaged",
        "isBringYourOwn",
        "createdOn",
    ] {
        assert!(!block[field].is_null(), "{field}");
    }
    for field in ["assignedResourceId", "assignedResourceType", "description"] {
        assert!(block.as_object().unwrap().contains_key(field), "{field}");
    }
    let tags = block["tags"].as_array().unwrap();
    assert_eq!(tags.len(), 4);
    assert_eq!(tags[0]["name"], "usage");
    assert_eq!(tags[0]["value"], "cloud-provider-phoenixnap-auto");
    assert_eq!(tags[0]["isBillingTag"], false);
    assert_eq!(tags[0]["createdBy"], "USER");
    assert!(tags[0]["id"].is_string());
    let second = h.ccm_block("PHX", "api").await;
    assert_eq!(second["cidr"], "198.19.0.8/29");
}

#[tokio::test]
async fn tag_filters_combine_with_and() {
    let h = Harness::start().await;
    h.tag_names(&USAGE_TAGS).await;
    let web = h.ccm_block("PHX", "web").await;
    h.ccm_block("PHX", "api").await;
    let both = h
        .get("/ips/v1/ip-blocks?tag=cluster.uid-1&tag=usage.cloud-provider-phoenixnap-auto")
        .await;
    assert_eq!(both.as_array().unwrap().len(), 2);
    let one = h
        .get("/ips/v1/ip-blocks?tag=cluster.uid-1&tag=serviceName.web")
        .await;
    assert_eq!(one.as_array().unwrap().len(), 1);
    assert_eq!(one[0]["id"], web["id"]);
    let none = h
        .get("/ips/v1/ip-blocks?tag=cluster.uid-2&tag=serviceName.web")
        .await;
    assert!(none.as_array().unwrap().is_empty());
    let any_value = h.get("/ips/v1/ip-blocks?tag=serviceName").await;
    assert_eq!(any_value.as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn invalid_bodies_are_400_with_validation_errors() {
    let h = Harness::start().await;
    h.tag_names(&["usage"]).await;
    let body = json!({
        "location": "MARS",
        "cidrBlockSize": "/27",
        "tags": [{"name": "usage", "value": "default.web"}],
    });
    let (status, answer) = h.call(Method::POST, "/ips/v1/ip-blocks", Some(body)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let errors = answer["validationErrors"].as_array().unwrap();
    assert_eq!(errors.len(), 3, "{answer}");
    assert!(answer["message"].is_string());

    let (status, answer) = h
        .call(
            Method::POST,
            "/ips/v1/ip-blocks",
            Some(json!({"location": "PHX"})),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(answer["validationErrors"][0]
        .as_str()
        .unwrap()
        .contains("cidrBlockSize"));

    let unknown = json!({"location": "PHX", "cidrBlockSize": "/29", "tags": [{"name": "cluster", "value": "x"}]});
    let (status, answer) = h
        .call(Method::POST, "/ips/v1/ip-blocks", Some(unknown))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(answer["message"].as_str().unwrap().contains("cluster"));
    assert!(h
        .get("/ips/v1/ip-blocks")
        .await
        .as_array()
        .unwrap()
        .is_empty());
}

#[tokio::test]
async fn an_exhausted_pool_is_406_and_a_location_without_space_too() {
    let world = r#"{"locations": [{"code": "PHX", "ip_pools": ["198.19.0.0/28"]}]}"#;
    let h = Harness::start_with(Some(world), Faults::default()).await;
    let body = json!({"location": "PHX", "cidrBlockSize": "/29"});
    for _ in 0..2 {
        let (status, _) = h
            .call(Method::POST, "/ips/v1/ip-blocks", Some(body.clone()))
            .await;
        assert_eq!(status, StatusCode::CREATED);
    }
    let (status, answer) = h.call(Method::POST, "/ips/v1/ip-blocks", Some(body)).await;
    assert_eq!(status, StatusCode::NOT_ACCEPTABLE);
    assert_eq!(
        answer["message"],
        "No IP Blocks available of provided cidr block size"
    );
    let elsewhere = json!({"location": "ASH", "cidrBlockSize": "/31"});
    let (status, _) = h
        .call(Method::POST, "/ips/v1/ip-blocks", Some(elsewhere))
        .await;
    assert_eq!(status, StatusCode::NOT_ACCEPTABLE);
}

#[tokio::test]
async fn put_tags_replaces_all_and_patch_changes_only_the_description() {
    let h = Harness::start().await;
    h.tag_names(&USAGE_TAGS).await;
    let block = h.ccm_block("PHX", "web").await;
    let id = block["id"].as_str().unwrap();
    let path = format!("/ips/v1/ip-blocks/{id}/tags");
    let release = json!([
        {"name": "usage", "value": "cloud-provider-phoenixnap-auto"},
        {"name": "cluster", "value": "uid-1"},
        {"name": "delete", "value": "true"},
    ]);
    let (status, answer) = h.call(Method::PUT, &path, Some(release)).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let names: Vec<_> = answer["tags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].clone())
        .collect();
    assert_eq!(names, ["usage", "cluster", "delete"]);
    let (status, _) = h
        .call(
            Method::PUT,
            &path,
            Some(json!([{"name": "nope", "value": "x"}])),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(h.block(id).await["tags"].as_array().unwrap().len(), 3);

    let (status, answer) = h
        .call(
            Method::PATCH,
            &format!("/ips/v1/ip-blocks/{id}"),
            Some(json!({"description": "lb"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        (
            answer["description"].as_str(),
            answer["tags"].as_array().unwrap().len()
        ),
        (Some("lb"), 3)
    );
}

#[tokio::test]
async fn an_unassigned_block_is_deleted_and_then_404() {
    let h = Harness::start().await;
    let (_, block) = h
        .call(
            Method::POST,
            "/ips/v1/ip-blocks",
            Some(json!({"location": "ASH", "cidrBlockSize": "/30"})),
        )
        .await;
    let id = block["id"].as_str().unwrap();
    assert_eq!(block["cidr"], "198.19.16.0/30");
    let (status, answer) = h
        .call(Method::DELETE, &format!("/ips/v1/ip-blocks/{id}"), None)
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        answer,
        json!({"result": "IP Block has been deleted.", "ipBlockId": id})
    );
    let (status, answer) = h
        .call(Method::GET, &format!("/ips/v1/ip-blocks/{id}"), None)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(answer["message"].is_string());
}

#[tokio::test]
async fn a_failing_tags_put_changes_nothing_and_is_counted() {
    let faults: Faults = "tags-put-fail=1".parse().unwrap();
    let h = Harness::start_with(None, faults).await;
    h.tag_names(&USAGE_TAGS).await;
    let block = h.ccm_block("PHX", "web").await;
    let id = block["id"].as_str().unwrap();
    let body = json!([{"name": "delete", "value": "true"}]);
    let (status, _) = h
        .call(
            Method::PUT,
            &format!("/ips/v1/ip-blocks/{id}/tags"),
            Some(body),
        )
        .await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
    assert_eq!(h.block(id).await["tags"], block["tags"]);
    assert_eq!(h.sim.requests().faults.tags_put_fail, 1);
}

#[tokio::test]
async fn a_change_whose_answer_is_lost_is_made_all_the_same() {
    let faults: Faults = "after-commit=1,seed=1".parse().unwrap();
    let h = Harness::start_with(None, faults).await;
    let body = json!({"location": "PHX", "cidrBlockSize": "/29"});
    let result = h
        .client
        .post(h.url("/ips/v1/ip-blocks"))
        .bearer_auth(&h.token)
        .json(&body)
        .send()
        .await;
    // Either a 500 or a dropped connection: the client cannot know the block exists.
    if let Ok(response) = result {
        assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
    }
    let blocks = h.get("/ips/v1/ip-blocks").await;
    assert_eq!(
        blocks.as_array().unwrap().len(),
        1,
        "reads are never faulted after commit"
    );
    let counts = h.sim.requests();
    assert_eq!(counts.faults.transport.after_commit, 1);
    assert_eq!(counts.by_route["POST /ips/v1/ip-blocks"], 1);
}

#[tokio::test]
async fn a_malformed_body_is_400_with_the_error_format() {
    let h = Harness::start().await;
    let response = h
        .client
        .post(h.url("/ips/v1/ip-blocks"))
        .bearer_auth(&h.token)
        .header("Content-Type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let body: Value = response.json().await.unwrap();
    assert!(body["message"].is_string());
    assert_eq!(body["validationErrors"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn the_request_counters_are_served_and_reset_under_sim() {
    let h = Harness::start().await;
    h.get("/ips/v1/ip-blocks").await;
    let counts: Value = h
        .client
        .get(h.url("/_sim/requests"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(counts["by_route"]["GET /ips/v1/ip-blocks"], 1);
    assert_eq!(counts["total"], 2, "the token request and the list");
    let reset = h
        .client
        .post(h.url("/_sim/requests/reset"))
        .send()
        .await
        .unwrap();
    assert_eq!(reset.status(), StatusCode::NO_CONTENT);
    assert_eq!(h.sim.request_count(), 0);
}
