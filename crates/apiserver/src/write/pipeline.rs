//! One way to write an object, for the scenario's kind and the records alike: a create,
//! replace, patch or server-side apply makes its object of the live one, and the object
//! then goes through the steps kube-apiserver's handlers and registry take, in their
//! order: admission (a create's namespace, an update's preconditions), what the kind's
//! strategy resets before the field manager, the writer's managedFields, admission's
//! defaults and the strategy's preparation, validation, the fields the server owns, and
//! whether the update deletes the object (it emptied the finalizers of one being
//! deleted). What differs between kinds is their [`Registry`]: the scenario's kind's
//! ([`ObjectKind`], [`super`]) and each record's ([`crate::records`]). Storage is the
//! store's: the scenario's objects are the state's generated records, the records a map
//! of their own; each runs [`written`] under its own lock and stores what it returns.

use serde_json::Value;

use super::{
    BodyWire, Endpoint, FieldValidation, check_preconditions, decode_as, duplicated_fields, now,
    unsupported_media_type,
};
use crate::ApiServer;
use crate::apply::{self, Typed};
use crate::status::ApiError;
use crate::version::NamespacedName;

/// The live object a write finds: as the request's version has it (what the writer's
/// body and the field manager see), and as it is kept (what validation and the server's
/// fields compare with). They are one object for every kind but the Events of
/// `events.k8s.io/v1`, which are kept in `v1`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Live<'a> {
    pub(crate) seen: &'a Value,
    pub(crate) kept: &'a Value,
}

impl<'a> Live<'a> {
    /// A live object kept as its writers see it.
    pub(crate) fn same(object: &'a Value) -> Live<'a> {
        Live {
            seen: object,
            kept: object,
        }
    }
}

/// A kind as a write meets it: the type its body is decoded and normalized as.
pub(crate) trait Kind {
    /// The resource's name in messages: `pods`, `leases`.
    fn resource_name(&self) -> &'static str;

    /// The `apiVersion` and `kind` a body of it carries (filled in where it has none).
    fn type_meta(&self) -> (&str, &str);

    /// The kind's schema, which the field manager and patches read.
    fn typed(&self) -> Typed<'_>;

    /// Whether a body may come in protobuf (a custom resource's may not).
    fn reads_protobuf(&self) -> bool {
        true
    }

    /// `object` through the kind's type: field types checked, unknown fields dealt with
    /// as `validation` says, the type's defaults and Go's zero fields.
    fn normalized(
        &self,
        object: Value,
        validation: FieldValidation,
        warnings: &mut Vec<String>,
    ) -> Result<Value, ApiError>;
}

/// A create's or replace's body as JSON, of `kind`: keys set twice in one JSON object
/// are refused under strict field validation and warned of under the default, as
/// kube-apiserver does (serde_json alone would keep the last silently); `apiVersion`
/// and `kind` checked against the endpoint's.
pub(crate) fn decoded<K: Kind>(
    kind: &K,
    body: &[u8],
    wire: BodyWire,
    (validation, warnings): (FieldValidation, &mut Vec<String>),
) -> Result<Value, ApiError> {
    if wire == BodyWire::Protobuf && !kind.reads_protobuf() {
        // As kube-apiserver refuses protobuf for a custom resource.
        return Err(unsupported_media_type(
            "the body of the request was in an unknown format (application/vnd.kubernetes.protobuf) - accepted media types include: application/json, application/yaml",
        ));
    }
    duplicated_fields(body, wire, validation, warnings)?;
    let (api_version, kind) = kind.type_meta();
    decode_as(api_version, kind, body, wire)
}

/// What a kind's registry does to a write (kube-apiserver's strategy for it), step by
/// step; [`written`] runs the steps in order.
pub(crate) trait Registry {
    /// The kind it writes.
    type Kind: Kind;

    fn kind(&self) -> &Self::Kind;

    /// What an update must pass beyond the preconditions its object carries.
    fn admit_update(
        &self,
        _key: &NamespacedName,
        _object: &Value,
        _live: &Value,
    ) -> Result<(), ApiError> {
        Ok(())
    }

    /// What the strategy resets before the field manager sees the write, whose changes
    /// are then nobody's (`live`: the object as the writer sees it).
    fn reset(&self, object: Value, _live: Option<&Value>, _endpoint: Endpoint) -> Value {
        object
    }

    /// Admission's defaults and the strategy's preparation of the object, after the
    /// field manager made its managedFields: what the server then validates.
    fn prepared(
        &self,
        object: Value,
        live: Option<Live<'_>>,
        key_and_uid: (&NamespacedName, &str),
        endpoint: Endpoint,
    ) -> Result<Value, ApiError>;

    /// The kind's validation of `object`, an update's against the `kept` object.
    fn validate(
        &self,
        key: &NamespacedName,
        object_and_kept: (&Value, Option<&Value>),
        endpoint: Endpoint,
    ) -> Result<(), ApiError>;

    /// `object` with what the server owns set (identity, timestamps, generation, the
    /// status a write to the object does not write).
    fn finish(&self, object: Value, kept: Option<&Value>, uid: &str, endpoint: Endpoint) -> Value;
}

/// What a write may find under its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Finds {
    /// A create (POST): the object is new, and one of its name already there is a
    /// conflict (409), found after validation, as kube-apiserver's storage finds it.
    New,
    /// An update of the live object: 404 where there is none.
    Live,
    /// The live object, or none, and the write creates it: an apply through the object's
    /// path, a PUT of a kind whose strategy creates on update.
    Either,
}

/// One write to the object `key`: where it lands, what it may find there, through which
/// endpoint, by whom.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Target<'a> {
    pub(crate) server: &'a ApiServer,
    pub(crate) key: &'a NamespacedName,
    pub(crate) finds: Finds,
    pub(crate) endpoint: Endpoint,
    pub(crate) writer: apply::Writer<'a>,
}

/// What a write's body makes of the live object: the object, and the managedFields an
/// apply made with it (`None`: the field manager makes the update's).
pub(crate) type Made = (Value, Option<Vec<Value>>);

/// What a write does to its store, the same for every store.
#[derive(Debug)]
pub(crate) enum Change {
    /// The object is new: store it.
    Create(Value),
    /// Store the live object's next version.
    Update(Value),
    /// The update changes nothing: nothing is written (no resourceVersion, no event), as
    /// kube-apiserver's storage skips it, and the answer is the live object.
    Unchanged(Value),
    /// The update emptied the finalizers of an object being deleted: the object goes (as
    /// it was kept: its DELETED event still lists them), and the answer is the object
    /// the update made (kube-apiserver's `deleteWithoutFinalizers`).
    Delete(Value),
}

/// Runs one write through `registry`'s steps: `found` is the object under its key, if
/// any, `new` makes the write's object of the live one (`None` for a create), `uid` is
/// the object's (the new one's for a create). An update's object carries the live one's
/// resourceVersion. A refusal at any step stores nothing.
pub(crate) fn written<R: Registry>(
    registry: &R,
    target: Target<'_>,
    (found, uid): (Option<Live<'_>>, &str),
    new: impl FnOnce(Option<&Value>) -> Result<Made, ApiError>,
) -> Result<Change, ApiError> {
    let Target {
        server,
        key,
        finds,
        endpoint,
        writer,
    } = target;
    let resource = registry.kind().resource_name();
    let live = match (finds, found) {
        (Finds::Live, None) => return Err(ApiError::no_such(resource, &key.name)),
        (Finds::New, _) => None,
        (_, found) => found,
    };
    let seen = live.map(|live| live.seen);
    let (object, entries) = new(seen)?;
    match seen {
        None => server.admit_create(resource, &key.namespace, &object)?,
        Some(seen) => {
            check_preconditions(resource, key, &object, seen)?;
            registry.admit_update(key, &object, seen)?;
        }
    }
    let mut object = registry.reset(object, seen, endpoint);
    let entries = entries.unwrap_or_else(|| {
        apply::update_of(&registry.kind().typed(), seen, &object, writer, &now())
    });
    object["metadata"]["managedFields"] = Value::Array(entries);
    let object = registry.prepared(object, live, (key, uid), endpoint)?;
    let kept = live.map(|live| live.kept);
    registry.validate(key, (&object, kept), endpoint)?;
    let object = registry.finish(object, kept, uid, endpoint);
    if finds == Finds::New && found.is_some() {
        return Err(ApiError::already_exists(resource, &key.name));
    }
    let Some(kept) = kept else {
        return Ok(Change::Create(object));
    };
    let mut object = object;
    object["metadata"]["resourceVersion"] = kept["metadata"]["resourceVersion"].clone();
    Ok(if super::emptied(&object, kept) {
        Change::Delete(object)
    } else if object == *kept {
        Change::Unchanged(object)
    } else {
        Change::Update(object)
    })
}
