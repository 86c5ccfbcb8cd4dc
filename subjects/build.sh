#!/usr/bin/env bash
# Builds the shipped subjects (external variants' programs):
#   target/subjects/client-go-v0.27   client-go v0.27.16 (go.v027.mod): its reflector keeps
#                                     a LIST's array
#   target/subjects/client-go-v0.37   client-go v0.37.2 (go.mod), the newest the module
#                                     proxy serves
#   target/subjects/podsize          one object's client-go heap, decoded from JSON and
#                                     from protobuf, with and without managedFields
#   target/subjects/controller-runtime
#                                     a controller-runtime v0.25.2 manager (client-go
#                                     v0.37.2) with one controller reading its cache
#   subjects/node/node_modules        @kubernetes/client-node 1.4.0 for informer.mjs
#                                     (package-lock.json), from the npm registry
#   target/subjects/fabric8/          fabric8 kubernetes-client 8.0.0's informer (Java 17,
#                                     subjects/fabric8/pom.xml), its jar beside its
#                                     dependencies' from Maven Central
#   target/subjects/kube-scheduler    kube-scheduler v1.37.2, unmodified: a component that
#                                     caches 19 resources and serves pprof only on its
#                                     secure port; k8s.io/kubernetes as servers/kube-apiserver
#                                     pins it (its go.mod and go.sum)
# Go modules come through the Go module proxy, pinned by the go.sum files beside the
# go.mod files; Go caches the builds, so a second run takes seconds.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
# The Go sources are gofmt's layout, as the Rust sources are rustfmt's.
unformatted="$(gofmt -l "$root/subjects")"
if [ -n "$unformatted" ]; then
    echo "error: gofmt would change: $unformatted" >&2
    exit 1
fi
out="$root/target/subjects"
mkdir -p "$out"
cd "$root/subjects/client-go"
# -mod=readonly: a go.mod or go.sum that does not match the source fails the build
# instead of being rewritten.
go vet .
go build -mod=readonly -modfile=go.v027.mod -o "$out/client-go-v0.27" .
go build -mod=readonly -o "$out/client-go-v0.37" .
go build -mod=readonly -o "$out/podsize" ./podsize
go build -mod=readonly -o "$out/protowire" ./protowire
# crates/apiserver/proto/go-fields.tsv is printed from the pinned k8s.io/api: it must say what they say.
go run -mod=readonly ./protofields | cmp -s - "$root/crates/apiserver/proto/go-fields.tsv" \
    || { echo "error: crates/apiserver/proto/go-fields.tsv is not what subjects/client-go/protofields prints" >&2; exit 1; }
cd "$root/subjects/controller-runtime"
go vet .
go build -mod=readonly -o "$out/controller-runtime" .
cd "$root/servers/kube-apiserver"
go build -mod=readonly -o "$out/kube-scheduler" k8s.io/kubernetes/cmd/kube-scheduler
echo "built $(ls "$out" | tr '\n' ' ')in $out"
cd "$root/subjects/node"
npm ci --no-audit --no-fund --silent
echo "installed @kubernetes/client-node for subjects/node/informer.mjs"
cd "$root/subjects/fabric8"
mvn -q -B -Dstyle.color=never package
echo "built target/subjects/fabric8 (fabric8 kubernetes-client, Java $(java -version 2>&1 | awk -F'"' 'NR==1 {print $2}'))"
