// informer-mem's Node.js subject: the official client's informer (makeInformer, a
// ListWatch: LIST, then WATCH, a relist after a 410), on one resource in one namespace or
// every namespace, serving informer-mem's status protocol (docs/subjects.md) on LISTEN.
//
// Usage: node --expose-gc informer.mjs KUBECONFIG LISTEN [RESOURCE [NAMESPACE [LABELS [FIELDS]]]]
//   RESOURCE: pods, configmaps, secrets, deployments or nodes (no namespace); NAMESPACE: empty or absent
//   for every one; LABELS, FIELDS: the label and field selectors of every LIST and WATCH,
//   empty or absent for none. With --expose-gc it also serves the status protocol's heap:
//   V8's used heap after a full collection.
import http from 'node:http';
import { readFileSync } from 'node:fs';
import * as k8s from '@kubernetes/client-node';

const [kubeconfig, listen, resource = 'pods', namespace = '', labels = '', fields = ''] = process.argv.slice(2);
if (!kubeconfig || !listen) {
    console.error('usage: node informer.mjs KUBECONFIG LISTEN [RESOURCE [NAMESPACE [LABELS [FIELDS]]]]');
    process.exit(2);
}
// The selectors go with the LIST (below) and, through the ListWatch, with every WATCH.
const selectors = {
    ...(labels && { labelSelector: labels }),
    ...(fields && { fieldSelector: fields }),
};

const clientVersion = JSON.parse(
    readFileSync(new URL('./node_modules/@kubernetes/client-node/package.json', import.meta.url)),
).version;
const kc = new k8s.KubeConfig();
kc.loadFromFile(kubeconfig);
const core = kc.makeApiClient(k8s.CoreV1Api);
const apps = kc.makeApiClient(k8s.AppsV1Api);
const lists = namespace ? {
    pods: () => core.listNamespacedPod({ namespace, ...selectors }),
    configmaps: () => core.listNamespacedConfigMap({ namespace, ...selectors }),
    secrets: () => core.listNamespacedSecret({ namespace, ...selectors }),
    deployments: () => apps.listNamespacedDeployment({ namespace, ...selectors }),
} : {
    pods: () => core.listPodForAllNamespaces(selectors),
    configmaps: () => core.listConfigMapForAllNamespaces(selectors),
    secrets: () => core.listSecretForAllNamespaces(selectors),
    nodes: () => core.listNode(selectors),
    deployments: () => apps.listDeploymentForAllNamespaces(selectors),
};
if (!lists[resource]) {
    console.error(`informer.mjs: unknown resource ${resource}`);
    process.exit(2);
}
const root = resource === 'deployments' ? '/apis/apps/v1' : '/api/v1';
const path = namespace ? `${root}/namespaces/${namespace}/${resource}` : `${root}/${resource}`;
// makeInformer's ListWatch, built here to give it the field selector too.
const informer = new k8s.ListWatch(path, new k8s.Watch(kc), lists[resource], false,
    selectors.labelSelector, selectors.fieldSelector);

const handled = { add: 0, update: 0, delete: 0, sync: 0 };
let applied = 0n;
let synced = false;
const saw = (obj) => {
    const rv = BigInt(obj?.metadata?.resourceVersion ?? '0');
    if (rv > applied) applied = rv;
};
informer.on('add', (obj) => { handled.add++; saw(obj); });
informer.on('update', (obj) => { handled.update++; saw(obj); });
informer.on('delete', (obj) => { handled.delete++; saw(obj); });
// The ListWatch stops on an error other than a 410: start it again, as its docs advise.
informer.on('error', (err) => {
    console.error(`informer.mjs: ${err?.message ?? err}; restarting in 1 s`);
    setTimeout(() => informer.start().catch(() => {}), 1000);
});

// client-go's MetaNamespaceKeyFunc: namespace/name, the name alone when cluster-scoped.
const key = (obj) => (obj.metadata.namespace ? `${obj.metadata.namespace}/${obj.metadata.name}` : obj.metadata.name);
const json = (res, body) => {
    const data = JSON.stringify(body);
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(data) });
    res.end(data);
};
http.createServer((req, res) => {
    const objects = informer.list();
    if (req.url === '/informer-mem/status') {
        json(res, {
            implementation: `@kubernetes/client-node ${clientVersion} (Node.js ${process.version})`,
            synced,
            stores: [{ objects: objects.length, resourceVersion: applied.toString() }],
            handled,
        });
    } else if (req.url === '/informer-mem/status/store') {
        const items = objects.map((o) => ({ key: key(o), resourceVersion: o.metadata.resourceVersion, uid: o.metadata.uid }));
        json(res, { stores: [{ items }] });
    } else if (req.url === '/informer-mem/status/heap' && global.gc) {
        global.gc();
        json(res, { liveBytes: process.memoryUsage().heapUsed });
    } else {
        res.writeHead(404).end();
    }
}).listen(Number(listen.split(':').pop()), listen.split(':')[0]);

await informer.start();
synced = true;
