// Command podsize measures what one object costs client-go's heap, apart from any informer:
// it decodes the object N times, as client-go's JSON serializer and as protobuf do, keeps
// every copy, and prints the live heap per copy (after forced collections), with and
// without metadata.managedFields. An independent check of the figures `informer-mem run`
// reads from a client-go program's pprof.
//
// Usage: curl -s SERVER/api/v1/namespaces/NS/pods/NAME | go run ./podsize [-n 5000]
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"runtime"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/kubernetes/scheme"
)

// liveHeap is HeapAlloc after two collections (sync.Pool's victim cache survives one).
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// perCopy keeps n objects made by decode and returns the live heap each one adds.
func perCopy(n int, decode func() *corev1.Pod, strip bool) float64 {
	kept := make([]*corev1.Pod, n)
	before := liveHeap()
	for i := range kept {
		pod := decode()
		if strip {
			pod.ManagedFields = nil
		}
		kept[i] = pod
	}
	after := liveHeap()
	runtime.KeepAlive(kept)
	return float64(after-before) / float64(n)
}

func main() {
	log.SetFlags(0)
	log.SetPrefix("podsize: ")
	n := flag.Int("n", 5000, "copies kept")
	flag.Parse()
	body, err := io.ReadAll(os.Stdin)
	if err != nil {
		log.Fatal(err)
	}
	decoder := serializer.NewCodecFactory(scheme.Scheme).UniversalDeserializer()
	gvk := &schema.GroupVersionKind{Version: "v1", Kind: "Pod"}
	fromJSON := func() *corev1.Pod {
		obj, _, err := decoder.Decode(body, gvk, nil)
		if err != nil {
			log.Fatalf("not a Pod in JSON: %v", err)
		}
		return obj.(*corev1.Pod)
	}
	wire, err := fromJSON().Marshal()
	if err != nil {
		log.Fatal(err)
	}
	fromProtobuf := func() *corev1.Pod {
		pod := &corev1.Pod{}
		if err := pod.Unmarshal(wire); err != nil {
			log.Fatal(err)
		}
		return pod
	}
	fmt.Printf("one pod: %d bytes of JSON, %d of protobuf; live heap per copy of %d:\n", len(body), len(wire), *n)
	for _, wireFormat := range []struct {
		name   string
		decode func() *corev1.Pod
	}{{"JSON", fromJSON}, {"protobuf", fromProtobuf}} {
		full := perCopy(*n, wireFormat.decode, false)
		stripped := perCopy(*n, wireFormat.decode, true)
		fmt.Printf("  %-8s  %6.0f bytes, %6.0f without managedFields (%.1f%% less)\n",
			wireFormat.name, full, stripped, 100*(full-stripped)/full)
	}
}
