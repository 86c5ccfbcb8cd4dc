//! Compiles Kubernetes' protobuf definitions (proto/, copied unchanged from k8s.io/api and
//! k8s.io/apimachinery v0.37.2) into a descriptor set the built-in apiserver reads its
//! `application/vnd.kubernetes.protobuf` bodies and writes its responses with
//! (src/protobuf). protox is a protobuf compiler in Rust: no protoc needed.

use std::path::PathBuf;

/// The files compiled; their imports are found under proto/.
const FILES: &[&str] = &[
    "k8s.io/api/core/v1/generated.proto",
    "k8s.io/api/apps/v1/generated.proto",
    "k8s.io/api/coordination/v1/generated.proto",
    "k8s.io/api/events/v1/generated.proto",
    "k8s.io/api/policy/v1/generated.proto",
    "k8s.io/api/authentication/v1/generated.proto",
    "k8s.io/api/authorization/v1/generated.proto",
    // Every other group version kube-apiserver serves by default, so that a sample of
    // any built-in kind (a Job, an Ingress, a Role) is served in protobuf as it is there.
    "k8s.io/api/admissionregistration/v1/generated.proto",
    "k8s.io/api/autoscaling/v1/generated.proto",
    "k8s.io/api/autoscaling/v2/generated.proto",
    "k8s.io/api/batch/v1/generated.proto",
    "k8s.io/api/certificates/v1/generated.proto",
    "k8s.io/api/discovery/v1/generated.proto",
    "k8s.io/api/flowcontrol/v1/generated.proto",
    "k8s.io/api/networking/v1/generated.proto",
    "k8s.io/api/node/v1/generated.proto",
    "k8s.io/api/rbac/v1/generated.proto",
    "k8s.io/api/resource/v1/generated.proto",
    "k8s.io/api/scheduling/v1/generated.proto",
    "k8s.io/api/storage/v1/generated.proto",
    "k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto",
];

fn main() {
    println!("cargo:rerun-if-changed=proto");
    let mut descriptors = protox::compile(FILES, ["proto"]).unwrap_or_else(|e| {
        panic!("proto/ does not compile: {e:?}");
    });
    // The comments and source positions: most of the set's bytes, and read by nothing
    // (a pool decoded with them held 10.9 MB more).
    for file in &mut descriptors.file {
        file.source_code_info = None;
    }
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let bytes = prost::Message::encode_to_vec(&descriptors);
    std::fs::write(out.join("kubernetes.descriptors"), bytes).expect("OUT_DIR is writable");
}
