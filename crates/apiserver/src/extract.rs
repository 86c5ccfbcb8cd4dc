//! Request extractors that refuse as kube-apiserver does: with a `Status` body, never
//! axum's plain-text rejections.

#[cfg(feature = "server")]
use std::time::Duration;

#[cfg(feature = "server")]
use axum::body::Bytes;
#[cfg(feature = "server")]
use axum::extract::{FromRequest, Request};
use axum::extract::{FromRequestParts, Path};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::Response;
use serde::de::DeserializeOwned;

use super::status::status;

/// The largest request body kube-apiserver takes (`MaxRequestBodyBytes`, 3 MiB); larger
/// ones get 413 RequestEntityTooLarge.
#[cfg(feature = "server")]
pub const MAX_REQUEST_BODY_BYTES: usize = 3 * 1024 * 1024;

/// The URL's path parameters; a segment that does not decode (`%FF` in a name) or that
/// apimachinery's `IsValidPathSegmentName` refuses (`.`, `..`, or one holding `/` or `%`
/// once decoded) is a 400 BadRequest `Status`.
#[derive(Debug)]
pub struct ApiPath<T>(pub T);

impl<T, S> FromRequestParts<S> for ApiPath<T>
where
    T: DeserializeOwned + Send,
    S: Send + Sync,
{
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Response> {
        // Checked on the raw path, without allocating: `run` measures every request.
        for segment in parts.uri.path().split('/') {
            if let Some(why) = invalid_path_segment(segment) {
                return Err(status(
                    StatusCode::BAD_REQUEST,
                    "BadRequest",
                    format!(
                        "invalid path {:?}: segment {segment:?} {why}",
                        parts.uri.path()
                    ),
                ));
            }
        }
        match Path::<T>::from_request_parts(parts, state).await {
            Ok(Path(value)) => Ok(ApiPath(value)),
            Err(rejection) => Err(status(
                StatusCode::BAD_REQUEST,
                "BadRequest",
                format!(
                    "invalid path {:?}: {}",
                    parts.uri.path(),
                    rejection.body_text()
                ),
            )),
        }
    }
}

/// Why apimachinery's `IsValidPathSegmentName` refuses the percent-encoded `segment`
/// once decoded, if it does.
fn invalid_path_segment(segment: &str) -> Option<&'static str> {
    let decoded = || percent_encoding::percent_decode_str(segment);
    if decoded().eq(*b".") {
        Some("may not be '.'")
    } else if decoded().eq(*b"..") {
        Some("may not be '..'")
    } else if decoded().any(|b| b == b'/') {
        Some("may not contain '/'")
    } else if decoded().any(|b| b == b'%') {
        Some("may not contain '%'")
    } else {
        None
    }
}

/// How long a client may take to send a request body (kube-apiserver's
/// `--request-timeout`), as a request extension that `serve` adds. Without one (the
/// in-process transport of `run`, whose bodies are whole) there is no timer.
#[derive(Debug, Clone, Copy)]
#[cfg(feature = "server")]
pub struct RequestTimeout(pub Duration);

/// The whole request body, at most [`MAX_REQUEST_BODY_BYTES`]. Too large: 413
/// RequestEntityTooLarge; unreadable (a broken chunked encoding, a client that hung up):
/// 400 BadRequest; not all sent within the [`RequestTimeout`]: 504 Timeout, as
/// kube-apiserver's timeout filter answers.
#[derive(Debug)]
#[cfg(feature = "server")]
pub struct ApiBody(pub Bytes);

#[cfg(feature = "server")]
impl<S: Send + Sync> FromRequest<S> for ApiBody {
    type Rejection = Response;

    async fn from_request(request: Request, _state: &S) -> Result<Self, Response> {
        let timeout = request.extensions().get::<RequestTimeout>().copied();
        let read = axum::body::to_bytes(request.into_body(), MAX_REQUEST_BODY_BYTES);
        let read = match timeout {
            None => read.await,
            Some(RequestTimeout(limit)) => match tokio::time::timeout(limit, read).await {
                Ok(read) => read,
                Err(_) => {
                    return Err(status(
                        StatusCode::GATEWAY_TIMEOUT,
                        "Timeout",
                        "Timeout: request did not complete within requested timeout - the request body was not sent in time",
                    ));
                }
            },
        };
        match read {
            Ok(bytes) => Ok(ApiBody(bytes)),
            Err(e) if is_too_large(&e) => Err(status(
                StatusCode::PAYLOAD_TOO_LARGE,
                "RequestEntityTooLarge",
                format!("Request entity too large: limit is {MAX_REQUEST_BODY_BYTES}"),
            )),
            Err(e) => Err(status(
                StatusCode::BAD_REQUEST,
                "BadRequest",
                format!("the request body could not be read: {e}"),
            )),
        }
    }
}

/// Whether reading the body stopped at the size limit.
#[cfg(feature = "server")]
fn is_too_large(error: &axum::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = source {
        if e.is::<http_body_util::LengthLimitError>() {
            return true;
        }
        source = e.source();
    }
    false
}
