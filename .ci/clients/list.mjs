// The official Node.js client against `informer-mem serve`: a namespace's pods, a page of
// every pod, its informer on Events, and a namespace of its own labelled (a merge patch)
// and deleted. Usage: node list.mjs KUBECONFIG NAMESPACE
import * as k8s from '@kubernetes/client-node';

const kc = new k8s.KubeConfig();
kc.loadFromFile(process.argv[2]);
const core = kc.makeApiClient(k8s.CoreV1Api);
const pods = await core.listNamespacedPod({ namespace: process.argv[3] });
console.log(`pods ${pods.items.length}`);
const page = await core.listPodForAllNamespaces({ limit: 7 });
console.log(`page ${page.items.length} continue ${Boolean(page.metadata?._continue)}`);

// An Event written, then the client's informer on Events (a LIST, then a WATCH from its
// resourceVersion) sees it deleted.
const namespace = process.argv[3];
await core.createNamespacedEvent({
  namespace,
  body: {
    metadata: { name: 'node.1' },
    involvedObject: { kind: 'Pod', namespace, name: pods.items[0].metadata.name },
    reason: 'Seen', message: 'seen by node', type: 'Normal',
  },
});
const informer = k8s.makeInformer(kc, `/api/v1/namespaces/${namespace}/events`,
  () => core.listNamespacedEvent({ namespace }));
const deleted = new Promise((resolve) => informer.on('delete', (e) => resolve(e.metadata.name)));
const timeout = new Promise((resolve) => setTimeout(() => resolve('nothing within 10 s'), 10_000));
await informer.start();
console.log(`events listed ${informer.list(namespace).map((e) => e.metadata.name).join(' ')}`);
await core.deleteNamespacedEvent({ namespace, name: 'node.1' });
console.log(`events informer deleted ${await Promise.race([deleted, timeout])}`);
await informer.stop();

// A namespace of its own, given a pod-security label as a test suite gives it, deleted.
await core.createNamespace({ body: { metadata: { name: 'node-made' } } });
const labelled = await core.patchNamespace(
  {
    name: 'node-made',
    body: { metadata: { labels: { 'pod-security.kubernetes.io/enforce': 'privileged' } } },
  },
  k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
);
const label = labelled.metadata.labels['pod-security.kubernetes.io/enforce'];
const read = await core.readNamespace({ name: 'node-made' });
const gone = await core.deleteNamespace({ name: 'node-made' });
console.log(`namespace labelled ${label} read ${read.metadata.labels['pod-security.kubernetes.io/enforce']} deleted ${gone.status.phase}`);
