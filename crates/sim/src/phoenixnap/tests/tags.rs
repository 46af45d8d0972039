use reqwest::{Method, StatusCode};
use serde_json::json;

use super::*;

#[tokio::test]
async fn tag_names_are_unique_and_checked() {
    let h = Harness::start().await;
    h.tag_names(&["usage"]).await;
    let body = json!({"name": "usage", "isBillingTag": false});
    let (status, _) = h
        .call(Method::POST, "/tag-manager/v1/tags", Some(body))
        .await;
    assert_eq!(status, StatusCode::CONFLICT);
    let bad = json!({"name": "service.name", "isBillingTag": false});
    let (status, answer) = h
        .call(Method::POST, "/tag-manager/v1/tags", Some(bad))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(answer["validationErrors"].as_array().unwrap().len(), 1);
    let (status, _) = h
        .call(
            Method::POST,
            "/tag-manager/v1/tags",
            Some(json!({"name": "x"})),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "isBillingTag is required");
    let case = json!({"name": "Usage", "isBillingTag": false});
    let (status, _) = h
        .call(Method::POST, "/tag-manager/v1/tags", Some(case))
        .await;
    assert_eq!(status, StatusCode::CREATED, "names are case-sensitive");
}

#[tokio::test]
async fn values_and_assignments_are_derived_and_deleting_a_tag_unassigns_it() {
    let h = Harness::start().await;
    h.tag_names(&USAGE_TAGS).await;
    let web = h.ccm_block("PHX", "web").await;
    h.ccm_block("PHX", "api").await;
    let tags = h.get("/tag-manager/v1/tags?name=serviceName").await;
    assert_eq!(tags.as_array().unwrap().len(), 1);
    let tag = &tags[0];
    assert_eq!(tag["values"], json!(["api", "web"]));
    let first = &tag["resourceAssignments"][0];
    assert_eq!(
        first["resourceName"],
        format!("/ips/ip-blocks/{}", web["id"].as_str().unwrap())
    );
    assert_eq!(first["value"], "web");

    let id = tag["id"].as_str().unwrap();
    let path = format!("/tag-manager/v1/tags/{id}");
    let renamed = json!({"name": "svc", "isBillingTag": false});
    let (status, _) = h.call(Method::PATCH, &path, Some(renamed)).await;
    assert_eq!(status, StatusCode::OK);
    let names: Vec<_> = h.block(web["id"].as_str().unwrap()).await["tags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    assert!(names.contains(&"svc".to_owned()));
    let (status, answer) = h.call(Method::DELETE, &path, None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(answer["tagId"], id);
    assert_eq!(
        h.block(web["id"].as_str().unwrap()).await["tags"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
    let (status, _) = h.call(Method::GET, &path, None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}
