//! A `kube::Client` wired to the built-in apiserver through in-memory pipes.
//!
//! Each connection the client opens is a `tokio::io::duplex` pair: the client end goes to
//! hyper-util's pooled HTTP/1.1 client (the one kube uses), the server end to a hyper
//! server connection running the apiserver's router. Bytes cross by copy, so no buffer the
//! server allocated is ever owned by the informer. No socket, no DNS, no other thread: on a
//! `current_thread` runtime every run schedules the same way.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use hyper::rt::{Read, ReadBufCursor, Write};
use hyper_util::client::legacy::connect::{Connected, Connection};
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use kube::client::middleware::BaseUriLayer;
use tokio::io::DuplexStream;
use tower::Layer;

use super::ApiServer;
use super::collections::router;
use measure::alloc::{self, Component};
use measure::attributed::{Attribute, Spawner};

/// Capacity of each direction of an in-memory connection.
const PIPE_CAPACITY: usize = 64 * 1024;

/// The URI requests are addressed to; only the path and query matter to the router.
const BASE_URI: &str = "http://informer-mem.invalid";

/// A client of `server`. Must be called inside a tokio runtime (kube spawns its buffer task).
///
/// The client's work is charged to [`Component::Informer`], the server's connections to
/// [`Component::ApiServer`]: the hyper client's connection tasks run under an executor that
/// attributes them, and the service inside kube's request buffer attributes its calls
/// (kube spawns that buffer's worker task itself).
pub fn client(server: &ApiServer) -> kube::Client {
    client_of(server, Component::Informer)
}

/// A client of `server` whose work is charged to `component` (the server's connections
/// still to [`Component::ApiServer`]): the plain watchers of a variant's `watchers` are
/// the harness's.
pub fn client_of(server: &ApiServer, component: Component) -> kube::Client {
    let router = {
        let _apiserver = alloc::enter(Component::ApiServer);
        router(server.clone())
    };
    client_to(router, component)
}

/// A client of `server`'s network server ([`crate::network_router`]: writes, discovery,
/// the records, what `serve` answers), through the same in-memory pipes: for tests that
/// write through the API without a socket. Not the measured path.
#[cfg(feature = "server")]
pub fn network_client(server: &ApiServer) -> kube::Client {
    let router = {
        let _apiserver = alloc::enter(Component::ApiServer);
        crate::network_router(server.clone())
    };
    client_to(router, Component::Informer)
}

/// A client whose connections `router` serves, its work charged to `component`.
fn client_to(router: axum::Router, component: Component) -> kube::Client {
    let connector = tower::service_fn(move |_: http::Uri| {
        let (client_end, server_end) = tokio::io::duplex(PIPE_CAPACITY);
        let service = TowerToHyperService::new(router.clone());
        Component::ApiServer.spawn(async move {
            // The connection ends when the client hangs up; nothing to report then.
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(server_end), service)
                .await;
        });
        std::future::ready(Ok::<_, io::Error>(Pipe(TokioIo::new(client_end))))
    });
    let _client = alloc::enter(component);
    let http = hyper_util::client::legacy::Client::builder(Spawner(component)).build(connector);
    let base = BASE_URI.parse().expect("the base URI is valid");
    let service = Attribute {
        component,
        inner: BaseUriLayer::new(base).layer(http),
    };
    kube::Client::new(service, "default")
}

/// The client end of an in-memory connection.
struct Pipe(TokioIo<DuplexStream>);

impl Connection for Pipe {
    fn connected(&self) -> Connected {
        Connected::new()
    }
}

impl Read for Pipe {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_read(cx, buf)
    }
}

impl Write for Pipe {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().0).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_shutdown(cx)
    }
}
