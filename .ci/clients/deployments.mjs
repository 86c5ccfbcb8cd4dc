// The official Node.js client against `informer-mem serve` of Deployments (apps/v1): a
// namespace's and every one's. Usage: node deployments.mjs KUBECONFIG NAMESPACE
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
