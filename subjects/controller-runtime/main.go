// Command controller-runtime-manager is informer-mem's controller-runtime subject: a
// manager of sigs.k8s.io/controller-runtime with one controller of the resource the run
// serves, whose reconciler reads each object from the manager's cache, as most
// controllers do. The cache is the informer being measured. It serves net/http/pprof and
// informer-mem's status protocol (docs/subjects.md) on --listen: the store is the cache's
// informer's, and a resourceVersion counts as applied once the controller has reconciled
// every event up to it. With --namespaces A,B the cache has an informer in each of them
// (DefaultNamespaces), which the store reports together. With --leader-elect-namespace it elects a leader with a Lease
// there before its controller starts, as a deployed manager does (kubebuilder's
// --leader-elect), and with --record-events its reconciler records an Event for each
// object it reconciles, through the manager's event recorder of either API
// (events.k8s.io/v1: GetEventRecorder; v1: GetEventRecorderFor). With --owns it is an
// operator: each object it reconciles is made into a Service and a Deployment (or
// either) named after it in its namespace, controlled by it (an owner reference), created
// or updated through the manager's client, and the controller watches them (Owns), so
// its cache holds them too. It runs until it is stopped.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"maps"
	"net"
	"net/http"
	_ "net/http/pprof"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	crlog "sigs.k8s.io/controller-runtime/pkg/log"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// kind is one of the kinds the run serves: a new object of it, and a new list, which
// the store endpoint reads from a cache of several namespaces (one informer in each).
type kind struct {
	object func() client.Object
	list   func() client.ObjectList
}

// kinds are the kinds the run serves, by resource.
var kinds = map[string]kind{
	"pods": {
		func() client.Object { return &corev1.Pod{} },
		func() client.ObjectList { return &corev1.PodList{} }},
	"configmaps": {
		func() client.Object { return &corev1.ConfigMap{} },
		func() client.ObjectList { return &corev1.ConfigMapList{} }},
	"secrets": {
		func() client.Object { return &corev1.Secret{} },
		func() client.ObjectList { return &corev1.SecretList{} }},
	"nodes": {
		func() client.Object { return &corev1.Node{} },
		func() client.ObjectList { return &corev1.NodeList{} }},
	"deployments": {
		func() client.Object { return &appsv1.Deployment{} },
		func() client.ObjectList { return &appsv1.DeploymentList{} }},
}

// cached reads what the manager's cache holds: the informer's store when the cache
// has one informer of the kind, else (one informer per namespace) a List across them,
// without copies, once they have synced (a List waits until they have).
func cached(ctx context.Context, c cache.Cache, informer cache.Informer, newList func() client.ObjectList) []interface{} {
	if indexer, ok := informer.(toolscache.SharedIndexInformer); ok {
		return indexer.GetStore().List()
	}
	if !informer.HasSynced() {
		return nil
	}
	list := newList()
	if err := c.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
		log.Printf("status: listing the cache: %v", err)
		return nil
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		log.Printf("status: %v", err)
		return nil
	}
	objects := make([]interface{}, len(items))
	for i, item := range items {
		objects[i] = item
	}
	return objects
}

// reconciler reads the object of each request from the cache and, with a recorder,
// records an Event about it; as an operator, it makes the object's children.
type reconciler struct {
	client    client.Client
	newObject func() client.Object
	progress  *progress
	record    func(object client.Object)
	owns      []string // "services", "deployments": the children made of each object
}

func (r *reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	covered := r.progress.begin(req.NamespacedName)
	defer r.progress.end(req.NamespacedName, covered)
	object := r.newObject()
	if err := r.client.Get(ctx, req.NamespacedName, object); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if r.record != nil {
		r.record(object)
	}
	for _, owned := range r.owns {
		if err := r.child(ctx, object, owned); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{}, nil
}

// child creates or updates the child of kind owned (a Service or a Deployment) that
// parent is made into, as an operator's reconciler does with CreateOrUpdate: named after
// it, in its namespace, selecting the pods `app: NAME`, controlled by it.
func (r *reconciler) child(ctx context.Context, parent client.Object, owned string) error {
	name := parent.GetName()
	labels := map[string]string{"app": name, "app.kubernetes.io/managed-by": "informer-mem-operator"}
	meta := metav1.ObjectMeta{Name: name, Namespace: parent.GetNamespace()}
	var child client.Object
	var mutate func()
	switch owned {
	case "services":
		service := &corev1.Service{ObjectMeta: meta}
		child, mutate = service, func() {
			service.Labels = labels
			service.Spec.Selector = map[string]string{"app": name}
			service.Spec.Ports = []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http")}}
		}
	case "deployments":
		deployment := &appsv1.Deployment{ObjectMeta: meta}
		child, mutate = deployment, func() {
			deployment.Labels = labels
			deployment.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}}
			deployment.Spec.Template.Labels = labels
			deployment.Spec.Template.Spec.Containers = []corev1.Container{{
				Name: "app", Image: "registry.example/app:1.0",
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
			}}
		}
	default:
		return fmt.Errorf("no child of kind %q", owned)
	}
	_, err := controllerutil.CreateOrUpdate(ctx, r.client, child, func() error {
		mutate()
		return controllerutil.SetControllerReference(parent, child, r.client.Scheme())
	})
	return err
}

// progress is how far the controller has got, for the status protocol: a phase of the
// run ends when the controller has reconciled its events, not when the cache holds them
// (its workers start only after the cache has synced, and a heap measured while they
// still work holds their copies). The controller's event handler records each request
// as pending, numbered by its event, before enqueuing it; a reconcile removes it if no
// newer event came while it ran. A reconcile that begins after an event reads the cache
// as of that event or later (the informer updates its store before it notifies
// handlers), so when nothing is pending every event enqueued has been reconciled.
type progress struct {
	mu         sync.Mutex
	events     uint64                          // events enqueued
	newest     uint64                          // their highest resourceVersion
	pending    map[types.NamespacedName]uint64 // request → the number of its newest event
	reconciled uint64                          // newest, when nothing was last pending
	handled    map[string]uint64               // notifications, by the protocol's names
}

func newProgress() *progress {
	return &progress{
		pending: map[types.NamespacedName]uint64{},
		handled: map[string]uint64{"add": 0, "update": 0, "delete": 0, "sync": 0},
	}
}

// enqueued records a notification of obj, before its request is enqueued.
func (p *progress) enqueued(notification string, obj client.Object) {
	rv, err := strconv.ParseUint(obj.GetResourceVersion(), 10, 64)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.handled[notification]++
	p.events++
	p.pending[types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}] = p.events
	if err == nil && rv > p.newest {
		p.newest = rv
	}
}

// begin is a reconcile of req beginning: the number of the newest event it covers.
func (p *progress) begin(req types.NamespacedName) uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pending[req]
}

// end is a reconcile of req ending that began covering event number covered.
func (p *progress) end(req types.NamespacedName, covered uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if covered != 0 && p.pending[req] == covered {
		delete(p.pending, req)
	}
	if len(p.pending) == 0 {
		p.reconciled = p.newest
		// A map keeps the room of its most entries: a new one does not hold an
		// initial sync's worth of empty buckets in the heap being measured.
		p.pending = map[types.NamespacedName]uint64{}
	}
}

// status is the newest resourceVersion reconciled, and the notifications so far.
func (p *progress) status() (string, map[string]uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strconv.FormatUint(p.reconciled, 10), maps.Clone(p.handled)
}

// tracked is the controller's event handler: EnqueueRequestForObject (what For uses),
// recording each notification in progress before it enqueues the request.
type tracked struct {
	enqueue  handler.EventHandler
	progress *progress
}

func (t tracked) Create(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	t.progress.enqueued("add", e.Object)
	t.enqueue.Create(ctx, e, q)
}

func (t tracked) Update(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	notification := "update"
	if e.ObjectOld.GetResourceVersion() == e.ObjectNew.GetResourceVersion() {
		notification = "sync"
	}
	t.progress.enqueued(notification, e.ObjectNew)
	t.enqueue.Update(ctx, e, q)
}

func (t tracked) Delete(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	t.progress.enqueued("delete", e.Object)
	t.enqueue.Delete(ctx, e, q)
}

func (t tracked) Generic(ctx context.Context, e event.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	t.enqueue.Generic(ctx, e, q)
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
	leaderElectNamespace := flag.String("leader-elect-namespace", "", "elect a leader with a Lease in this namespace before the controller starts")
	namespaces := flag.String("namespaces", "", "comma-separated: cache.Options.DefaultNamespaces, one informer per namespace (empty: every namespace)")
	recordEvents := flag.String("record-events", "", "record an Event for each object reconciled, through the recorder of this API: events.k8s.io (GetEventRecorder) or v1 (GetEventRecorderFor)")
	owns := flag.String("owns", "", "comma-separated: services, deployments: make each object reconciled into children of these kinds (CreateOrUpdate, a controller reference) and watch them (Owns)")
	flag.Parse()
	// A manager sets its logger first thing, as kubebuilder's main does: until one is set,
	// controller-runtime keeps a deferred logger for every reconcile's WithValues (for 30
	// s, then it sets a null one itself), which would be measured as the cache's heap.
	ctrl.SetLogger(logr.New(crlog.NullLogSink{}))
	kind, ok := kinds[*resource]
	if !ok {
		log.Fatalf("--resource %q: not pods, configmaps, secrets, nodes or deployments", *resource)
	}
	newObject := kind.object
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
	if *namespaces != "" {
		options.Cache.DefaultNamespaces = map[string]cache.Config{}
		for _, namespace := range strings.Split(*namespaces, ",") {
			options.Cache.DefaultNamespaces[namespace] = cache.Config{}
		}
	}
	if *leaderElectNamespace != "" {
		options.LeaderElection = true
		options.LeaderElectionID = "controller-runtime-manager.informer-mem.dev"
		options.LeaderElectionNamespace = *leaderElectNamespace
	}
	mgr, err := ctrl.NewManager(cfg, options)
	if err != nil {
		log.Fatal(err)
	}
	progress := newProgress()
	r := &reconciler{client: mgr.GetClient(), newObject: newObject, progress: progress}
	if *owns != "" {
		r.owns = strings.Split(*owns, ",")
		for _, owned := range r.owns {
			if owned != "services" && owned != "deployments" {
				log.Fatalf("--owns %q: not services or deployments", owned)
			}
		}
	}
	switch *recordEvents {
	case "":
	case "events.k8s.io":
		recorder := mgr.GetEventRecorder("controller-runtime-manager")
		r.record = func(object client.Object) {
			recorder.Eventf(object, nil, corev1.EventTypeNormal, "Reconciled", "Reconcile", "read from the cache")
		}
	case "v1":
		recorder := mgr.GetEventRecorderFor("controller-runtime-manager")
		r.record = func(object client.Object) {
			recorder.Event(object, corev1.EventTypeNormal, "Reconciled", "read from the cache")
		}
	default:
		log.Fatalf("--record-events %q: not events.k8s.io or v1", *recordEvents)
	}
	// Watches with EnqueueRequestForObject is what For does, with the handler tracked.
	enqueue := tracked{enqueue: &handler.EnqueueRequestForObject{}, progress: progress}
	builder := ctrl.NewControllerManagedBy(mgr).Named(*resource).Watches(newObject(), enqueue)
	for _, owned := range r.owns {
		// Owns: a change of a child enqueues its controller, as an operator's does.
		var child client.Object = &corev1.Service{}
		if owned == "deployments" {
			child = &appsv1.Deployment{}
		}
		builder = builder.Watches(child, handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(), newObject(), handler.OnlyControllerOwner()))
	}
	if err := builder.Complete(r); err != nil {
		log.Fatal(err)
	}
	ctx := ctrl.SetupSignalHandler()
	informer, err := mgr.GetCache().GetInformer(ctx, newObject())
	if err != nil {
		log.Fatal(err)
	}
	newList := kind.list
	implementation := fmt.Sprintf("controller-runtime %s (client-go %s)",
		version("sigs.k8s.io/controller-runtime"), version("k8s.io/client-go"))
	http.HandleFunc("/informer-mem/status", func(w http.ResponseWriter, _ *http.Request) {
		reconciled, handled := progress.status()
		serveJSON(w, status{
			Implementation: implementation,
			Synced:         informer.HasSynced(),
			Stores: []storeStatus{{
				Objects:         len(cached(ctx, mgr.GetCache(), informer, newList)),
				ResourceVersion: reconciled,
			}},
			Handled: handled,
		})
	})
	http.HandleFunc("/informer-mem/status/store", func(w http.ResponseWriter, _ *http.Request) {
		items := []item{}
		for _, obj := range cached(ctx, mgr.GetCache(), informer, newList) {
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
