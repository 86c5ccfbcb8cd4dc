//! Who a block of memory is charged to: the informer under test, the built-in apiserver,
//! or the harness around them.

use serde::{Deserialize, Serialize};

/// Who a block of memory is charged to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Component {
    /// The process around the other two: the runtime, the phase driver, the measurement.
    Harness = 0,
    /// The informer under test, its HTTP client included.
    Informer = 1,
    /// The built-in apiserver.
    ApiServer = 2,
}

impl Component {
    /// Every component, in report order.
    pub const ALL: [Component; 3] = [
        Component::Informer,
        Component::ApiServer,
        Component::Harness,
    ];
}
