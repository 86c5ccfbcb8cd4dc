//! Watches over WebSocket. kube-apiserver answers a watch that asks `Upgrade: websocket`
//! (fabric8's informers, Headlamp, a browser) with the same events, one message each: a
//! text message per JSON event (its line, newline and all), a binary one per protobuf
//! event (the frame without its four-byte length), then a close frame (1000) when the
//! watch ends (k8s.io/apiserver's `WatchServer.HandleWS`). The handshake is
//! golang.org/x/net/websocket's, which it serves them with, refusals and all.
//!
//! This is a transport in front of a server, not a route: the watch is asked of the
//! server behind (the built-in one, or a real one through `run`'s proxy) as a plain HTTP
//! watch, and its body's events go out as messages. The in-process transport of `run`'s
//! built-in informers never asks for one, and its figures do not pay for it.

use std::future::Future;

use axum::body::{Body, HttpBody};
use axum::extract::FromRequestParts;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket, WebSocketUpgrade};
use axum::http::{HeaderMap, HeaderValue, Request, StatusCode, Uri, header, request::Parts};
use axum::response::{IntoResponse, Response};
use bytes::{Buf, Bytes, BytesMut};
use futures::{SinkExt, StreamExt};

use super::query::parse_bool;

/// The subprotocol a client passes its bearer token in (a browser cannot set a header);
/// kube-apiserver's authenticator takes it out before the handshake sees the others.
const BEARER_PROTOCOL_PREFIX: &str = "base64url.bearer.authorization.k8s.io.";

/// The WebSocket status of a watch that ended as it should (its deadline, a 410).
const NORMAL_CLOSURE: u16 = 1000;

/// The handshake's headers, which the server behind does not see.
const HANDSHAKE_HEADERS: [header::HeaderName; 6] = [
    header::UPGRADE,
    header::CONNECTION,
    header::SEC_WEBSOCKET_KEY,
    header::SEC_WEBSOCKET_VERSION,
    header::SEC_WEBSOCKET_PROTOCOL,
    header::SEC_WEBSOCKET_EXTENSIONS,
];

/// Answers `request` with `serve`, the server behind; a watch asked over WebSocket is
/// asked of it as a plain watch, and a successful one's events sent as messages. A watch
/// the server refuses gets its refusal over HTTP, as kube-apiserver checks the request
/// before the handshake; a handshake it would refuse gets x/net/websocket's refusal.
pub(crate) async fn answer<B, F, Fut, R>(request: Request<B>, serve: F) -> Response
where
    F: FnOnce(Request<B>) -> Fut,
    Fut: Future<Output = http::Response<R>>,
    R: HttpBody<Data = Bytes> + Send + 'static,
    R::Error: Into<axum::BoxError>,
{
    if !asks_websocket(request.headers()) || !is_watch(request.uri()) {
        return serve(request).await.map(Body::new);
    }
    let (mut parts, body) = request.into_parts();
    let Some(handshake) = handshake(&mut parts).await else {
        return serve(Request::from_parts(parts, body)).await.map(Body::new);
    };
    for name in HANDSHAKE_HEADERS {
        parts.headers.remove(name);
    }
    let response = serve(Request::from_parts(parts, body)).await;
    if response.status() != StatusCode::OK {
        return response.map(Body::new);
    }
    match handshake {
        Ok(upgrade) => {
            let framing = Framing::of(response.headers());
            let events = Body::new(response.into_body());
            upgrade.on_upgrade(move |socket| send(socket, framing, events))
        }
        Err(refused) => refused,
    }
}

/// The handshake, checked as x/net/websocket checks it: the upgrade, or the refusal to
/// give once the watch is known to be valid; `None` when the connection cannot be taken
/// over (a transport without upgrades), which is then answered as plain HTTP.
async fn handshake(parts: &mut Parts) -> Option<Result<WebSocketUpgrade, Response>> {
    let origin_given = origin_given(&parts.headers);
    let protocols = protocols(&parts.headers);
    let refused = match WebSocketUpgrade::from_request_parts(parts, &()).await {
        Ok(mut upgrade) => {
            // x/net/websocket's `Handler` takes a connection without an Origin for a
            // browser's with a null one: 403, no body.
            if !origin_given {
                return Some(Err(refusal(StatusCode::FORBIDDEN, "")));
            }
            return match protocols.as_slice() {
                [] => Some(Ok(upgrade)),
                // The one subprotocol asked for is echoed back; it changes nothing sent.
                [one] => {
                    upgrade.set_selected_protocol(one.clone());
                    Some(Ok(upgrade))
                }
                // x/net/websocket accepts one at most (its server must choose, and
                // kube-apiserver's does not).
                _ => Some(Err(refusal(StatusCode::BAD_REQUEST, ""))),
            };
        }
        Err(WebSocketUpgradeRejection::ConnectionNotUpgradable(_)) => return None,
        Err(WebSocketUpgradeRejection::InvalidWebSocketVersionHeader(_)) => {
            let mut refused = refusal(StatusCode::BAD_REQUEST, "missing or bad WebSocket Version");
            let version = HeaderValue::from_static("13");
            refused
                .headers_mut()
                .insert(header::SEC_WEBSOCKET_VERSION, version);
            refused
        }
        Err(WebSocketUpgradeRejection::WebSocketKeyHeaderMissing(_)) => {
            refusal(StatusCode::BAD_REQUEST, "mismatch challenge/response")
        }
        Err(_) => refusal(StatusCode::BAD_REQUEST, "not websocket protocol"),
    };
    Some(Err(refused))
}

/// Whether a request asks for a WebSocket, as kube's `wsstream.IsWebSocketRequest` reads
/// it: `Upgrade: websocket` and a `Connection` that names `upgrade`.
fn asks_websocket(headers: &HeaderMap) -> bool {
    let upgrade = headers
        .get(header::UPGRADE)
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"websocket"));
    let connection = headers.get_all(header::CONNECTION).iter().any(|v| {
        v.to_str().is_ok_and(|v| {
            v.split(',')
                .any(|token| token.trim().eq_ignore_ascii_case("upgrade"))
        })
    });
    upgrade && connection
}

/// Whether the request is a watch (`watch` in its query, read as kube-apiserver reads a
/// boolean); anything else asked over WebSocket is answered as HTTP, as there.
fn is_watch(uri: &Uri) -> bool {
    let query = uri.query().unwrap_or_default().as_bytes();
    form_urlencoded::parse(query)
        .filter(|(key, _)| key == "watch")
        .last()
        .is_some_and(|(_, value)| parse_bool(&value))
}

/// Whether the request names an Origin that parses as a request URI (an absolute URL or
/// a path), as x/net/websocket's `checkOrigin` asks.
fn origin_given(headers: &HeaderMap) -> bool {
    let parses = |origin: &str| {
        origin.starts_with('/') || origin.parse::<Uri>().is_ok_and(|u| u.scheme().is_some())
    };
    headers
        .get(header::ORIGIN)
        .and_then(|v| v.to_str().ok())
        .is_some_and(parses)
}

/// The subprotocols asked for, but for the bearer token's.
fn protocols(headers: &HeaderMap) -> Vec<HeaderValue> {
    headers
        .get_all(header::SEC_WEBSOCKET_PROTOCOL)
        .iter()
        .flat_map(|v| v.to_str().unwrap_or_default().split(','))
        .map(str::trim)
        .filter(|p| !p.is_empty() && !p.starts_with(BEARER_PROTOCOL_PREFIX))
        .filter_map(|p| HeaderValue::from_str(p).ok())
        .collect()
}

/// x/net/websocket's refusal: the status, the error's text as the body, and the
/// connection closed.
fn refusal(code: StatusCode, text: &'static str) -> Response {
    (code, [(header::CONNECTION, "close")], text).into_response()
}

/// How a watch body's bytes divide into events.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Framing {
    /// JSON, one event per line: text messages.
    Lines,
    /// Protobuf, each event after its four-byte big-endian length: binary messages.
    LengthPrefixed,
}

impl Framing {
    fn of(headers: &HeaderMap) -> Framing {
        let protobuf = headers.get(header::CONTENT_TYPE).is_some_and(|v| {
            v.as_bytes()
                .starts_with(b"application/vnd.kubernetes.protobuf")
        });
        if protobuf {
            Framing::LengthPrefixed
        } else {
            Framing::Lines
        }
    }
}

/// The events read so far from a watch body, whole or not.
#[derive(Debug)]
struct Events {
    framing: Framing,
    pending: BytesMut,
}

impl Events {
    /// The next whole event as its message, if one has arrived.
    fn next(&mut self) -> Option<Message> {
        match self.framing {
            Framing::Lines => {
                let end = self.pending.iter().position(|&b| b == b'\n')? + 1;
                let line = self.pending.split_to(end).freeze();
                Some(match Utf8Bytes::try_from(line.clone()) {
                    Ok(text) => Message::Text(text),
                    Err(_) => Message::Binary(line),
                })
            }
            Framing::LengthPrefixed => {
                let length = self.pending.get(..4)?;
                let length = u32::from_be_bytes(length.try_into().ok()?) as usize;
                if self.pending.len() < 4 + length {
                    return None;
                }
                self.pending.advance(4);
                Some(Message::Binary(self.pending.split_to(length).freeze()))
            }
        }
    }
}

/// Sends the events of `body` as messages until it ends (then a close frame) or the
/// client goes.
async fn send(socket: WebSocket, framing: Framing, body: Body) {
    let (mut out, mut incoming) = socket.split();
    let mut chunks = body.into_data_stream();
    let mut events = Events {
        framing,
        pending: BytesMut::new(),
    };
    loop {
        while let Some(message) = events.next() {
            if out.send(message).await.is_err() {
                return;
            }
        }
        tokio::select! {
            // Polled in order: a client that has gone is not sent more.
            biased;
            // A client sends nothing but control frames (kube-apiserver reads and drops
            // anything else); reading answers its pings, and its close or a broken
            // connection ends the watch.
            received = incoming.next() => match received {
                Some(Ok(Message::Close(_)) | Err(_)) | None => return,
                Some(Ok(_)) => {}
            },
            chunk = chunks.next() => match chunk {
                Some(Ok(chunk)) => events.pending.extend_from_slice(&chunk),
                // The watch's end, or the server behind gone: the stream ends here.
                Some(Err(_)) | None => {
                    let close = CloseFrame { code: NORMAL_CLOSURE, reason: Utf8Bytes::default() };
                    let _ = out.send(Message::Close(Some(close))).await;
                    return;
                }
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(*name, HeaderValue::from_static(value));
        }
        map
    }

    #[test]
    fn a_websocket_is_asked_by_upgrade_and_connection_together() {
        let asked = [
            ("upgrade", "WebSocket"),
            ("connection", "keep-alive, Upgrade"),
        ];
        assert!(asks_websocket(&headers(&asked)));
        assert!(!asks_websocket(&headers(&[("upgrade", "websocket")])));
        assert!(!asks_websocket(&headers(&[("connection", "upgrade")])));
        let h2c = [("upgrade", "h2c"), ("connection", "upgrade")];
        assert!(!asks_websocket(&headers(&h2c)));
    }

    #[test]
    fn an_origin_must_parse_as_a_request_uri() {
        assert!(origin_given(&headers(&[(
            "origin",
            "http://127.0.0.1:8080"
        )])));
        assert!(origin_given(&headers(&[("origin", "/")])));
        assert!(!origin_given(&headers(&[("origin", "null")])));
        assert!(!origin_given(&headers(&[])));
    }

    #[test]
    fn the_bearer_token_protocol_is_not_a_subprotocol() {
        let asked = [(
            "sec-websocket-protocol",
            "base64url.bearer.authorization.k8s.io.dG9rZW4, base64.binary.k8s.io",
        )];
        assert_eq!(protocols(&headers(&asked)), ["base64.binary.k8s.io"]);
        assert!(protocols(&headers(&[])).is_empty());
    }

    #[test]
    fn only_a_watch_is_answered_over_websocket() {
        assert!(is_watch(&Uri::from_static("/api/v1/pods?watch=true")));
        assert!(is_watch(&Uri::from_static("/api/v1/pods?watch=1&limit=5")));
        assert!(is_watch(&Uri::from_static("/api/v1/pods?watch=")));
        assert!(!is_watch(&Uri::from_static("/api/v1/pods?watch=false")));
        assert!(!is_watch(&Uri::from_static("/api/v1/pods")));
    }

    #[test]
    fn events_are_split_at_their_ends_whatever_the_chunks() {
        let mut lines = Events {
            framing: Framing::Lines,
            pending: BytesMut::new(),
        };
        lines
            .pending
            .extend_from_slice(b"{\"type\":\"ADDED\"}\n{\"type\"");
        let first = Message::Text(Utf8Bytes::from_static("{\"type\":\"ADDED\"}\n"));
        assert_eq!(lines.next(), Some(first));
        assert_eq!(lines.next(), None);
        lines.pending.extend_from_slice(b":\"DELETED\"}\n");
        let second = Message::Text(Utf8Bytes::from_static("{\"type\":\"DELETED\"}\n"));
        assert_eq!(lines.next(), Some(second));

        let mut frames = Events {
            framing: Framing::LengthPrefixed,
            pending: BytesMut::new(),
        };
        frames.pending.extend_from_slice(&[0, 0, 0, 2, 0x0a]);
        assert_eq!(frames.next(), None);
        frames.pending.extend_from_slice(&[0x00, 0, 0]);
        let event = Message::Binary(Bytes::from_static(&[0x0a, 0x00]));
        assert_eq!(frames.next(), Some(event));
        assert_eq!(frames.next(), None);
    }
}
