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
    /// The form the first media type of `Accept` this server can write asks for, `None`
    /// when it names none (kube-apiserver's 406). Metadata informers ask
    /// `application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1` on LIST and
    /// `as=PartialObjectMetadata` on WATCH (client-go puts a protobuf type first, which this
    /// server skips); kube-apiserver serves either on both. `as=Table` is skipped too:
    /// this server does not render tables, and kubectl, which asks for one, always offers
    /// plain JSON after it. No `Accept` header means whole objects.
    pub(super) fn accepted(headers: &HeaderMap) -> Option<Form> {
        let mut accept = headers
            .get_all(header::ACCEPT)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .filter(|media| !media.trim().is_empty())
            .peekable();
        if accept.peek().is_none() {
            return Some(Form::Full);
        }
        for media in accept {
            let mut parts = media.split(';').map(str::trim);
            let essence = parts.next().unwrap_or_default();
            if !matches!(essence, "application/json" | "*/*" | "application/*") {
                continue;
            }
            let mut form = Some(Form::Full);
            for part in parts {
                match part.strip_prefix("as=") {
                    Some("PartialObjectMetadata" | "PartialObjectMetadataList") => {
                        form = Some(Form::Metadata);
                    }
                    Some(_) => form = None,
                    None => {}
                }
            }
            if form.is_some() {
                return form;
            }
        }
        None
    }

    /// Appends `version` in this form to `buf`.
    pub(super) fn write(self, buf: &mut Vec<u8>, generator: &Generator, version: &Version) {
        match self {
            Form::Full => version.write(buf, generator),
            Form::Metadata => version.write_metadata(buf, generator),
        }
    }

    /// Appends `version` in this form as an item of a list to `buf`. kube-apiserver
    /// leaves a whole object's `apiVersion` and `kind` out there (the list's own say
    /// them); a `PartialObjectMetadata` item keeps its own, which differ from the
    /// object's.
    pub(super) fn write_item(self, buf: &mut Vec<u8>, generator: &Generator, version: &Version) {
        match self {
            Form::Full => version.write_item(buf, generator),
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
