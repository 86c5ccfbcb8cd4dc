//! The health probes: `/livez`, `/readyz` and `/healthz` (the one deprecated since 1.16),
//! which scripts, test harnesses and load balancers wait on before they talk to a server.
//! Answered as kube-apiserver answers them (k8s.io/apiserver `pkg/server/healthz`, checked
//! by hand against v1.37.2):
//!
//! - `/livez`: `ok`, text, to any method; with `?verbose` (whatever its value) a line per
//!   check, `[+]ping ok`, then `livez check passed`;
//! - `?exclude=NAME` (repeatable) skips a check, `[+]NAME excluded: ok`, and names the
//!   server does not have get one `warn: ... no matches for "a", "b"` line;
//! - `/livez/ping`: that one check, `ok`; a check the server does not have is a plain-text
//!   404 (`404 page not found`), as Go's mux answers.
//!
//! The checks are the ones that mean something here: `ping`, and `etcd`, the store behind
//! the server, which for the built-in server is in memory and always answers. None fails:
//! the server answers the probes once it listens, and stops listening when it stops.

use axum::Router;
use axum::extract::{Path, RawQuery};
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::any;

use super::status::{nosniff, page_not_found, text};

/// The checks every probe runs, in the order a verbose answer lists them.
const CHECKS: [&str; 2] = ["ping", "etcd"];

/// The probes' paths (without the slash), each the name its verbose answer ends with.
const PROBES: [&str; 3] = ["livez", "readyz", "healthz"];

/// `router` with the probes' routes.
pub fn routes<S: Clone + Send + Sync + 'static>(mut router: Router<S>) -> Router<S> {
    for probe in PROBES {
        router =
            router
                .route(
                    &format!("/{probe}"),
                    any(move |RawQuery(query): RawQuery| async move {
                        all_checks(probe, query.as_deref())
                    }),
                )
                .route(&format!("/{probe}/{{check}}"), any(one_check))
                // None named: Go's mux answers as for a check the server does not have.
                .route(&format!("/{probe}/"), any(async || page_not_found()));
    }
    router
}

/// Every probe's path and each of its checks' (`/livez`, `/livez/ping`, ...), as the
/// server's index (`/`) lists them.
pub fn paths() -> impl Iterator<Item = String> {
    PROBES.into_iter().flat_map(|probe| {
        let checks = CHECKS.map(|check| format!("/{probe}/{check}"));
        std::iter::once(format!("/{probe}")).chain(checks)
    })
}

/// `/{probe}`: every check, tersely unless `verbose` is asked for.
fn all_checks(probe: &str, query: Option<&str>) -> Response {
    let mut verbose = false;
    let mut excluded = Vec::new();
    for (key, value) in form_urlencoded::parse(query.unwrap_or("").as_bytes()) {
        match &*key {
            "verbose" => verbose = true,
            "exclude" => excluded.push(value.into_owned()),
            _ => {}
        }
    }
    let body = if verbose {
        verbose_answer(probe, excluded)
    } else {
        "ok".to_owned()
    };
    nosniff(text(StatusCode::OK, body))
}

/// The verbose answer: a line per check, excluded or passed, a warning naming the
/// exclusions that match no check (sorted, as Go's string set lists them), and the verdict.
fn verbose_answer(probe: &str, mut excluded: Vec<String>) -> String {
    let mut out = String::new();
    for check in CHECKS {
        if excluded.iter().any(|e| e == check) {
            excluded.retain(|e| e != check);
            out.push_str(&format!("[+]{check} excluded: ok\n"));
        } else {
            out.push_str(&format!("[+]{check} ok\n"));
        }
    }
    excluded.sort();
    excluded.dedup();
    if !excluded.is_empty() {
        let quoted: Vec<String> = excluded.iter().map(|e| format!("{e:?}")).collect();
        out.push_str(&format!(
            "warn: some health checks cannot be excluded: no matches for {}\n",
            quoted.join(", ")
        ));
    }
    out.push_str(&format!("{probe} check passed\n"));
    out
}

/// `/{probe}/{check}`: one check's answer, or Go's plain 404 for a check not installed.
async fn one_check(Path(check): Path<String>) -> Response {
    if CHECKS.contains(&check.as_str()) {
        text(StatusCode::OK, "ok".to_owned())
    } else {
        page_not_found()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::header;

    use crate::ApiServer;
    use crate::generate::test_spec;

    /// Sends `method uri` through the built-in server's whole router: its code, whether it
    /// said `nosniff`, and its text.
    async fn probe(method: &str, uri: &str) -> (u16, bool, String) {
        use tower::ServiceExt;
        let request = axum::http::Request::builder()
            .method(method)
            .uri(uri)
            .body(axum::body::Body::empty())
            .unwrap();
        let response = crate::routes::network_router(ApiServer::new(test_spec()))
            .oneshot(request)
            .await
            .unwrap();
        assert_eq!(
            response.headers()[header::CONTENT_TYPE],
            "text/plain; charset=utf-8",
            "{uri}"
        );
        let nosniff = response
            .headers()
            .contains_key(header::X_CONTENT_TYPE_OPTIONS);
        let code = response.status().as_u16();
        let body = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        (code, nosniff, String::from_utf8(body.to_vec()).unwrap())
    }

    #[tokio::test]
    async fn the_probes_answer_as_kube_apiservers_do() {
        for probe_path in ["/livez", "/readyz", "/healthz"] {
            for method in ["GET", "POST", "DELETE"] {
                assert_eq!(
                    probe(method, probe_path).await,
                    (200, true, "ok".to_owned()),
                    "{method} {probe_path}"
                );
            }
        }
        // `verbose` whatever its value, as Go looks only for the key.
        assert_eq!(
            probe("GET", "/readyz?verbose=false&exclude=ping").await,
            (
                200,
                true,
                "[+]ping excluded: ok\n[+]etcd ok\nreadyz check passed\n".to_owned()
            )
        );
        assert_eq!(
            probe("GET", "/livez/etcd?verbose").await,
            (200, false, "ok".to_owned())
        );
        let not_found = (404, true, "404 page not found\n".to_owned());
        for uri in ["/readyz/informer-sync", "/livez/", "/healthz/log"] {
            assert_eq!(probe("GET", uri).await, not_found, "{uri}");
        }
    }

    #[test]
    fn a_verbose_answer_lists_the_checks_the_exclusions_and_the_verdict() {
        assert_eq!(
            verbose_answer("livez", Vec::new()),
            "[+]ping ok\n[+]etcd ok\nlivez check passed\n"
        );
        let excluded = ["zeta", "etcd", "alpha", "zeta"].map(String::from).to_vec();
        assert_eq!(
            verbose_answer("readyz", excluded),
            "[+]ping ok\n[+]etcd excluded: ok\n\
             warn: some health checks cannot be excluded: no matches for \"alpha\", \"zeta\"\n\
             readyz check passed\n"
        );
    }
}
