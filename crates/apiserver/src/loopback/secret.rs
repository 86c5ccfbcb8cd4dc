//! The secret a run's loopback endpoint asks of every request. The port is open to every
//! local user and process; the secret is not: it is given only to the program (its
//! kubeconfig, 0600 in the run's private scratch folder, and its placeholders), so a
//! request without it is not the program's and gets kube-apiserver's 401.
//!
//! A request carries it as the first segment of its path: the server's URL is
//! `http://127.0.0.1:PORT/<secret>`, a base path every client joins its paths to
//! (client-go, controller-runtime, the Node.js, Java and Python clients, kubectl), and
//! the only way to reach client-go over plain HTTP, where it sends no credentials at all
//! (clientcmd reads a kubeconfig's user only for an `https://` server). A bearer token
//! in `Authorization` (or a WebSocket's bearer subprotocol) is taken too.

use std::fmt;
use std::sync::Arc;

use http::{HeaderMap, header};

/// The subprotocol a WebSocket client (a browser, which cannot set a header) passes its
/// bearer token in, base64url-encoded, as kube-apiserver reads it.
const BEARER_PROTOCOL_PREFIX: &str = "base64url.bearer.authorization.k8s.io.";

/// Random bytes in a secret: 256 bits, as a service account token's signing key.
const SECRET_BYTES: usize = 32;

/// A run's bearer token, random and never printed.
#[derive(Clone)]
pub struct Secret(Arc<str>);

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(..)")
    }
}

impl Secret {
    /// A new secret from the operating system's random source.
    pub fn new() -> std::io::Result<Secret> {
        let mut bytes = [0u8; SECRET_BYTES];
        getrandom::fill(&mut bytes).map_err(std::io::Error::other)?;
        let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        Ok(Secret(hex.into()))
    }

    /// The token, for the program's kubeconfig (and `{token}`).
    pub fn token(&self) -> &str {
        &self.0
    }

    /// Whether `request` carries the secret; one that carries it as its path's first
    /// segment is rewritten to the path after it, as the server serves it.
    pub fn admit<B>(&self, request: &mut http::Request<B>) -> bool {
        let uri = request.uri();
        let path = uri.path();
        let first = path[1.min(path.len())..]
            .split('/')
            .next()
            .unwrap_or_default();
        if !self.is(first.as_bytes()) {
            return self.admits(request.headers());
        }
        let rest = match &path[1 + first.len()..] {
            "" => "/",
            rest => rest,
        };
        let rewritten = match uri.query() {
            Some(query) => format!("{rest}?{query}"),
            None => rest.to_owned(),
        };
        match rewritten.parse() {
            Ok(rewritten) => {
                *request.uri_mut() = rewritten;
                true
            }
            Err(_) => false,
        }
    }

    /// Whether a request with `headers` carries the secret: `Authorization: Bearer
    /// <token>`, or a WebSocket handshake's bearer subprotocol.
    pub fn admits(&self, headers: &HeaderMap) -> bool {
        let bearer = headers
            .get_all(header::AUTHORIZATION)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .filter_map(|v| v.strip_prefix("Bearer "))
            .any(|token| self.is(token.trim().as_bytes()));
        bearer || self.in_protocols(headers)
    }

    fn in_protocols(&self, headers: &HeaderMap) -> bool {
        use base64::Engine;
        let engine = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        headers
            .get_all(header::SEC_WEBSOCKET_PROTOCOL)
            .iter()
            .flat_map(|v| v.to_str().unwrap_or_default().split(','))
            .filter_map(|p| p.trim().strip_prefix(BEARER_PROTOCOL_PREFIX))
            .filter_map(|encoded| engine.decode(encoded.trim_end_matches('=')).ok())
            .any(|token| self.is(&token))
    }

    /// Compared in time that does not depend on where the first difference is.
    fn is(&self, given: &[u8]) -> bool {
        let own = self.0.as_bytes();
        given.len() == own.len() && own.iter().zip(given).fold(0u8, |d, (a, b)| d | (a ^ b)) == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(header::HeaderName, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(name.clone(), value.parse().unwrap());
        }
        map
    }

    #[test]
    fn only_the_runs_own_token_is_admitted() {
        let secret = Secret::new().unwrap();
        let other = Secret::new().unwrap();
        assert_ne!(secret.token(), other.token());
        assert_eq!(secret.token().len(), 2 * SECRET_BYTES);
        let bearer = |t: &str| headers(&[(header::AUTHORIZATION, &format!("Bearer {t}"))]);
        assert!(secret.admits(&bearer(secret.token())));
        assert!(!secret.admits(&bearer(other.token())));
        assert!(!secret.admits(&bearer(&secret.token()[1..])));
        assert!(!secret.admits(&bearer("")));
        assert!(!secret.admits(&HeaderMap::new()));
        let basic = headers(&[(header::AUTHORIZATION, &format!("Basic {}", secret.token()))]);
        assert!(!secret.admits(&basic));
    }

    #[test]
    fn a_websocket_client_may_pass_it_as_a_subprotocol() {
        use base64::Engine;
        let secret = Secret::new().unwrap();
        let encoded =
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(secret.token().as_bytes());
        let asked = format!("{BEARER_PROTOCOL_PREFIX}{encoded}, v5.channel.k8s.io");
        assert!(secret.admits(&headers(&[(header::SEC_WEBSOCKET_PROTOCOL, &asked)])));
        let wrong = format!("{BEARER_PROTOCOL_PREFIX}{encoded}x");
        assert!(!secret.admits(&headers(&[(header::SEC_WEBSOCKET_PROTOCOL, &wrong)])));
    }

    #[test]
    fn a_path_under_the_secret_is_served_as_the_path_after_it() {
        let secret = Secret::new().unwrap();
        let token = secret.token().to_owned();
        let admitted = |uri: &str| {
            let mut request = http::Request::get(uri).body(()).unwrap();
            secret
                .admit(&mut request)
                .then(|| request.uri().to_string())
        };
        assert_eq!(
            admitted(&format!("/{token}/api/v1/pods?watch=1")).as_deref(),
            Some("/api/v1/pods?watch=1")
        );
        assert_eq!(admitted(&format!("/{token}")).as_deref(), Some("/"));
        assert_eq!(admitted(&format!("/{token}/")).as_deref(), Some("/"));
        assert_eq!(admitted("/api/v1/pods"), None);
        assert_eq!(admitted(&format!("/{}/api/v1/pods", &token[1..])), None);
        assert_eq!(admitted(&format!("/{token}x/api/v1/pods")), None);
        assert_eq!(admitted(&format!("/api/{token}/v1/pods")), None);
        // A bearer token leaves the path as it is.
        let mut request = http::Request::get("/api/v1/pods")
            .header(header::AUTHORIZATION, format!("Bearer {token}"))
            .body(())
            .unwrap();
        assert!(secret.admit(&mut request));
        assert_eq!(request.uri(), "/api/v1/pods");
    }

    #[test]
    fn it_is_never_printed() {
        let secret = Secret::new().unwrap();
        assert!(!format!("{secret:?}").contains(secret.token()));
    }
}
