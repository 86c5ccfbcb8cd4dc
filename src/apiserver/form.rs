//! What of each object a response carries: the whole object or its metadata only
//! (`PartialObjectMetadata`), from the request's `Accept` header.

use axum::body::Body;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::Response;

use super::generate::Generator;
use super::status::json_response;
use super::version::Version;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Form {
    /// The whole object.
    Full,
    /// `PartialObjectMetadata`: kind, apiVersion `meta.k8s.io/v1` and `metadata` only.
    Metadata,
}

impl Form {
    /// The form the first JSON media type of `Accept` asks for. Metadata informers ask
    /// `application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1` on LIST and
    /// `as=PartialObjectMetadata` on WATCH (client-go puts a protobuf type first, which this
    /// server skips); kube-apiserver serves either on both. Anything else (`as=Table`
    /// included, which this server does not render) gets whole objects.
    pub(super) fn accepted(headers: &HeaderMap) -> Form {
        let accept = headers
            .get_all(header::ACCEPT)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','));
        for media in accept {
            let mut parts = media.split(';').map(str::trim);
            let essence = parts.next().unwrap_or_default();
            if !matches!(essence, "application/json" | "*/*" | "application/*") {
                continue;
            }
            let is_metadata = parts.any(|p| {
                matches!(
                    p,
                    "as=PartialObjectMetadata" | "as=PartialObjectMetadataList"
                )
            });
            return if is_metadata {
                Form::Metadata
            } else {
                Form::Full
            };
        }
        Form::Full
    }

    /// Appends `version` in this form to `buf`.
    pub(super) fn write(self, buf: &mut Vec<u8>, generator: &Generator, version: &Version) {
        match self {
            Form::Full => version.write(buf, generator),
            Form::Metadata => version.write_metadata(buf, generator),
        }
    }
}

/// One object as the response body.
pub(super) fn object_response(
    code: StatusCode,
    generator: &Generator,
    version: &Version,
) -> Response {
    let mut buf = Vec::with_capacity(8 * 1024);
    version.write(&mut buf, generator);
    json_response(code, Body::from(buf))
}
