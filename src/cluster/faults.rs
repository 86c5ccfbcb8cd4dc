//! What the run puts between an informer and a real server: it counts the informer's
//! requests, cuts its watches, holds its next watches while the run writes, and answers a
//! watch from before a compaction with the 410 Expired kube-apiserver sends once that
//! resourceVersion has left its window.
//!
//! Why not compact etcd and let the server answer: kube-apiserver 1.37 serves watches from
//! its watch cache, which keeps serving a resourceVersion etcd has compacted away
//! (`informer-mem crosscheck` shows it, `watch-compacted`), and a window moves only after
//! enough events or time (the cache grows while its oldest event is younger than 75 s).
//! Answering here makes the informer take the path a real 410 takes (the error event, then
//! a relist at once), on any server, and takes no time.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures::future::BoxFuture;
use http::{Request, Response};
use http_body_util::BodyExt;
use http_body_util::combinators::UnsyncBoxBody;
use tokio::sync::{mpsc, watch};
use tower::BoxError;

use super::position::{Encoding, EventType, Events, Position};
use measure::Component;
use report::RequestCounts;

/// A response body as the informer reads it.
pub type Body = UnsyncBoxBody<Bytes, BoxError>;

/// The switches and counts the run shares with the service in front of the informer.
#[derive(Debug, Clone)]
pub struct Faults {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    /// What reads the bodies is charged to.
    component: Component,
    state: Mutex<State>,
    /// Bumped by every cut: open watches end when it moves.
    cuts: watch::Sender<u64>,
    /// Whether new watches wait.
    held: watch::Sender<bool>,
}

#[derive(Debug, Default)]
struct State {
    /// A watch from a resourceVersion below this is answered 410 Expired.
    expired_before: u64,
    /// How many more watches get that answer before it ends; `None`: no end.
    expiries_left: Option<usize>,
    counts: RequestCounts,
    /// Cuts so far.
    cuts: u64,
    /// Watches the server accepted since the last cut that are still open.
    open: usize,
    /// Every open watch's position, by a number of its own.
    positions: HashMap<u64, Position>,
    /// Watches so far: the next one's number.
    watches: u64,
}

impl Default for Faults {
    fn default() -> Faults {
        Faults::charged_to(Component::Informer)
    }
}

impl Faults {
    /// Faults whose reading of bodies is charged to `component`: the informer's own in a
    /// run whose informer is in this process, the apiserver's in front of a program.
    pub fn charged_to(component: Component) -> Faults {
        Faults {
            shared: Arc::new(Shared {
                component,
                state: Mutex::default(),
                cuts: watch::Sender::new(0),
                held: watch::Sender::new(false),
            }),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.shared
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// What reading the bodies is charged to.
    pub(super) fn component(&self) -> Component {
        self.shared.component
    }

    /// Ends every open watch, as a dropped connection or a restarted server would: the
    /// informer sees its stream end and watches again from its last resourceVersion.
    pub fn cut(&self) {
        {
            let mut state = self.state();
            state.cuts += 1;
            state.open = 0;
        }
        self.shared.cuts.send_modify(|n| *n += 1);
    }

    /// Watches the server accepted since the last cut that are still open: an informer
    /// that was cut is back once it has one again (after its relist, if it got a 410).
    pub fn open_watches(&self) -> usize {
        self.state().open
    }

    /// How many open watches have been sent every event up to resourceVersion `target`
    /// (a stream that cannot be read: once it has carried nothing for `idle`).
    pub fn watches_at(&self, target: u64, idle: Duration) -> usize {
        let state = self.state();
        state
            .positions
            .values()
            .filter(|p| p.reached(target, idle))
            .count()
    }

    /// Makes new watches wait until [`Faults::release`]: the informer is away.
    pub fn hold(&self) {
        self.shared.held.send_replace(true);
    }

    /// Lets waiting and new watches through.
    pub fn release(&self) {
        self.shared.held.send_replace(false);
    }

    /// From now on a watch from a resourceVersion below `rv` is answered 410 Expired.
    pub fn expire_before(&self, rv: u64) {
        let mut state = self.state();
        state.expired_before = rv;
        state.expiries_left = None;
    }

    /// The next `watches` watches from a resourceVersion below `rv` are answered 410
    /// Expired, then none: a relist forced once per informer, which ends even when the
    /// server's resourceVersion has not moved (then the relist's own version is below
    /// `rv` too).
    pub fn expire_next(&self, rv: u64, watches: usize) {
        let mut state = self.state();
        state.expired_before = rv;
        state.expiries_left = Some(watches);
    }

    /// Whether a watch from `from` is answered 410, counting the answer: `from` and the
    /// oldest resourceVersion left if so.
    fn take_expiry(&self, from: Option<u64>) -> Option<(u64, u64)> {
        let mut state = self.state();
        let oldest = state.expired_before;
        let from = from.filter(|rv| *rv > 0 && *rv < oldest)?;
        if let Some(left) = state.expiries_left.as_mut() {
            *left = left.saturating_sub(1);
            if *left == 0 {
                state.expired_before = 0;
                state.expiries_left = None;
            }
        }
        Some((from, oldest))
    }

    /// The informer's requests so far: LIST pages, watches, their events and bytes, and
    /// 410s (the server's and the ones answered here).
    pub fn requests(&self) -> RequestCounts {
        self.state().counts
    }

    /// `inner` with these faults in front of it.
    pub fn service<S>(&self, inner: S) -> FaultService<S> {
        FaultService {
            faults: self.clone(),
            inner,
        }
    }

    fn count(&self, f: impl FnOnce(&mut RequestCounts)) {
        f(&mut self.state().counts);
    }

    /// Waits while watches are held.
    async fn released(&self) {
        let mut held = self.shared.held.subscribe();
        // The sender lives as long as `self`: `wait_for` cannot fail.
        let _ = held.wait_for(|held| !held).await;
    }

    /// The body the informer reads: `body`'s frames, counted, and for a watch ended by
    /// the next cut. A task charged to the informer moves the frames, so the informer
    /// pays for its reading as it would without this service.
    fn forward<B>(&self, body: B, watch: Option<(Position, Events)>) -> Body
    where
        B: hyper::body::Body<Data = Bytes> + Send + 'static,
        B::Error: Into<BoxError> + Send,
    {
        let (tx, mut rx) = mpsc::channel::<Result<hyper::body::Frame<Bytes>, BoxError>>(1);
        let mut cuts = self.shared.cuts.subscribe();
        let faults = self.clone();
        // The watch's number and the cut it opened after.
        let (position, mut events) = watch.unzip();
        let opened = position.map(|position| {
            let mut state = self.state();
            state.open += 1;
            state.watches += 1;
            let id = state.watches;
            state.positions.insert(id, position);
            (id, state.cuts)
        });
        let watch = opened.is_some();
        self.shared.component.spawn(async move {
            let mut body = std::pin::pin!(body);
            loop {
                let frame = tokio::select! {
                    biased;
                    _ = cuts.changed(), if watch => break,
                    frame = body.frame() => frame,
                };
                let frame = match frame {
                    None => break,
                    Some(Ok(frame)) => frame,
                    Some(Err(e)) => {
                        let _ = tx.send(Err(e.into())).await;
                        break;
                    }
                };
                if let Some(data) = frame.data_ref() {
                    let mut state = faults.state();
                    let State {
                        counts, positions, ..
                    } = &mut *state;
                    counts.bytes += data.len() as u64;
                    if let (Some(position), Some(events)) = (
                        opened.and_then(|(id, _)| positions.get_mut(&id)),
                        events.as_mut(),
                    ) {
                        events.advance(data, position, |head| {
                            counts.watch_events += 1;
                            match head.map(|h| h.kind) {
                                // kube-apiserver ends a watch on an error only for 410.
                                Some(EventType::Error) => counts.expired += 1,
                                Some(EventType::Bookmark) => counts.bookmarks += 1,
                                _ => {}
                            }
                        });
                    }
                }
                if tx.send(Ok(frame)).await.is_err() {
                    break;
                }
            }
            let mut state = faults.state();
            if let Some((id, cut)) = opened {
                state.positions.remove(&id);
                if cut == state.cuts {
                    state.open -= 1;
                }
            }
        });
        let frames = futures::stream::poll_fn(move |cx| rx.poll_recv(cx));
        UnsyncBoxBody::new(http_body_util::StreamBody::new(frames))
    }
}

/// The tower service [`Faults::service`] makes.
#[derive(Debug, Clone)]
pub struct FaultService<S> {
    faults: Faults,
    inner: S,
}

impl<S, B> tower::Service<Request<kube::client::Body>> for FaultService<S>
where
    S: tower::Service<Request<kube::client::Body>, Response = Response<B>> + Clone + Send + 'static,
    S::Future: Send,
    S::Error: Into<BoxError>,
    B: hyper::body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError> + Send,
{
    type Response = Response<Body>;
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<Response<Body>, BoxError>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, request: Request<kube::client::Body>) -> Self::Future {
        // The instance polled ready goes with this call (tower's rule).
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let faults = self.faults.clone();
        let query = Query::of(&request);
        Box::pin(async move {
            if query.watch {
                faults.released().await;
                if let Some((from, oldest)) = faults.take_expiry(query.from) {
                    return Ok(faults.expired(from, oldest));
                }
            }
            let response = inner.call(request).await.map_err(Into::into)?;
            let status = response.status();
            faults.count(|c| {
                if query.watch {
                    c.watch += 1;
                } else if query.get {
                    c.list += 1;
                }
                if status == http::StatusCode::GONE {
                    c.expired += 1;
                }
            });
            let (parts, body) = response.into_parts();
            let header = |name| parts.headers.get(name).and_then(|v| v.to_str().ok());
            let encoding = Encoding::of(header(http::header::CONTENT_TYPE));
            let gzipped = header(http::header::CONTENT_ENCODING) == Some("gzip");
            let watch = (query.watch && status.is_success()).then(|| {
                (
                    Position::start(query.from, encoding),
                    Events::new(encoding, gzipped),
                )
            });
            let body = if query.get {
                faults.forward(body, watch)
            } else {
                UnsyncBoxBody::new(body.map_err(Into::into))
            };
            Ok(Response::from_parts(parts, body))
        })
    }
}

impl Faults {
    /// What kube-apiserver sends to a watch from `from` once its window starts at
    /// `oldest`: a 200 whose one event is an ERROR with a 410 Expired Status.
    fn expired(&self, from: u64, oldest: u64) -> Response<Body> {
        let line = format!(
            "{}\n",
            serde_json::json!({
                "type": "ERROR",
                "object": {
                    "kind": "Status",
                    "apiVersion": "v1",
                    "metadata": {},
                    "status": "Failure",
                    "message": format!("too old resource version: {from} ({oldest})"),
                    "reason": "Expired",
                    "code": 410,
                },
            })
        );
        self.count(|c| {
            c.watch += 1;
            c.watch_events += 1;
            c.expired += 1;
            c.bytes += line.len() as u64;
        });
        let body = http_body_util::Full::new(Bytes::from(line)).map_err(|e| match e {});
        Response::builder()
            .header(http::header::CONTENT_TYPE, "application/json")
            .body(UnsyncBoxBody::new(body))
            .expect("a fixed response is valid")
    }
}

/// What the service needs to know of a request.
#[derive(Debug, Clone, Copy)]
struct Query {
    get: bool,
    watch: bool,
    /// `resourceVersion`, when it is a number.
    from: Option<u64>,
}

impl Query {
    fn of<T>(request: &Request<T>) -> Query {
        let mut query = Query {
            get: request.method() == http::Method::GET,
            watch: false,
            from: None,
        };
        let pairs = form_urlencoded::parse(request.uri().query().unwrap_or_default().as_bytes());
        for (key, value) in pairs {
            match &*key {
                "watch" => query.watch = matches!(&*value, "true" | "1"),
                "resourceVersion" => query.from = value.parse().ok(),
                _ => {}
            }
        }
        query
    }
}

impl std::fmt::Display for Faults {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let held = *self.shared.held.borrow();
        let state = self.state();
        write!(
            f,
            "watches {}, watches from below {} answered 410",
            if held { "held" } else { "let through" },
            state.expired_before
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(uri: &str) -> Request<()> {
        Request::get(uri).body(()).unwrap()
    }

    #[test]
    fn reads_watches_and_their_resource_version() {
        let q = Query::of(&request("/api/v1/pods?watch=true&resourceVersion=42"));
        assert!(q.watch && q.get);
        assert_eq!(q.from, Some(42));
        let q = Query::of(&request("/api/v1/pods?limit=500&resourceVersion=0"));
        assert!(!q.watch);
        assert_eq!(q.from, Some(0));
        let q = Query::of(&request("/api/v1/pods?watch=1"));
        assert!(q.watch);
        assert_eq!(q.from, None);
    }

    #[tokio::test]
    async fn answers_a_watch_from_before_the_window_with_410() {
        let faults = Faults::default();
        faults.expire_before(100);
        let response = faults.expired(42, 100);
        let body = response.into_body().collect().await.unwrap().to_bytes();
        let event: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(event["type"], "ERROR");
        assert_eq!(event["object"]["code"], 410);
        assert_eq!(event["object"]["reason"], "Expired");
        let counts = faults.requests();
        assert_eq!((counts.watch, counts.expired), (1, 1));
    }

    #[test]
    fn a_forced_relist_answers_410_once_per_informer() {
        let faults = Faults::default();
        faults.expire_next(101, 2);
        assert_eq!(faults.take_expiry(Some(100)), Some((100, 101)));
        assert_eq!(faults.take_expiry(None), None, "a watch from nothing");
        assert_eq!(faults.take_expiry(Some(100)), Some((100, 101)));
        assert_eq!(
            faults.take_expiry(Some(100)),
            None,
            "two informers, two 410s"
        );
        faults.expire_before(101);
        for _ in 0..3 {
            assert_eq!(faults.take_expiry(Some(100)), Some((100, 101)));
        }
    }

    #[tokio::test]
    async fn a_cut_ends_a_watch_body_but_not_a_list() {
        let faults = Faults::default();
        let (tx, rx) = mpsc::channel::<Result<hyper::body::Frame<Bytes>, BoxError>>(4);
        let endless = http_body_util::StreamBody::new(futures::stream::poll_fn({
            let mut rx = rx;
            move |cx| rx.poll_recv(cx)
        }));
        let json = Some((
            Position::start(None, Encoding::Json),
            Events::new(Encoding::Json, false),
        ));
        let mut watch = faults.forward(endless, json);
        tx.send(Ok(hyper::body::Frame::data(Bytes::from_static(b"{}\n"))))
            .await
            .unwrap();
        let first = watch.frame().await.unwrap().unwrap();
        assert_eq!(first.into_data().unwrap(), Bytes::from_static(b"{}\n"));
        faults.cut();
        assert!(watch.frame().await.is_none(), "the cut ends the stream");
        assert_eq!(faults.requests().watch_events, 1);
    }
}
