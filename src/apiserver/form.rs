//! What of each object a response carries: the whole object, its metadata only
//! (`PartialObjectMetadata`) or a table row (`Table`, for kubectl), from the request's
//! `Accept` header and, for a table, its `includeObject`.

use axum::body::Body;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::generate::Generator;
use super::query::Query;
use super::status::{ApiError, json_response};
use super::table::{self, Include};
use super::version::Version;
use crate::scenario::ObjectKind;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Form {
    /// The whole object.
    Full,
    /// `PartialObjectMetadata`: kind, apiVersion `meta.k8s.io/v1` and `metadata` only.
    Metadata,
    /// A `meta.k8s.io/v1` Table: the kind's columns, a row per object, each with the
    /// object as `Include` says.
    Table(Include),
}

impl Form {
    /// The form the first media type of `Accept` this server can write asks for, `None`
    /// when it names none (kube-apiserver's 406). Metadata informers ask
    /// `application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1` on LIST and
    /// `as=PartialObjectMetadata` on WATCH (client-go puts a protobuf type first, which this
    /// server skips); kube-apiserver serves either on both. kubectl asks
    /// `as=Table;v=v1;g=meta.k8s.io` first (a `v1beta1` table is skipped, and so is any
    /// other `as`). No `Accept` header means whole objects.
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
            let (mut form, mut version) = (Some(Form::Full), None);
            for part in parts {
                match part.strip_prefix("as=") {
                    Some("PartialObjectMetadata" | "PartialObjectMetadataList") => {
                        form = Some(Form::Metadata);
                    }
                    Some("Table") => form = Some(Form::Table(Include::Metadata)),
                    Some(_) => form = None,
                    None => version = version.or(part.strip_prefix("v=")),
                }
            }
            if matches!(form, Some(Form::Table(_))) && version != Some("v1") {
                continue;
            }
            if form.is_some() {
                return form;
            }
        }
        None
    }

    /// The form and query of a GET of one object: the form `Accept` asks, with the
    /// query's `includeObject`; a refusal (406, or 400 for a query that does not decode)
    /// as the response.
    pub(super) fn of_request(
        headers: &HeaderMap,
        query: Option<&str>,
    ) -> Result<(Form, Query), Box<Response>> {
        let form = Form::accepted(headers)
            .ok_or_else(|| Box::new(ApiError::not_acceptable().into_response()))?;
        let query =
            Query::parse(query.unwrap_or_default()).map_err(|e| Box::new(e.into_response()))?;
        Ok((form.including(query.include_object), query))
    }

    /// The form with the request's `includeObject`, which only a table reads.
    pub(super) fn including(self, include: Option<Include>) -> Form {
        match (self, include) {
            (Form::Table(_), Some(include)) => Form::Table(include),
            _ => self,
        }
    }

    /// Appends `version` in this form to `buf` (a table of one row, with its columns).
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
        with_columns: bool,
    ) {
        match self {
            Form::Full => version.write(buf, generator),
            Form::Metadata => version.write_metadata(buf, generator),
            Form::Table(include) => {
                table::write_one(buf, generator, version, include, with_columns);
            }
        }
    }

    /// A LIST body up to its first item, given its `metadata` as JSON.
    pub(super) fn list_head(self, kind: ObjectKind, metadata: &str) -> String {
        let (kind, api_version) = match self {
            Form::Full => (kind.as_str(), kind.api_version()),
            Form::Metadata => ("PartialObjectMetadata", "meta.k8s.io/v1"),
            Form::Table(_) => return table::list_head(kind, metadata),
        };
        format!(
            r#"{{"kind":"{kind}List","apiVersion":"{api_version}","metadata":{metadata},"items":["#
        )
    }

    /// The `kind` and `apiVersion` of a watch bookmark's object in this form; `None` for a
    /// table, whose bookmark is an empty Table.
    pub(super) fn bookmark_kind(self, kind: ObjectKind) -> Option<(&'static str, &'static str)> {
        match self {
            Form::Full => Some((kind.as_str(), kind.api_version())),
            Form::Metadata => Some(("PartialObjectMetadata", "meta.k8s.io/v1")),
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
            Form::Table(include) => table::write_row(buf, generator, version, include),
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
