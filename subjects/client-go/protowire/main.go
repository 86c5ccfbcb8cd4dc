// Command protowire writes the JSON object on its standard input as kube-apiserver writes
// it in protobuf (application/vnd.kubernetes.protobuf): decoded into its Go type by
// client-go's scheme, encoded by apimachinery's protobuf serializer. CI compares it byte
// for byte with what the built-in apiserver sends (.ci/protobuf-against-go).
//
// Usage: curl -s SERVER/api/v1/namespaces/NS/pods/NAME | protowire > pod.pb
//
// Metadata-only objects and lists (meta.k8s.io/v1 PartialObjectMetadata and
// PartialObjectMetadataList, what a metadata informer reads) are read too.
package main

import (
	"io"
	"log"
	"os"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"
)

func main() {
	// kube-apiserver's scheme has the meta.k8s.io kinds; client-go's has them only in
	// its metadata client.
	if err := metav1.AddMetaToScheme(scheme.Scheme); err != nil {
		log.Fatal(err)
	}
	in, err := io.ReadAll(os.Stdin)
	if err != nil {
		log.Fatal(err)
	}
	object, _, err := scheme.Codecs.UniversalDeserializer().Decode(in, nil, nil)
	if err != nil {
		log.Fatalf("decoding the JSON: %v", err)
	}
	// The serializer writes the envelope's apiVersion and kind from the object's TypeMeta,
	// which decoding into a typed object clears.
	kinds, _, err := scheme.Scheme.ObjectKinds(object)
	if err != nil {
		log.Fatal(err)
	}
	object.GetObjectKind().SetGroupVersionKind(kinds[0])
	serializer := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)
	if err := serializer.Encode(object, os.Stdout); err != nil {
		log.Fatalf("encoding: %v", err)
	}
	var _ runtime.Object = object
}
