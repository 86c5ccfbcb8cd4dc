// The official Node.js client against `informer-mem serve` of Deployments (apps/v1): a
// namespace's and every one's; then a JSON patch of one's status, as a controller writes
// it, and a server-side apply of another's replicas.
// Usage: node deployments.mjs KUBECONFIG NAMESPACE
import * as k8s from '@kubernetes/client-node';

const kc = new k8s.KubeConfig();
kc.loadFromFile(process.argv[2]);
const apps = kc.makeApiClient(k8s.AppsV1Api);
const mine = await apps.listNamespacedDeployment({ namespace: process.argv[3] });
console.log(`deployments ${mine.items.length}`);
const first = mine.items[0];
console.log(`ready ${first.status?.readyReplicas}/${first.spec?.replicas} containers ${first.spec?.template.spec?.containers.length}`);
const all = await apps.listDeploymentForAllNamespaces();
console.log(`all ${all.items.length}`);
// Two of three replicas ready: a JSON patch (the client's default) of the status
// subresource, of the second Deployment (the Python client writes the third's).
const second = mine.items[1];
const written = await apps.patchNamespacedDeploymentStatus({
  name: second.metadata.name,
  namespace: process.argv[3],
  body: [
    { op: 'replace', path: '/status/readyReplicas', value: 2 },
    { op: 'replace', path: '/status/availableReplicas', value: 2 },
  ],
});
const same = written.metadata.generation === second.metadata.generation;
console.log(`status ready ${written.status?.readyReplicas}/${written.spec?.replicas} same generation ${same}`);
// Server-side apply, as a controller that owns a Deployment's replicas applies them
// (forced: the generated Deployments' replicas are another manager's), to the fourth
// Deployment (the Python client applies to the fifth).
const fourth = mine.items[3];
const applied = await apps.patchNamespacedDeployment(
  {
    name: fourth.metadata.name,
    namespace: process.argv[3],
    body: {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: fourth.metadata.name },
      spec: { replicas: 5 },
    },
    fieldManager: 'client',
    force: true,
  },
  k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.ServerSideApply),
);
const owners = applied.metadata.managedFields
  .filter((e) => e.fieldsV1?.['f:spec']?.['f:replicas'] !== undefined)
  .map((e) => e.manager);
console.log(`applied replicas ${applied.spec?.replicas} owners ${owners.join(',')}`);
