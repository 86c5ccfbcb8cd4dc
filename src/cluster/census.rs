//! What `size --kubeconfig` reads of a cluster: how many objects of each resource it
//! holds, and a sample of them spread over the whole collection.
//!
//! Read-only by construction: everything here goes through [`Reader`], whose one method
//! is a GET (discovery, and LISTs in pages), so nothing can write; a test checks that the
//! server saw nothing else. A resource the server refuses (403, 404) is named and the
//! others go on.

use anyhow::{Context, bail};
use serde_json::Value;

use super::{Cluster, METADATA_LIST};

/// The resources `size --kubeconfig` counts when none are named: the kinds controllers
/// most often cache.
pub const DEFAULT_RESOURCES: [&str; 8] = [
    "pods",
    "nodes",
    "configmaps",
    "secrets",
    "services",
    "endpointslices.discovery.k8s.io",
    "deployments.apps",
    "replicasets.apps",
];

/// Objects a LIST page asks for: kubectl's and client-go's reflector's page size.
const PAGE: u32 = 500;

/// One resource of the cluster: what it is, how many objects it holds, and a sample.
#[derive(Debug, Clone)]
pub struct Counted {
    /// `apiVersion` of its objects (`v1`, `apps/v1`).
    pub api_version: String,
    /// Their kind.
    pub kind: String,
    /// The plural name it is served under.
    pub resource: String,
    /// Whether its objects live in namespaces.
    pub namespaced: bool,
    /// How many objects it holds.
    pub count: u64,
    /// Objects spread over the collection ([`Spread`]), with their `apiVersion` and
    /// `kind` (a LIST's items have neither).
    pub sample: Vec<Value>,
}

/// What the cluster holds of the resources asked for, and the ones it refused.
#[derive(Debug, Default)]
pub struct Census {
    /// Resources read, in the order asked for (those with no object included).
    pub counted: Vec<Counted>,
    /// Resources the server would not list or does not serve, each with why.
    pub refused: Vec<String>,
}

/// Picks about `want` objects spread evenly over a collection of `count` (every
/// `count / want`-th in the server's order, namespace then name, so each part of the
/// collection and the sizes found there are represented), then thins them, evenly
/// again, to at most `max_bytes` of JSON.
#[derive(Debug)]
pub struct Spread {
    stride: u64,
    seen: u64,
    max_bytes: usize,
    picked: Vec<(usize, Value)>,
}

impl Spread {
    /// A sample of about `want` of `count` objects (all of them when there are fewer).
    pub fn new(count: u64, want: u64, max_bytes: usize) -> Spread {
        Spread {
            stride: count.div_ceil(want.max(1)).max(1),
            seen: 0,
            max_bytes,
            picked: Vec::new(),
        }
    }

    /// Sees the next object of the collection; keeps it if it is its stride's middle one.
    pub fn offer(&mut self, object: Value) {
        if self.seen % self.stride == self.stride / 2 {
            let size = object.to_string().len();
            self.picked.push((size, object));
        }
        self.seen += 1;
    }

    /// How many objects were offered.
    pub fn seen(&self) -> u64 {
        self.seen
    }

    /// The sample: every other object dropped until it fits in the byte limit.
    pub fn finish(self) -> Vec<Value> {
        let mut picked = self.picked;
        while picked.len() > 1 && picked.iter().map(|(s, _)| s).sum::<usize>() > self.max_bytes {
            picked = picked.into_iter().step_by(2).collect();
        }
        picked.into_iter().map(|(_, o)| o).collect()
    }
}

/// The one way this module reaches the server: GET.
struct Reader<'a>(&'a Cluster);

impl Reader<'_> {
    /// GET `path`: its status and its body as JSON (`null` when it is not).
    async fn get(&self, path: &str, accept: &str) -> anyhow::Result<(u16, Value)> {
        let (status, body) = self
            .0
            .send(http::Method::GET, path, None, accept)
            .await
            .with_context(|| format!("GET {path}"))?;
        Ok((status, serde_json::from_slice(&body).unwrap_or(Value::Null)))
    }
}

/// Where a resource is served, as discovery says.
struct Served {
    api_version: String,
    root: String,
    kind: String,
    resource: String,
    namespaced: bool,
}

/// Counts `resources` (`pods`, `deployments.apps`) on `cluster` and samples about
/// `want` objects of each, at most `max_bytes` of JSON a resource.
pub async fn census(
    cluster: &Cluster,
    resources: &[String],
    want: u64,
    max_bytes: usize,
) -> anyhow::Result<Census> {
    let reader = Reader(cluster);
    let mut census = Census::default();
    for name in resources {
        let served = match served(&reader, name).await? {
            Ok(served) => served,
            Err(why) => {
                census.refused.push(format!("{name}: {why}"));
                continue;
            }
        };
        let path = format!("{}/{}", served.root, served.resource);
        let count = match count(&reader, &path).await? {
            Ok(count) => count,
            Err(why) => {
                census.refused.push(format!("{name}: {why}"));
                continue;
            }
        };
        let mut spread = Spread::new(count, want, max_bytes);
        let read = pages(&reader, &path, "application/json", |mut item| {
            item["apiVersion"] = Value::from(served.api_version.as_str());
            item["kind"] = Value::from(served.kind.as_str());
            spread.offer(item);
        })
        .await?;
        if let Err(why) = read {
            census.refused.push(format!("{name}: {why}"));
            continue;
        }
        census.counted.push(Counted {
            api_version: served.api_version,
            kind: served.kind,
            resource: served.resource,
            namespaced: served.namespaced,
            // Objects made between the count and the sample's pages are in the sample's.
            count: count.max(spread.seen()),
            sample: spread.finish(),
        });
    }
    Ok(census)
}

/// Where `name` (`pods`, `deployments.apps`, `widgets.example.com`) is served: the core
/// group's, or its group's preferred version's; `Err` with why when it is not.
async fn served(reader: &Reader<'_>, name: &str) -> anyhow::Result<Result<Served, String>> {
    let (plural, group) = name.split_once('.').unwrap_or((name, ""));
    let (root, api_version) = if group.is_empty() {
        ("/api/v1".to_owned(), "v1".to_owned())
    } else {
        let (status, discovery) = reader
            .get(&format!("/apis/{group}"), "application/json")
            .await?;
        let Some(version) = discovery["preferredVersion"]["groupVersion"].as_str() else {
            return Ok(Err(format!(
                "the server serves no group {group} (GET /apis/{group}: {status})"
            )));
        };
        (format!("/apis/{version}"), version.to_owned())
    };
    let (status, discovery) = reader.get(&root, "application/json").await?;
    if status != 200 {
        return Ok(Err(format!("GET {root}: {status}")));
    }
    let found = discovery["resources"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| r["name"] == plural);
    let Some(r) = found else {
        return Ok(Err(format!(
            "{root} serves no `{plural}`{}",
            if group.is_empty() {
                " (name another group's resource with its group: deployments.apps)"
            } else {
                ""
            }
        )));
    };
    let listable = r["verbs"]
        .as_array()
        .is_some_and(|verbs| verbs.iter().any(|v| v == "list"));
    if !listable {
        return Ok(Err(format!("{root} does not list {plural}")));
    }
    Ok(Ok(Served {
        api_version,
        root,
        kind: r["kind"].as_str().unwrap_or_default().to_owned(),
        resource: plural.to_owned(),
        namespaced: r["namespaced"] == true,
    }))
}

/// How many objects `path` lists: the first page's items and `remainingItemCount`, or a
/// metadata-only pass over the pages where the server does not give it.
async fn count(reader: &Reader<'_>, path: &str) -> anyhow::Result<Result<u64, String>> {
    let (status, page) = reader
        .get(&format!("{path}?limit={PAGE}"), METADATA_LIST)
        .await?;
    if status != 200 {
        return Ok(Err(refusal(path, status, &page)));
    }
    let items = page["items"].as_array().map_or(0, Vec::len) as u64;
    if let Some(remaining) = page["metadata"]["remainingItemCount"].as_u64() {
        return Ok(Ok(items + remaining));
    }
    if page["metadata"]["continue"]
        .as_str()
        .is_none_or(str::is_empty)
    {
        return Ok(Ok(items));
    }
    let mut count = 0;
    let read = pages(reader, path, METADATA_LIST, |_| count += 1).await?;
    Ok(read.map(|()| count))
}

/// Every object `path` lists, page by page, given to `each`; `Err` with why when the
/// server refuses a page.
async fn pages(
    reader: &Reader<'_>,
    path: &str,
    accept: &str,
    mut each: impl FnMut(Value),
) -> anyhow::Result<Result<(), String>> {
    let mut token = String::new();
    loop {
        let mut url = format!("{path}?limit={PAGE}");
        if !token.is_empty() {
            url.push_str("&continue=");
            url.push_str(&form_urlencoded::byte_serialize(token.as_bytes()).collect::<String>());
        }
        let (status, mut page) = reader.get(&url, accept).await?;
        if status != 200 {
            return Ok(Err(refusal(path, status, &page)));
        }
        let Value::Array(items) = page["items"].take() else {
            bail!("LIST {path}: the answer has no items");
        };
        items.into_iter().for_each(&mut each);
        match page["metadata"]["continue"].as_str() {
            Some(next) if !next.is_empty() => token = next.to_owned(),
            _ => return Ok(Ok(())),
        }
    }
}

/// Why the server refused to list `path`, in its words.
fn refusal(path: &str, status: u16, answer: &Value) -> String {
    let message = answer["message"].as_str().unwrap_or("no message");
    format!("LIST {path}: {status} ({message})")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn offered(count: u64, want: u64, max_bytes: usize) -> Vec<u64> {
        let mut spread = Spread::new(count, want, max_bytes);
        for i in 0..count {
            spread.offer(json!(i));
        }
        assert_eq!(spread.seen(), count);
        spread
            .finish()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect()
    }

    #[test]
    fn a_sample_is_spread_over_the_whole_collection() {
        // Every tenth, from the middle of each stride: the first page is not the sample.
        assert_eq!(
            offered(100, 10, usize::MAX),
            [5, 15, 25, 35, 45, 55, 65, 75, 85, 95]
        );
        // Fewer objects than asked for: all of them.
        assert_eq!(offered(3, 10, usize::MAX), [0, 1, 2]);
        // Over the byte limit: every other one dropped, still spread.
        let thinned = offered(100, 10, 8);
        assert_eq!(thinned, [5, 45, 85]);
    }
}
