//! The reflector: LIST (all pages joined), then WATCH from the list's resourceVersion,
//! turning what the server says into [`Event`]s for the store (client-go's
//! `Reflector.ListAndWatch`).

use futures::TryStreamExt;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams, WatchEvent, WatchParams};

use super::Event;

/// Watch timeout the reflector asks for; kube caps it below 295 s.
const WATCH_TIMEOUT_SECONDS: u32 = 290;

/// Why the reflector stopped.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A LIST request failed.
    #[error("failed to list")]
    List(#[source] kube::Error),
    /// A WATCH request failed, or its stream broke.
    #[error("failed to watch")]
    Watch(#[source] kube::Error),
    /// The server sent an ERROR event other than 410 Expired.
    #[error("watch stream returned an error: {0}")]
    WatchStatus(String),
}

/// The outcome of one watch connection.
#[derive(Debug)]
pub enum WatchEnd {
    /// The stream ended (timeout): watch again from the last resourceVersion.
    Closed,
    /// The server said 410 Expired: list again.
    Expired,
}

/// Lists and watches pods through a `kube::Api`.
#[derive(Debug)]
pub struct Reflector {
    api: Api<Pod>,
    page_size: u32,
}

impl Reflector {
    /// A reflector over all namespaces; `page_size` 0 lists in one request.
    pub fn new(client: kube::Client, page_size: u32) -> Reflector {
        Reflector {
            api: Api::all(client),
            page_size,
        }
    }

    /// Lists every page and joins the items into one list, as client-go's pager does.
    /// Returns the items and the list's resourceVersion.
    pub async fn list(&self) -> Result<(Vec<Pod>, String), Error> {
        let mut items: Vec<Pod> = Vec::new();
        let mut params = ListParams::default();
        if self.page_size > 0 {
            params = params.limit(self.page_size);
        }
        loop {
            let page = self.api.list(&params).await.map_err(Error::List)?;
            if items.is_empty() {
                items = page.items;
            } else {
                items.extend(page.items);
            }
            match page.metadata.continue_.filter(|c| !c.is_empty()) {
                Some(token) => params = params.continue_token(&token),
                None => return Ok((items, page.metadata.resource_version.unwrap_or_default())),
            }
        }
    }

    /// Watches from `resource_version`, handing every event to `on_event` until the stream
    /// ends. `on_watching` runs once the server has accepted the watch.
    pub async fn watch(
        &self,
        resource_version: &str,
        mut on_watching: impl FnMut(),
        mut on_event: impl FnMut(Event<Pod>),
    ) -> Result<WatchEnd, Error> {
        // kube's default asks for bookmarks (`allowWatchBookmarks=true`), as client-go does.
        let params = WatchParams::default().timeout(WATCH_TIMEOUT_SECONDS);
        let stream = self
            .api
            .watch(&params, resource_version)
            .await
            .map_err(Error::Watch)?;
        on_watching();
        let mut stream = std::pin::pin!(stream);
        while let Some(event) = stream.try_next().await.map_err(Error::Watch)? {
            match event {
                WatchEvent::Added(obj) | WatchEvent::Modified(obj) => on_event(Event::Apply(obj)),
                WatchEvent::Deleted(obj) => on_event(Event::Delete(obj)),
                WatchEvent::Bookmark(b) => on_event(Event::Bookmark {
                    resource_version: b.metadata.resource_version,
                }),
                WatchEvent::Error(status) if status.code == 410 => return Ok(WatchEnd::Expired),
                WatchEvent::Error(status) => {
                    return Err(Error::WatchStatus(status.message.clone()));
                }
            }
        }
        Ok(WatchEnd::Closed)
    }
}
