// The official Node.js client against `informer-mem serve`: a namespace's pods, then a
// page of every pod. Usage: node list.mjs KUBECONFIG NAMESPACE
import * as k8s from '@kubernetes/client-node';

const kc = new k8s.KubeConfig();
kc.loadFromFile(process.argv[2]);
const core = kc.makeApiClient(k8s.CoreV1Api);
const pods = await core.listNamespacedPod({ namespace: process.argv[3] });
console.log(`pods ${pods.items.length}`);
const page = await core.listPodForAllNamespaces({ limit: 7 });
console.log(`page ${page.items.length} continue ${Boolean(page.metadata?._continue)}`);
