// Command protowire writes the JSON object on its standard input as kube-apiserver writes
// it in protobuf (application/vnd.kubernetes.protobuf): decoded into its Go type by
// client-go's scheme, encoded by apimachinery's protobuf serializer. CI compares it byte
// for byte with what the built-in apiserver sends (.ci/protobuf-against-go).
//
// Usage: curl -s SERVER/api/v1/namespaces/NS/pods/NAME | protowire > pod.pb
package main

import (
	"io"
	"log"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"
)

func main() {
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
