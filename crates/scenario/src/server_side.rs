//! `[[variant]]`'s server-side keys: what the apiserver of the variant's process does
//! beside serving the informer (`watchers`, `share_encodings`).

use serde::{Deserialize, Serialize};

use super::error::{Problem, int_in};
use super::raw::RawVariant;

/// The apiserver's side of a variant's process: other clients watching beside the
/// informer, and how the server encodes watch events. Not in [`VariantConfig`]: the
/// informer never reads it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ServerSide {
    /// Plain watches opened beside the informer when it starts, each reading every event
    /// and dropping it (as `kubectl get -w` or a cheap controller does).
    #[serde(skip_serializing_if = "is_zero")]
    pub watchers: u32,
    /// The server encodes each watch event once and sends the same bytes to every watcher
    /// (KEP-1152, kube-apiserver since v1.17); otherwise each watcher's event is encoded
    /// on its own.
    #[serde(skip_serializing_if = "is_false")]
    pub share_encodings: bool,
}

impl ServerSide {
    /// Most plain watchers a variant may open.
    const MAX_WATCHERS: u64 = 1000;

    /// Whether nothing is set: a report leaves it out.
    pub fn is_default(&self) -> bool {
        *self == ServerSide::default()
    }

    /// `watchers` and `share_encodings` of a built-in variant.
    pub(super) fn from_raw(
        raw: &RawVariant,
        key: &impl Fn(&str) -> String,
    ) -> Result<ServerSide, Problem> {
        Ok(ServerSide {
            watchers: match &raw.watchers {
                Some(v) => int_in(v, &key("watchers"), 0, Self::MAX_WATCHERS)? as u32,
                None => 0,
            },
            share_encodings: raw.share_encodings.unwrap_or(false),
        })
    }
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

fn is_false(b: &bool) -> bool {
    !*b
}
