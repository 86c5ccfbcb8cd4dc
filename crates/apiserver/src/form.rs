//! What of each object a response carries: the whole object, its metadata only
//! (`PartialObjectMetadata`) or a table row (`Table`, for kubectl), from the request's
//! `Accept` header and, for a table, its `includeObject`; and the wire it is written in,
//! JSON or Kubernetes' protobuf.

use axum::body::Body;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use serde_json::{Value, json};

use super::generate::{Generator, ProtobufMessage};
use super::protobuf;
use super::query::Include;
#[cfg(feature = "server")]
use super::query::Query;
use super::state::EventKind;
#[cfg(feature = "server")]
use super::status::ApiError;
use super::status::{json_response, status_body};
#[cfg(feature = "server")]
use super::table;
use super::version::Version;
use scenario::ObjectKind;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Form {
    /// The whole object.
    Full,
    /// `PartialObjectMetadata`: kind, apiVersion `meta.k8s.io/v1` and `metadata` only.
    Metadata,
    /// A `meta.k8s.io/v1` Table: the kind's columns, a row per object, each with the
    /// object as `Include` says. Only kubectl asks for one, over TCP.
    #[cfg(feature = "server")]
    Table(Include),
}

/// The wire a response is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Wire {
    Json,
    /// `application/vnd.kubernetes.protobuf`: whole objects and metadata (not tables).
    Protobuf,
}

impl Wire {
    /// A JSON document (an object, a list, a Status) as this wire's response.
    #[cfg(feature = "server")]
    pub(super) fn respond(self, code: StatusCode, json: Vec<u8>) -> Response {
        match self {
            Wire::Json => json_response(code, Body::from(json)),
            Wire::Protobuf => match protobuf::encode_json(&json) {
                Ok(bytes) => protobuf_response(code, protobuf::MEDIA_TYPE, Body::from(bytes)),
                Err(e) => {
                    ApiError::internal(format!("cannot encode as protobuf: {e}")).into_response()
                }
            },
        }
    }

    /// A watch event of `kind` for `version` in `form`, in this wire: straight from the
    /// object's protobuf skeleton when it has one, else from its JSON line (`line`).
    pub(super) fn watch_event_of(
        self,
        kind: EventKind,
        generator: &Generator,
        form: Form,
        version: &Version,
        line: impl FnOnce() -> Bytes,
    ) -> Bytes {
        if self == Wire::Protobuf
            && let Some((api_version, object_kind, message)) = form.protobuf(generator, version)
        {
            let frame = protobuf::watch_frame_of(kind.as_str(), api_version, object_kind, &message);
            return Bytes::from(frame);
        }
        self.watch_event(line())
    }

    /// A watch event, given as its JSON line, in this wire: the line, or a protobuf
    /// frame. An object that does not encode is an ERROR event saying why.
    pub(super) fn watch_event(self, line: Bytes) -> Bytes {
        match self {
            Wire::Json => line,
            Wire::Protobuf => {
                let frame = protobuf::watch_frame(&line).unwrap_or_else(|e| {
                    let why = format!("cannot encode as protobuf: {e}");
                    let status = status_body(500, "InternalError", &why);
                    let event = serde_json::json!({"type": "ERROR", "object": status});
                    protobuf::watch_frame(event.to_string().as_bytes()).expect("a Status encodes")
                });
                Bytes::from(frame)
            }
        }
    }

    /// A watch response whose events stream from `body`.
    pub(super) fn watch_response(self, body: Body) -> Response {
        match self {
            Wire::Json => json_response(StatusCode::OK, body),
            Wire::Protobuf => protobuf_response(StatusCode::OK, protobuf::WATCH_MEDIA_TYPE, body),
        }
    }
}

pub(super) fn protobuf_response(
    code: StatusCode,
    media_type: &'static str,
    body: Body,
) -> Response {
    (code, [(header::CONTENT_TYPE, media_type)], body).into_response()
}

impl Form {
    /// The form and wire the first media type of `Accept` this server can write asks
    /// for, `None` when it names none (kube-apiserver's 406). Metadata informers ask
    /// `application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1`
    /// (then the same in JSON) on LIST and `as=PartialObjectMetadata` on WATCH;
    /// kube-apiserver serves either on both. kubectl asks `as=Table;v=v1;g=meta.k8s.io`
    /// first (a `v1beta1` table is skipped, and so is any other `as`, and a table in
    /// protobuf). No `Accept` header means whole objects in JSON. Protobuf is passed over
    /// for a kind served in JSON only (`kind`: a sampled one), as kube-apiserver passes it
    /// over for a custom resource.
    pub(super) fn accepted(headers: &HeaderMap, kind: Option<ObjectKind>) -> Option<(Form, Wire)> {
        let protobuf = kind.is_none_or(protobuf::serves);
        let mut accept = headers
            .get_all(header::ACCEPT)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .filter(|media| !media.trim().is_empty())
            .peekable();
        if accept.peek().is_none() {
            return Some((Form::Full, Wire::Json));
        }
        for media in accept {
            let mut parts = media.split(';').map(str::trim);
            let wire = match parts.next().unwrap_or_default() {
                "application/json" | "*/*" | "application/*" => Wire::Json,
                essence if essence == protobuf::MEDIA_TYPE && protobuf => Wire::Protobuf,
                _ => continue,
            };
            let (mut form, mut version) = (Some(Form::Full), None);
            for part in parts {
                match part.strip_prefix("as=") {
                    Some("PartialObjectMetadata" | "PartialObjectMetadataList") => {
                        form = Some(Form::Metadata);
                    }
                    #[cfg(feature = "server")]
                    Some("Table") => form = Some(Form::Table(Include::Metadata)),
                    Some(_) => form = None,
                    None => version = version.or(part.strip_prefix("v=")),
                }
            }
            if form.is_some_and(Form::is_table) && (version != Some("v1") || wire == Wire::Protobuf)
            {
                continue;
            }
            if let Some(form) = form {
                return Some((form, wire));
            }
        }
        None
    }

    /// The form, wire and query of a GET of one object: the form `Accept` asks, with the
    /// query's `includeObject`; a refusal (406, or 400 for a query that does not decode)
    /// as the response.
    #[cfg(feature = "server")]
    pub(super) fn of_request(
        headers: &HeaderMap,
        kind: Option<ObjectKind>,
        query: Option<&str>,
    ) -> Result<(Form, Wire, Query), Box<Response>> {
        let (form, wire) = Form::accepted(headers, kind)
            .ok_or_else(|| Box::new(ApiError::not_acceptable().into_response()))?;
        let query =
            Query::parse(query.unwrap_or_default()).map_err(|e| Box::new(e.into_response()))?;
        Ok((form.including(query.include_object), wire, query))
    }

    /// The form with the request's `includeObject`, which only a table reads.
    pub(super) fn including(self, include: Option<Include>) -> Form {
        match (self, include) {
            #[cfg(feature = "server")]
            (Form::Table(_), Some(include)) => Form::Table(include),
            _ => self,
        }
    }

    /// Whether this is a Table.
    pub(super) fn is_table(self) -> bool {
        match self {
            Form::Full | Form::Metadata => false,
            #[cfg(feature = "server")]
            Form::Table(_) => true,
        }
    }

    /// A watch's BOOKMARK object around `metadata`: it takes the form of the watch's
    /// objects, as kube-apiserver transforms it.
    pub(super) fn bookmark(self, kind: ObjectKind, metadata: Value) -> Value {
        match self.object_kind(kind) {
            Some((kind, api_version)) => {
                json!({"kind": kind, "apiVersion": api_version, "metadata": metadata})
            }
            #[cfg(feature = "server")]
            None => table::bookmark(metadata),
            #[cfg(not(feature = "server"))]
            None => unreachable!("every form but a table has an object kind"),
        }
    }

    /// Appends `version` in this form to `buf` (a table of one row, with its columns).
    #[cfg(feature = "server")]
    pub(super) fn write(self, buf: &mut Vec<u8>, generator: &Generator, version: &Version) {
        self.write_event_object(buf, generator, version, true);
    }

    /// Appends `version` as a watch event's object: a table's column definitions go in
    /// the watch's first event only (`with_columns`), as kube-apiserver sends them.
    pub(super) fn write_event_object(
        self,
        buf: &mut Vec<u8>,
        generator: &Generator,
        version: &Version,
        #[cfg_attr(
            not(feature = "server"),
            expect(unused_variables, reason = "only a table reads it")
        )]
        with_columns: bool,
    ) {
        match self {
            Form::Full => version.write(buf, generator),
            Form::Metadata => version.write_metadata(buf, generator),
            #[cfg(feature = "server")]
            Form::Table(include) => {
                table::write_one(buf, generator, version, include, with_columns);
            }
        }
    }

    /// `version` in this form as a response body in `wire`.
    #[cfg(feature = "server")]
    pub(super) fn respond(
        self,
        code: StatusCode,
        generator: &Generator,
        version: &Version,
        wire: Wire,
    ) -> Response {
        if wire == Wire::Protobuf
            && let Some((api_version, kind, message)) = self.protobuf(generator, version)
        {
            let document = protobuf::document(api_version, kind, &message);
            return protobuf_response(code, protobuf::MEDIA_TYPE, Body::from(document));
        }
        let mut buf = Vec::with_capacity(8 * 1024);
        self.write(&mut buf, generator, version);
        wire.respond(code, buf)
    }

    /// `version` in this form as a protobuf message straight from its class's skeleton,
    /// with its document's `apiVersion` and `kind`. `None` for a table, an object a client
    /// wrote, or a class without a skeleton: their JSON is encoded instead.
    pub(super) fn protobuf<'g>(
        self,
        generator: &'g Generator,
        version: &Version,
    ) -> Option<(&'static str, &'static str, ProtobufMessage<'g>)> {
        if version.written.is_some() {
            return None;
        }
        let (kind, api_version) = self.object_kind(generator.spec().kind)?;
        let message = match self {
            Form::Metadata => generator.protobuf_metadata(version.id),
            _ => generator.protobuf_object(version.id),
        }?;
        Some((api_version, kind, message))
    }

    /// A LIST body up to its first item, given its `metadata` as JSON.
    pub(super) fn list_head(self, kind: ObjectKind, metadata: &str) -> String {
        let (kind, api_version) = match self {
            Form::Full => (kind.as_str(), kind.api_version()),
            Form::Metadata => ("PartialObjectMetadata", "meta.k8s.io/v1"),
            #[cfg(feature = "server")]
            Form::Table(_) => return table::list_head(kind, metadata),
        };
        format!(
            r#"{{"kind":"{kind}List","apiVersion":"{api_version}","metadata":{metadata},"items":["#
        )
    }

    /// The `kind` and `apiVersion` of an object in this form, a watch bookmark's too;
    /// `None` for a table (a table's bookmark is an empty Table).
    pub(super) fn object_kind(self, kind: ObjectKind) -> Option<(&'static str, &'static str)> {
        match self {
            Form::Full => Some((kind.as_str(), kind.api_version())),
            Form::Metadata => Some(("PartialObjectMetadata", "meta.k8s.io/v1")),
            #[cfg(feature = "server")]
            Form::Table(_) => None,
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
            #[cfg(feature = "server")]
            Form::Table(include) => table::write_row(buf, generator, version, include),
        }
    }
}

/// One object as the response body, in `wire`.
#[cfg(feature = "server")]
pub(super) fn object_response(
    code: StatusCode,
    generator: &Generator,
    version: &Version,
    wire: Wire,
) -> Response {
    Form::Full.respond(code, generator, version, wire)
}
