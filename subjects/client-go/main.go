// Command client-go-informer is informer-mem's client-go subject: one or more
// SharedIndexInformers of the real client-go, watching the resource the run serves, with
// the settings a scenario's variant asks for. It serves net/http/pprof and informer-mem's
// status protocol (docs/subjects.md) on --listen, and runs until it is stopped.
//
// The same source builds against two client-go versions: go.mod pins the newest the
// module proxy serves, go.v027.mod (with go.v027.sum) v0.27.x, whose reflector keeps the
// items of a LIST in the LIST's one array (kubernetes issue 111370). See build.sh.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	_ "net/http/pprof"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

// lastApplied is the annotation kubectl apply writes: a second copy of the object.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

type options struct {
	kubeconfig   string
	namespace    string
	listen       string
	resource     string
	apiVersion   string
	transform    string
	metadataOnly bool
	dynamic      bool
	watchList    string
	informers    int
	handlers     int
	resync       time.Duration
	labels       string
	fields       string
	wire         string
	secure       bool
	pprofToken   string
}

func parseFlags() options {
	var o options
	flag.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig of the server to watch (required)")
	flag.StringVar(&o.namespace, "namespace", "", "namespace to watch; empty for all")
	flag.StringVar(&o.listen, "listen", "127.0.0.1:0", "address for pprof and the status protocol")
	flag.StringVar(&o.resource, "resource", "pods", "pods, configmaps, secrets, nodes or deployments; any other built-in resource with --api-version (held typed, through the informer factory's ForResource), and any resource with --api-version and --dynamic or --metadata-only")
	flag.StringVar(&o.apiVersion, "api-version", "", "the resource's group/version, such as example.com/v1alpha1 (informer-mem's {api_version}); empty for v1, or apps/v1 for deployments")
	flag.StringVar(&o.transform, "transform", "none", "none, or a comma-separated list of strip-managed-fields, strip (managedFields and the last-applied annotation) and strip-images (a Node's status.images)")
	flag.BoolVar(&o.metadataOnly, "metadata-only", false, "watch metadata only (the metadata informer)")
	flag.BoolVar(&o.dynamic, "dynamic", false, "watch whole objects as unstructured.Unstructured (the dynamic informer)")
	flag.StringVar(&o.watchList, "watch-list", "default", "on, off, or default (the client-go version's default)")
	flag.IntVar(&o.informers, "informers", 1, "separate informers on the resource, each with its own LIST and WATCH")
	flag.IntVar(&o.handlers, "handlers", 1, "event handlers per informer")
	flag.DurationVar(&o.resync, "resync", 0, "resync period; 0 for none")
	flag.StringVar(&o.labels, "label-selector", "", "label selector of every LIST and WATCH (WithTweakListOptions)")
	flag.StringVar(&o.fields, "field-selector", "", "field selector of every LIST and WATCH, such as spec.nodeName=NODE")
	flag.StringVar(&o.wire, "wire", "default", "json, protobuf, or default (the client-go version's: JSON before v0.35, protobuf first for built-in kinds after)")
	flag.BoolVar(&o.secure, "secure", false, "serve --listen over TLS with a self-signed certificate made at start, as a component's secure port")
	flag.StringVar(&o.pprofToken, "pprof-token", "", "answer /debug/pprof only to requests bearing this token (401 otherwise)")
	flag.Parse()
	if o.kubeconfig == "" {
		log.Fatal("--kubeconfig is required")
	}
	if o.metadataOnly && o.dynamic {
		log.Fatal("--metadata-only and --dynamic are two different informers: choose one")
	}
	if o.informers < 1 || o.handlers < 1 {
		log.Fatal("--informers and --handlers must be at least 1")
	}
	return o
}

// clientGoVersion is the client-go this binary was built with, from its build info.
func clientGoVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == "k8s.io/client-go" {
				return dep.Version
			}
		}
	}
	return "unknown"
}

// setWatchList sets client-go's watch-list switch before any client reads it: the
// WatchListClient feature gate from v0.31 (on by default from v0.35), the alpha
// environment variable in v0.28 to v0.30. v0.27 and older have neither.
func setWatchList(mode, version string) {
	switch mode {
	case "default":
		return
	case "on", "off":
	default:
		log.Fatalf("--watch-list: %q is not on, off or default", mode)
	}
	minor := 0
	if parts := strings.Split(strings.TrimPrefix(version, "v"), "."); len(parts) > 1 {
		minor, _ = strconv.Atoi(parts[1])
	}
	if minor < 28 {
		if mode == "on" {
			log.Fatalf("--watch-list=on: client-go %s has no watch-list (it came in v0.28)", version)
		}
		return
	}
	os.Setenv("KUBE_FEATURE_WatchListClient", strconv.FormatBool(mode == "on"))
	if mode == "on" {
		os.Setenv("ENABLE_CLIENT_GO_WATCH_LIST_ALPHA", "true")
	} else {
		os.Unsetenv("ENABLE_CLIENT_GO_WATCH_LIST_ALPHA")
	}
}

// strip returns the transform for mode, a comma-separated list of strip-managed-fields,
// strip (managedFields and the last-applied annotation) and strip-images (a Node's
// status.images); nil for none.
func strip(mode string) cache.TransformFunc {
	var managedFields, annotation, images bool
	for _, part := range strings.Split(mode, ",") {
		switch part {
		case "none":
		case "strip-managed-fields":
			managedFields = true
		case "strip":
			managedFields, annotation = true, true
		case "strip-images":
			images = true
		default:
			log.Fatalf("--transform: %q is not none, strip-managed-fields, strip or strip-images", part)
		}
	}
	if !managedFields && !images {
		return nil
	}
	return func(obj interface{}) (interface{}, error) {
		m, err := meta.Accessor(obj)
		if err != nil {
			// A DeletedFinalStateUnknown: nothing of ours to strip.
			return obj, nil
		}
		if managedFields {
			m.SetManagedFields(nil)
		}
		if annotation {
			// An Unstructured's GetAnnotations is a copy: set it back. A typed
			// object's is its own map, set back to itself.
			if a := m.GetAnnotations(); a != nil {
				if _, ok := a[lastApplied]; ok {
					delete(a, lastApplied)
					m.SetAnnotations(a)
				}
			}
		}
		if images {
			switch o := obj.(type) {
			case *corev1.Node:
				o.Status.Images = nil
			case *unstructured.Unstructured:
				unstructured.RemoveNestedField(o.Object, "status", "images")
			}
		}
		return obj, nil
	}
}

// counts are one informer's notifications, over all its handlers.
type counts struct {
	add, update, delete, sync atomic.Uint64
	// seen is, for each handler, the highest resourceVersion it has been notified of.
	// Each handler has its own queue in client-go, so the least of them is the informer's
	// applied resourceVersion: every event up to it is in the store (the store is updated
	// before handlers are called) and has reached every handler, whose queues no longer
	// hold older objects.
	seen []atomic.Uint64
}

func newCounts(handlers int) *counts {
	return &counts{seen: make([]atomic.Uint64, handlers)}
}

// applied is the resourceVersion every handler has been notified of.
func (c *counts) applied() uint64 {
	least := c.seen[0].Load()
	for i := range c.seen[1:] {
		least = min(least, c.seen[i+1].Load())
	}
	return least
}

// saw records that handler h was notified of obj.
func (c *counts) saw(h int, obj interface{}) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	rv, err := strconv.ParseUint(m.GetResourceVersion(), 10, 64)
	if err != nil {
		return
	}
	for {
		old := c.seen[h].Load()
		if rv <= old || c.seen[h].CompareAndSwap(old, rv) {
			return
		}
	}
}

func (c *counts) handler(h int) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj interface{}) {
			c.add.Add(1)
			c.saw(h, obj)
		},
		UpdateFunc: func(oldObj, newObj interface{}) {
			o, errOld := meta.Accessor(oldObj)
			n, errNew := meta.Accessor(newObj)
			if errOld == nil && errNew == nil && o.GetResourceVersion() == n.GetResourceVersion() {
				c.sync.Add(1)
			} else {
				c.update.Add(1)
			}
			c.saw(h, newObj)
		},
		DeleteFunc: func(obj interface{}) {
			c.delete.Add(1)
			c.saw(h, obj)
		},
	}
}

type subject struct {
	version   string
	informers []cache.SharedIndexInformer
	counts    []*counts
}

// groups are the API groups of the resources outside the core group.
var groups = map[string]string{"deployments": "apps"}

func newInformer(o options, cfg *rest.Config) cache.SharedIndexInformer {
	gvr := schema.GroupVersionResource{Group: groups[o.resource], Version: "v1", Resource: o.resource}
	if o.apiVersion != "" {
		gv, err := schema.ParseGroupVersion(o.apiVersion)
		if err != nil {
			log.Fatalf("--api-version %q: %v", o.apiVersion, err)
		}
		gvr = gv.WithResource(o.resource)
	}
	tweak := func(lo *metav1.ListOptions) {
		lo.LabelSelector = o.labels
		lo.FieldSelector = o.fields
	}
	if o.metadataOnly {
		client, err := metadata.NewForConfig(cfg)
		if err != nil {
			log.Fatal(err)
		}
		return metadatainformer.NewFilteredMetadataInformer(client, gvr, o.namespace, o.resync,
			cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}, tweak).Informer()
	}
	if o.dynamic {
		client, err := dynamic.NewForConfig(cfg)
		if err != nil {
			log.Fatal(err)
		}
		return dynamicinformer.NewFilteredDynamicInformer(client, gvr, o.namespace, o.resync,
			cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}, tweak).Informer()
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		log.Fatal(err)
	}
	factory := informers.NewSharedInformerFactoryWithOptions(client, o.resync,
		informers.WithNamespace(o.namespace), informers.WithTweakListOptions(tweak))
	generic, err := factory.ForResource(gvr)
	if err != nil {
		log.Fatalf("--resource %q: %v", o.resource, err)
	}
	return generic.Informer()
}

func start(o options) *subject {
	s := &subject{version: clientGoVersion()}
	setWatchList(o.watchList, s.version)
	cfg, err := clientcmd.BuildConfigFromFlags("", o.kubeconfig)
	if err != nil {
		log.Fatalf("--kubeconfig: %v", err)
	}
	// The run's server answers at once; client-side throttling would only slow relists.
	cfg.QPS, cfg.Burst = 1000, 1000
	switch o.wire {
	case "json":
		cfg.ContentType = "application/json"
	case "protobuf":
		cfg.ContentType = "application/vnd.kubernetes.protobuf"
	case "default":
	default:
		log.Fatalf("--wire %q: want json, protobuf or default", o.wire)
	}
	ctx := context.Background()
	for i := 0; i < o.informers; i++ {
		informer := newInformer(o, cfg)
		if t := strip(o.transform); t != nil {
			if err := informer.SetTransform(t); err != nil {
				log.Fatal(err)
			}
		}
		c := newCounts(o.handlers)
		for h := 0; h < o.handlers; h++ {
			if _, err := informer.AddEventHandler(c.handler(h)); err != nil {
				log.Fatal(err)
			}
		}
		s.informers = append(s.informers, informer)
		s.counts = append(s.counts, c)
		go informer.Run(ctx.Done())
	}
	return s
}

// The status protocol (docs/subjects.md).

type storeStatus struct {
	Objects         int    `json:"objects"`
	ResourceVersion string `json:"resourceVersion"`
}

type handled struct {
	Add    uint64 `json:"add"`
	Update uint64 `json:"update"`
	Delete uint64 `json:"delete"`
	Sync   uint64 `json:"sync"`
}

type status struct {
	Implementation string        `json:"implementation"`
	Synced         bool          `json:"synced"`
	Stores         []storeStatus `json:"stores"`
	Handled        handled       `json:"handled"`
}

type item struct {
	Key             string `json:"key"`
	ResourceVersion string `json:"resourceVersion"`
	UID             string `json:"uid"`
}

type store struct {
	Items []item `json:"items"`
}

func (s *subject) status() status {
	st := status{Implementation: "client-go " + s.version, Synced: true}
	for i, informer := range s.informers {
		st.Synced = st.Synced && informer.HasSynced()
		c := s.counts[i]
		st.Stores = append(st.Stores, storeStatus{
			Objects:         len(informer.GetStore().ListKeys()),
			ResourceVersion: strconv.FormatUint(c.applied(), 10),
		})
		st.Handled.Add += c.add.Load()
		st.Handled.Update += c.update.Load()
		st.Handled.Delete += c.delete.Load()
		st.Handled.Sync += c.sync.Load()
	}
	return st
}

func (s *subject) stores() map[string][]store {
	var out []store
	for _, informer := range s.informers {
		var st store
		for _, obj := range informer.GetStore().List() {
			m, err := meta.Accessor(obj)
			if err != nil {
				continue
			}
			key, _ := cache.MetaNamespaceKeyFunc(obj)
			st.Items = append(st.Items, item{key, m.GetResourceVersion(), string(m.GetUID())})
		}
		out = append(out, st)
	}
	return map[string][]store{"stores": out}
}

func serveJSON(w http.ResponseWriter, v interface{}) {
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(v); err != nil {
		log.Printf("status: %v", err)
	}
}

func main() {
	log.SetFlags(0)
	log.SetPrefix("client-go-informer: ")
	o := parseFlags()
	// Listen before the informers start: the run reads pprof as soon as they ask for
	// the resource (connections wait in the backlog until Serve).
	listener, err := net.Listen("tcp", o.listen)
	if err != nil {
		log.Fatalf("--listen: %v", err)
	}
	s := start(o)
	var mu sync.Mutex
	http.HandleFunc("/informer-mem/status", func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		serveJSON(w, s.status())
	})
	http.HandleFunc("/informer-mem/status/store", func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		serveJSON(w, s.stores())
	})
	fmt.Fprintf(os.Stderr, "client-go-informer: client-go %s, serving pprof and status on %s\n", s.version, o.listen)
	if o.secure || o.pprofToken != "" {
		log.Fatal(secured(http.DefaultServeMux, listener, o.pprofToken, o.secure))
	}
	log.Fatal(http.Serve(listener, nil))
}
