//! HTTP plumbing charged to a [`Component`]: a hyper executor whose connection tasks are
//! the component's, and a tower service whose calls and response futures are. A client
//! built from both charges all its work to one component, whichever task drives it: the
//! built-in apiserver's in-memory transport and the real server's client use them alike.

use std::future::Future;
use std::task::{Context, Poll};

use super::alloc::{self, Attributed, Component};

/// hyper's executor: spawns on tokio, charged to a component.
#[derive(Debug, Clone, Copy)]
pub struct Spawner(pub Component);

impl<F> hyper::rt::Executor<F> for Spawner
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    fn execute(&self, future: F) {
        self.0.spawn(future);
    }
}

/// A tower service whose readiness checks, calls and response futures are charged to a
/// component, whichever task drives them.
#[derive(Debug, Clone)]
pub struct Attribute<S> {
    /// Who pays.
    pub component: Component,
    /// The service charged.
    pub inner: S,
}

impl<S, R> tower::Service<R> for Attribute<S>
where
    S: tower::Service<R>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Attributed<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        let _entered = alloc::enter(self.component);
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: R) -> Self::Future {
        let _entered = alloc::enter(self.component);
        self.component.attribute(self.inner.call(request))
    }
}
