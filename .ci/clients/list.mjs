// The official Node.js client against `informer-mem serve`: a namespace's pods, a page of
// every pod, and its informer on Events. Usage: node list.mjs KUBECONFIG NAMESPACE
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
