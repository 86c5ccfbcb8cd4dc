//! TLS to a program's own endpoints. A Kubernetes component serves pprof only on its
//! secure port, with a certificate it made for itself when it started, signed by no one
//! the run knows. The run reads such an endpoint on loopback only, where the program at
//! the other end is the one it started: there the certificate is taken as it is (its
//! signature of the handshake is still checked), and anywhere else the connection is
//! refused, saying why.

use std::net::IpAddr;
use std::sync::Arc;

use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::connect::HttpConnector;
use rustls::DigitallySignedStruct;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};

/// A connector for `http://` and `https://` URLs, the latter to loopback only.
pub(super) fn connector() -> HttpsConnector<HttpConnector> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier = LoopbackOnly {
        algorithms: provider.signature_verification_algorithms,
    };
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("ring supports the default TLS versions")
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth();
    hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(config)
        .https_or_http()
        .enable_http1()
        .build()
}

/// Takes any certificate from a loopback address, none from anywhere else.
#[derive(Debug)]
struct LoopbackOnly {
    algorithms: WebPkiSupportedAlgorithms,
}

/// Whether `name` is this machine: a loopback address, or `localhost`.
fn is_loopback(name: &ServerName<'_>) -> bool {
    match name {
        ServerName::IpAddress(ip) => IpAddr::from(*ip).is_loopback(),
        ServerName::DnsName(dns) => dns.as_ref().eq_ignore_ascii_case("localhost"),
        _ => false,
    }
}

impl ServerCertVerifier for LoopbackOnly {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        if is_loopback(server_name) {
            Ok(ServerCertVerified::assertion())
        } else {
            Err(rustls::Error::General(format!(
                "an https:// endpoint of the program is read on loopback only (its \
                 certificate is taken unchecked), not at {}",
                server_name.to_str()
            )))
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_this_machine_is_trusted_without_a_check() {
        let name = |n: &str| ServerName::try_from(n.to_owned()).unwrap();
        for here in ["127.0.0.1", "127.3.2.1", "::1", "localhost", "LOCALHOST"] {
            assert!(is_loopback(&name(here)), "{here}");
        }
        for elsewhere in [
            "10.0.0.1",
            "192.168.1.2",
            "example.com",
            "localhost.example.com",
        ] {
            assert!(!is_loopback(&name(elsewhere)), "{elsewhere}");
        }
    }
}
