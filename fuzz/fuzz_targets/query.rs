//! The built-in apiserver's query and selector parsers on any bytes, through the router
//! as a client's request reaches them: every answer is a success or a `Status` with a
//! client error (or kube-apiserver's 504 for a resourceVersion from the future), never a
//! panic or a 500; a selector that parses prints back to itself.
#![no_main]

use axum::body::Body;
use axum::http::Request;
use apiserver::{ApiServer, router};
use k8s::{FieldSelector, LabelSelector};
use scenario::ObjectSpec;
use libfuzzer_sys::fuzz_target;
use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use tower::ServiceExt;

thread_local! {
    static RUNTIME: tokio::runtime::Runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a runtime");
    static SERVER: ApiServer = ApiServer::new(ObjectSpec::pods(30));
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    if let Ok(selector) = LabelSelector::parse(text) {
        let again = LabelSelector::parse(&selector.to_string()).expect("printed selectors parse");
        assert_eq!(again, selector, "{text:?} -> {selector}");
    }
    let _ = FieldSelector::parse(text);
    let encoded = utf8_percent_encode(text, NON_ALPHANUMERIC).to_string();
    let query = match mode % 5 {
        // As written: only what is a valid URI reaches a route.
        0 => text.to_owned(),
        1 => format!("labelSelector={encoded}&limit=5"),
        2 => format!("fieldSelector={encoded}"),
        3 => format!("limit=2&continue={encoded}"),
        _ => format!("resourceVersion={encoded}&resourceVersionMatch=Exact&limit=3"),
    };
    let path = if mode & 0x80 == 0 {
        "/api/v1/pods"
    } else {
        "/api/v1/namespaces/default/pods"
    };
    let Ok(request) = Request::get(format!("{path}?{query}")).body(Body::empty()) else {
        return;
    };
    let server = SERVER.with(ApiServer::clone);
    RUNTIME.with(|runtime| {
        runtime.block_on(async {
            let response = router(server).oneshot(request).await.expect("infallible");
            let status = response.status();
            // 504 is kube-apiserver's answer to a resourceVersion from the future
            // ("Too large resource version"); any other server error is a bug.
            assert!(
                !status.is_server_error() || status.as_u16() == 504,
                "{query:?}: {status}"
            );
            if status.is_client_error() || status.is_server_error() {
                let bytes = axum::body::to_bytes(response.into_body(), 1 << 20)
                    .await
                    .expect("an error body is small");
                let body: serde_json::Value =
                    serde_json::from_slice(&bytes).expect("an error is JSON");
                assert_eq!(body["kind"], "Status", "{query:?}: {body}");
                assert_eq!(body["code"], status.as_u16(), "{query:?}: {body}");
            }
            // Success bodies (a LIST, or a WATCH that streams until its timeout) are not
            // read: the parsers are what is fuzzed.
        })
    });
});
