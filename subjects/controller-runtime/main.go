// Command controller-runtime-manager is informer-mem's controller-runtime subject: a
// manager of sigs.k8s.io/controller-runtime with one controller of the resource the run
// serves, whose reconciler reads each object from the manager's cache, as most
// controllers do. The cache is the informer being measured. It serves net/http/pprof and
// informer-mem's status protocol (docs/subjects.md) on --listen, the status read from the
// cache's own informer, and runs until it is stopped.
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
	"sync/atomic"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crlog "sigs.k8s.io/controller-runtime/pkg/log"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// objects are the kinds the run serves, by resource.
var objects = map[string]func() client.Object{
	"pods":        func() client.Object { return &corev1.Pod{} },
	"configmaps":  func() client.Object { return &corev1.ConfigMap{} },
	"secrets":     func() client.Object { return &corev1.Secret{} },
	"nodes":       func() client.Object { return &corev1.Node{} },
	"deployments": func() client.Object { return &appsv1.Deployment{} },
}

// reconciler reads the object of each request from the cache and does nothing else.
type reconciler struct {
	client     client.Client
	newObject  func() client.Object
	reconciles atomic.Uint64
}

func (r *reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	r.reconciles.Add(1)
	if err := r.client.Get(ctx, req.NamespacedName, r.newObject()); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	return ctrl.Result{}, nil
}

// counts are the cache informer's notifications, and the highest resourceVersion among
// them: every event up to it is in the store (the store is updated before handlers).
type counts struct {
	add, update, delete, sync atomic.Uint64
	applied                   atomic.Uint64
}

func (c *counts) saw(obj interface{}) {
	if tombstone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	rv, err := strconv.ParseUint(m.GetResourceVersion(), 10, 64)
	for err == nil {
		old := c.applied.Load()
		if rv <= old || c.applied.CompareAndSwap(old, rv) {
			return
		}
	}
}

func (c *counts) handler() toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj interface{}) { c.add.Add(1); c.saw(obj) },
		UpdateFunc: func(oldObj, newObj interface{}) {
			o, errOld := meta.Accessor(oldObj)
			n, errNew := meta.Accessor(newObj)
			if errOld == nil && errNew == nil && o.GetResourceVersion() == n.GetResourceVersion() {
				c.sync.Add(1)
			} else {
				c.update.Add(1)
			}
			c.saw(newObj)
		},
		DeleteFunc: func(obj interface{}) { c.delete.Add(1); c.saw(obj) },
	}
}

// The status protocol (docs/subjects.md).

type storeStatus struct {
	Objects         int    `json:"objects"`
	ResourceVersion string `json:"resourceVersion"`
}

type status struct {
	Implementation string            `json:"implementation"`
	Synced         bool              `json:"synced"`
	Stores         []storeStatus     `json:"stores"`
	Handled        map[string]uint64 `json:"handled"`
}

type item struct {
	Key             string `json:"key"`
	ResourceVersion string `json:"resourceVersion"`
	UID             string `json:"uid"`
}

func serveJSON(w http.ResponseWriter, v interface{}) {
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(v); err != nil {
		log.Printf("status: %v", err)
	}
}

// version is the module version of path this binary was built with.
func version(path string) string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == path {
				return dep.Version
			}
		}
	}
	return "unknown"
}

func main() {
	log.SetFlags(0)
	log.SetPrefix("controller-runtime-manager: ")
	// --kubeconfig is controller-runtime's own flag (ctrl.GetConfig reads it).
	listen := flag.String("listen", "127.0.0.1:0", "address for pprof and the status protocol")
	resource := flag.String("resource", "pods", "pods, configmaps, secrets, nodes or deployments")
	stripManagedFields := flag.Bool("strip-managed-fields", false, "cache.Options.DefaultTransform = cache.TransformStripManagedFields()")
	noDeepCopy := flag.Bool("unsafe-disable-deep-copy", false, "cache.Options.DefaultUnsafeDisableDeepCopy: the reconciler's Get returns the cache's own object")
	flag.Parse()
	// A manager sets its logger first thing, as kubebuilder's main does: until one is set,
	// controller-runtime keeps a deferred logger for every reconcile's WithValues (for 30
	// s, then it sets a null one itself), which would be measured as the cache's heap.
	ctrl.SetLogger(logr.New(crlog.NullLogSink{}))
	newObject, ok := objects[*resource]
	if !ok {
		log.Fatalf("--resource %q: not pods, configmaps, secrets, nodes or deployments", *resource)
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		log.Fatalf("--kubeconfig: %v", err)
	}
	// The run's server answers at once; client-side throttling would only slow relists.
	cfg.QPS, cfg.Burst = 1000, 1000
	options := ctrl.Options{Metrics: metricsserver.Options{BindAddress: "0"}}
	if *stripManagedFields {
		options.Cache.DefaultTransform = cache.TransformStripManagedFields()
	}
	if *noDeepCopy {
		options.Cache.DefaultUnsafeDisableDeepCopy = noDeepCopy
	}
	mgr, err := ctrl.NewManager(cfg, options)
	if err != nil {
		log.Fatal(err)
	}
	r := &reconciler{client: mgr.GetClient(), newObject: newObject}
	if err := ctrl.NewControllerManagedBy(mgr).For(newObject()).Complete(r); err != nil {
		log.Fatal(err)
	}
	ctx := ctrl.SetupSignalHandler()
	informer, err := mgr.GetCache().GetInformer(ctx, newObject())
	if err != nil {
		log.Fatal(err)
	}
	indexer, ok := informer.(toolscache.SharedIndexInformer)
	if !ok {
		log.Fatalf("the cache's informer is a %T, not a client-go SharedIndexInformer", informer)
	}
	c := &counts{}
	if _, err := informer.AddEventHandler(c.handler()); err != nil {
		log.Fatal(err)
	}
	implementation := fmt.Sprintf("controller-runtime %s (client-go %s)",
		version("sigs.k8s.io/controller-runtime"), version("k8s.io/client-go"))
	http.HandleFunc("/informer-mem/status", func(w http.ResponseWriter, _ *http.Request) {
		serveJSON(w, status{
			Implementation: implementation,
			Synced:         informer.HasSynced(),
			Stores: []storeStatus{{
				Objects:         len(indexer.GetStore().ListKeys()),
				ResourceVersion: strconv.FormatUint(c.applied.Load(), 10),
			}},
			Handled: map[string]uint64{
				"add": c.add.Load(), "update": c.update.Load(),
				"delete": c.delete.Load(), "sync": c.sync.Load(),
			},
		})
	})
	http.HandleFunc("/informer-mem/status/store", func(w http.ResponseWriter, _ *http.Request) {
		items := []item{}
		for _, obj := range indexer.GetStore().List() {
			m, err := meta.Accessor(obj)
			if err != nil {
				continue
			}
			key, _ := toolscache.MetaNamespaceKeyFunc(obj)
			items = append(items, item{key, m.GetResourceVersion(), string(m.GetUID())})
		}
		serveJSON(w, map[string]interface{}{"stores": []interface{}{map[string]interface{}{"items": items}}})
	})
	listener, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatalf("--listen: %v", err)
	}
	go func() { log.Fatal(http.Serve(listener, nil)) }()
	fmt.Fprintf(os.Stderr, "controller-runtime-manager: %s, serving pprof and status on %s\n", implementation, *listen)
	if err := mgr.Start(ctx); err != nil {
		log.Fatal(err)
	}
}
