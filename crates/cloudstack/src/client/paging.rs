//! List commands, page by page: `page` and `pagesize` (the server refuses one without the
//! other) on every call, until `count` items are read. Without them the server silently stops
//! at `default.page.size` items while `count` is the total.

use serde_json::Value;

use super::envelope::number;
use super::{CloudstackClient, Error, Params, PAGE_SIZE};

impl CloudstackClient {
    /// Every item of a list command, page by page (`page`, `pagesize` = [`PAGE_SIZE`]) until
    /// `count` items are read: ceil(N/500) calls, one for an empty list. `listall=true` and
    /// the credentials' project id are added unless the caller set them.
    ///
    /// Objects created or deleted between two pages may shift the pages, so one may be missed
    /// or seen twice; refresh reads each collection once and accepts that.
    pub async fn list(
        &self,
        command: &str,
        params: &Params,
        item_key: &str,
    ) -> Result<Vec<Value>, Error> {
        let base = list_params(params, self.credentials().project_id.as_deref());
        let mut page_size = PAGE_SIZE;
        let mut items = Vec::new();
        let mut page = 1;
        loop {
            let mut paged = base.clone();
            paged.push(("page".to_string(), page.to_string()));
            paged.push(("pagesize".to_string(), page_size.to_string()));
            let answer = match self.call(command, &paged).await {
                Ok(answer) => answer,
                Err(error) => match server_page_limit(&error) {
                    // An operator lowered `default.page.size`: the first page says so.
                    Some(limit) if page == 1 && limit < page_size => {
                        tracing::debug!(command, limit, "CloudStack: smaller page size");
                        page_size = limit;
                        continue;
                    }
                    _ => return Err(error),
                },
            };
            let (count, page_items) = page_contents(command, item_key, answer)?;
            let got = page_items.len();
            items.extend(page_items);
            let complete = match count {
                Some(count) => items.len() >= count,
                None => got < page_size,
            };
            if got == 0 || complete {
                break;
            }
            page += 1;
        }
        Ok(items)
    }
}

/// The caller's parameters without paging, plus `listall=true` (everything the keys may see,
/// not only the user's own) and the project, unless the caller chose otherwise.
fn list_params(params: &Params, project_id: Option<&str>) -> Params {
    let has = |name: &str| params.iter().any(|(n, _)| n.eq_ignore_ascii_case(name));
    let mut all: Params = params
        .iter()
        .filter(|(name, _)| {
            !name.eq_ignore_ascii_case("page") && !name.eq_ignore_ascii_case("pagesize")
        })
        .cloned()
        .collect();
    if !has("listall") {
        all.push(("listall".to_string(), "true".to_string()));
    }
    if let (Some(project), false) = (project_id, has("projectid")) {
        all.push(("projectid".to_string(), project.to_string()));
    }
    all
}

/// The server's maximum page size from its refusal of a larger one (431 "Page size can't
/// exceed max allowed page size value: 100").
fn server_page_limit(error: &Error) -> Option<usize> {
    let Error::Api {
        errorcode: 431,
        text,
        ..
    } = error
    else {
        return None;
    };
    let (_, limit) = text.split_once("max allowed page size value:")?;
    limit.trim().parse().ok().filter(|limit| *limit > 0)
}

/// `count` and the items of one page. An empty list is `{}`: no count, no items.
fn page_contents(
    command: &str,
    item_key: &str,
    mut answer: Value,
) -> Result<(Option<usize>, Vec<Value>), Error> {
    let count = number(answer.get("count")).map(|n| n as usize);
    let undecodable = |detail: String| Error::Decode {
        command: command.to_string(),
        detail,
    };
    match answer.get_mut(item_key).map(Value::take) {
        Some(Value::Array(items)) => Ok((count, items)),
        None if count.unwrap_or(0) == 0 => Ok((count, Vec::new())),
        None => Err(undecodable(format!(
            "count is {} but there is no `{item_key}` list",
            count.unwrap_or(0)
        ))),
        Some(other) => Err(undecodable(format!("`{item_key}` is not a list: {other}"))),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::test_support::{fake_api, param, quick_client, FakeApi};
    use super::*;

    /// An API whose `listThings` has `total` things and pages them like the server.
    async fn things(total: usize) -> FakeApi {
        things_with_max_page(total, PAGE_SIZE).await
    }

    /// The same with the server's `default.page.size` set to `max_page`.
    async fn things_with_max_page(total: usize, max_page: usize) -> FakeApi {
        fake_api(move |request| {
            assert_eq!(param(request, "command"), "listThings");
            let page: usize = param(request, "page").parse().unwrap();
            let size: usize = param(request, "pagesize").parse().unwrap();
            if size > max_page {
                let text =
                    format!("Page size can't exceed max allowed page size value: {max_page}");
                let error = json!({"errorcode": 431, "cserrorcode": 4350, "errortext": text});
                return (431, json!({"listthingsresponse": error}));
            }
            let first = (page - 1) * size;
            let items: Vec<Value> = (first..total.min(first + size))
                .map(|i| json!({"id": format!("t-{i}")}))
                .collect();
            let body = if total == 0 {
                json!({})
            } else {
                json!({"count": total, "thing": items})
            };
            (200, json!({"listthingsresponse": body}))
        })
        .await
    }

    async fn list_all(total: usize) -> (Vec<Value>, u64, FakeApi) {
        let api = things(total).await;
        let client = quick_client(&api.url);
        let items = client
            .list("listThings", &Params::new(), "thing")
            .await
            .unwrap();
        (items, client.request_count(), api)
    }

    #[tokio::test]
    async fn n_objects_cost_ceil_n_over_500_calls() {
        for (total, calls) in [(1, 1), (500, 1), (501, 2), (1234, 3)] {
            let (items, requests, _) = list_all(total).await;
            assert_eq!(items.len(), total);
            assert_eq!(items[total - 1]["id"], format!("t-{}", total - 1));
            assert_eq!(requests, calls, "{total} objects");
        }
    }

    #[tokio::test]
    async fn a_lower_server_page_size_is_adopted() {
        let api = things_with_max_page(250, 100).await;
        let client = quick_client(&api.url);
        let items = client
            .list("listThings", &Params::new(), "thing")
            .await
            .unwrap();
        assert_eq!(items.len(), 250);
        let sizes: Vec<String> = api
            .requests()
            .iter()
            .map(|request| format!("{}/{}", param(request, "page"), param(request, "pagesize")))
            .collect();
        assert_eq!(sizes, ["1/500", "1/100", "2/100", "3/100"]);
    }

    #[tokio::test]
    async fn an_empty_list_is_one_call_and_no_items() {
        let (items, requests, _) = list_all(0).await;
        assert!(items.is_empty());
        assert_eq!(requests, 1);
    }

    #[tokio::test]
    async fn every_call_pages_lists_all_and_names_the_project() {
        let api = things(501).await;
        let mut credentials = quick_client(&api.url).credentials().clone();
        credentials.project_id = Some("p-1".into());
        let client = super::super::CloudstackClient::new(credentials).unwrap();
        let params = vec![("name".to_string(), "x".to_string())];
        client.list("listThings", &params, "thing").await.unwrap();
        let requests = api.requests();
        assert_eq!(requests.len(), 2);
        for (index, request) in requests.iter().enumerate() {
            assert_eq!(param(request, "page"), (index + 1).to_string());
            assert_eq!(param(request, "pagesize"), "500");
            assert_eq!(param(request, "listall"), "true");
            assert_eq!(param(request, "projectid"), "p-1");
            assert_eq!(param(request, "name"), "x");
        }
    }

    #[test]
    fn callers_choices_win_over_the_defaults() {
        let params = vec![
            ("listall".to_string(), "false".to_string()),
            ("projectid".to_string(), "other".to_string()),
            ("page".to_string(), "9".to_string()),
        ];
        assert_eq!(
            list_params(&params, Some("p-1")),
            vec![
                ("listall".to_string(), "false".to_string()),
                ("projectid".to_string(), "other".to_string()),
            ]
        );
        assert_eq!(
            list_params(&Params::new(), None),
            vec![("listall".to_string(), "true".to_string())]
        );
    }

    #[test]
    fn a_page_whose_items_are_missing_is_an_error() {
        let error =
            page_contents("listThings", "thing", json!({"count": 3, "other": []})).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("count is 3 but there is no `thing` list"),
            "{error}"
        );
        let (count, items) = page_contents(
            "listThings",
            "thing",
            json!({"count": "2", "thing": [1, 2]}),
        )
        .unwrap();
        assert_eq!((count, items.len()), (Some(2), 2));
    }
}
