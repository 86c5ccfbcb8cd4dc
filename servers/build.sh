#!/usr/bin/env bash
# Builds the real kube-apiserver's launcher (servers/kube-apiserver: kube-apiserver from
# k8s.io/kubernetes v1.37.2 with an embedded etcd and the namespace controller) into
#   target/servers/kube-apiserver
# Modules come through the Go module proxy, pinned by servers/kube-apiserver/go.sum. The
# first build on a machine takes about six minutes on two cores; Go caches it, so a
# second one takes seconds.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/target/servers"
mkdir -p "$out"
cd "$root/servers/kube-apiserver"
# The version kube-apiserver reports at /version (a module build has none of its own).
version="$(go list -m -f '{{.Version}}' k8s.io/kubernetes)"
minor="$(echo "$version" | cut -d. -f2)"
pkg=k8s.io/component-base/version
# -mod=readonly: a go.mod or go.sum that does not match the source fails the build
# instead of being rewritten.
go build -mod=readonly \
    -ldflags "-X $pkg.gitVersion=$version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor" \
    -o "$out/kube-apiserver" .
echo "built $out/kube-apiserver (kube-apiserver $version)"
# crates/apiserver/proto/openapi/ holds the schemas `serve` gives kubectl explain, printed from this
# kube-apiserver's documents: they must say what they say.
for group in core:api__v1 apps:apis__apps__v1 coordination:apis__coordination.k8s.io__v1 \
    events:apis__events.k8s.io__v1 others:other-groups; do
    go run -mod=readonly ./openapischemas "${group%%:*}" \
        | cmp -s - "$root/crates/apiserver/proto/openapi/${group#*:}.json" \
        || { echo "error: crates/apiserver/proto/openapi/${group#*:}.json is not what servers/kube-apiserver/openapischemas prints" >&2; exit 1; }
done
