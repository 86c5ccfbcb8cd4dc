// informer-mem's Java subject: fabric8 kubernetes-client's SharedIndexInformer (a LIST,
// then a WATCH over a WebSocket, a relist after a 410) on one resource in one namespace
// or every namespace, serving informer-mem's status protocol (docs/subjects.md) on LISTEN.
//
// Usage: java [-Dinformermem.http=vertx|jdk] -cp 'target/subjects/fabric8/*' informermem.Informer
//          KUBECONFIG LISTEN [RESOURCE [NAMESPACE]]
//   RESOURCE: pods, configmaps, secrets, deployments or nodes (no namespace); NAMESPACE:
//   empty or absent for every one. informermem.http names fabric8's HTTP client: vertx
//   (Vert.x 5, kubernetes-client's default, and this program's) or jdk (java.net.http).
//   The status protocol's heap is the JVM's used heap after a full collection.
package informermem;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.Version;
import io.fabric8.kubernetes.client.http.HttpClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import io.fabric8.kubernetes.client.vertx5.Vertx5HttpClientFactory;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

public final class Informer {
    public static void main(String[] args) throws Exception {
        if (args.length < 2) {
            System.err.println("usage: informermem.Informer KUBECONFIG LISTEN [RESOURCE [NAMESPACE]]");
            System.exit(2);
        }
        String kubeconfig = args[0];
        String listen = args[1];
        String resource = args.length > 2 ? args[2] : "pods";
        String namespace = args.length > 3 ? args[3] : "";
        Class<? extends HasMetadata> type = switch (resource) {
            case "pods" -> Pod.class;
            case "configmaps" -> ConfigMap.class;
            case "secrets" -> Secret.class;
            case "deployments" -> Deployment.class;
            case "nodes" -> Node.class;
            default -> null;
        };
        if (type == null) {
            System.err.println("Informer: unknown resource " + resource);
            System.exit(2);
        }
        String http = System.getProperty("informermem.http", "vertx");
        // Named, not left to fabric8's lookup, which takes any client on the class path
        // over its default.
        HttpClient.Factory httpClient = switch (http) {
            case "vertx" -> new Vertx5HttpClientFactory();
            case "jdk" -> new JdkHttpClientFactory();
            default -> null;
        };
        if (httpClient == null) {
            System.err.println("Informer: unknown informermem.http " + http + " (vertx or jdk)");
            System.exit(2);
        }
        Config config = Config.fromKubeconfig(null, Files.readString(Path.of(kubeconfig)), kubeconfig);
        KubernetesClient client = new KubernetesClientBuilder()
                .withConfig(config)
                .withHttpClientFactory(httpClient)
                .build();
        Handled handled = new Handled();
        SharedIndexInformer<? extends HasMetadata> informer =
                informer(client, type, resource.equals("nodes") ? null : namespace, handled);
        serve(listen, client, http, informer, handled);
        // Ends when the program is ended; a relist after a 410 happens inside.
        informer.start();
        Thread.currentThread().join();
    }

    /** The informer of `type`, in `namespace` (every one when empty; none when null), not started. */
    private static <T extends HasMetadata> SharedIndexInformer<T> informer(
            KubernetesClient client, Class<T> type, String namespace, Handled handled) {
        var resources = client.resources(type);
        SharedIndexInformer<T> informer;
        if (namespace == null) {
            informer = resources.runnableInformer(0);
        } else if (namespace.isEmpty()) {
            informer = resources.inAnyNamespace().runnableInformer(0);
        } else {
            informer = resources.inNamespace(namespace).runnableInformer(0);
        }
        informer.addEventHandler(handled.handler());
        return informer;
    }

    /** What the handlers have handled, and the highest resourceVersion among it. */
    static final class Handled {
        final AtomicLong add = new AtomicLong();
        final AtomicLong update = new AtomicLong();
        final AtomicLong delete = new AtomicLong();
        final AtomicLong sync = new AtomicLong();
        final AtomicLong applied = new AtomicLong();

        <T extends HasMetadata> ResourceEventHandler<T> handler() {
            return new ResourceEventHandler<>() {
                @Override
                public void onAdd(T obj) {
                    add.incrementAndGet();
                    saw(obj);
                }

                @Override
                public void onUpdate(T old, T obj) {
                    String before = old.getMetadata().getResourceVersion();
                    (before.equals(obj.getMetadata().getResourceVersion()) ? sync : update).incrementAndGet();
                    saw(obj);
                }

                @Override
                public void onDelete(T obj, boolean finalStateUnknown) {
                    delete.incrementAndGet();
                    saw(obj);
                }
            };
        }

        private void saw(HasMetadata obj) {
            long rv = Long.parseLong(obj.getMetadata().getResourceVersion());
            applied.accumulateAndGet(rv, Math::max);
        }
    }

    /** The status protocol on `listen` (HOST:PORT). */
    private static void serve(
            String listen,
            KubernetesClient client,
            String http,
            SharedIndexInformer<? extends HasMetadata> informer,
            Handled handled)
            throws IOException {
        var json = client.getKubernetesSerialization();
        int colon = listen.lastIndexOf(':');
        var address = new InetSocketAddress(listen.substring(0, colon), Integer.parseInt(listen.substring(colon + 1)));
        HttpServer server = HttpServer.create(address, 0);
        server.createContext("/informer-mem/status", exchange -> {
            String path = exchange.getRequestURI().getPath();
            List<? extends HasMetadata> objects = informer.getStore().list();
            Map<String, Object> body = new LinkedHashMap<>();
            switch (path) {
                case "/informer-mem/status" -> {
                    body.put("implementation", "fabric8 kubernetes-client " + Version.clientVersion()
                            + " (" + http + " HTTP client, Java " + Runtime.version() + ")");
                    body.put("synced", informer.hasSynced());
                    body.put("stores", List.of(Map.of(
                            "objects", objects.size(),
                            "resourceVersion", Long.toString(handled.applied.get()))));
                    body.put("handled", Map.of(
                            "add", handled.add.get(),
                            "update", handled.update.get(),
                            "delete", handled.delete.get(),
                            "sync", handled.sync.get()));
                }
                case "/informer-mem/status/store" -> {
                    List<Map<String, String>> items = new ArrayList<>(objects.size());
                    for (HasMetadata o : objects) {
                        items.add(Map.of(
                                "key", Cache.metaNamespaceKeyFunc(o),
                                "resourceVersion", o.getMetadata().getResourceVersion(),
                                "uid", o.getMetadata().getUid()));
                    }
                    body.put("stores", List.of(Map.of("items", items)));
                }
                case "/informer-mem/status/heap" -> {
                    objects = null;
                    // Twice: a collection can leave what finalizers and soft references free
                    // for the next.
                    System.gc();
                    System.gc();
                    body.put("liveBytes", ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed());
                }
                default -> {
                    exchange.sendResponseHeaders(404, -1);
                    exchange.close();
                    return;
                }
            }
            respond(exchange, json.asJson(body).getBytes(StandardCharsets.UTF_8));
        });
        server.start();
    }

    private static void respond(HttpExchange exchange, byte[] data) throws IOException {
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.sendResponseHeaders(200, data.length);
        try (var out = exchange.getResponseBody()) {
            out.write(data);
        }
    }
}
