"""The official Python client against `informer-mem serve` of Deployments (apps/v1): a
namespace's, every one's, and a watch from resourceVersion 0, each decoded into the
client's models; then a JSON patch of one's status, as a controller writes it, and a
server-side apply of another's replicas.
Usage: python deployments.py KUBECONFIG NAMESPACE"""
import sys

from kubernetes import client, config, dynamic, watch

config.load_kube_config(config_file=sys.argv[1])
apps = client.AppsV1Api()
mine = apps.list_namespaced_deployment(sys.argv[2])
print(f"deployments {len(mine.items)}")
first = mine.items[0]
containers = len(first.spec.template.spec.containers)
print(f"ready {first.status.ready_replicas}/{first.spec.replicas} containers {containers}")
print(f"all {len(apps.list_deployment_for_all_namespaces().items)}")
events = watch.Watch().stream(
    apps.list_namespaced_deployment, sys.argv[2], resource_version="0", timeout_seconds=2
)
print(f"watch {sum(1 for _ in events)}")
# Two of three replicas ready: a JSON patch of the status subresource (of the third
# Deployment; the Node.js client writes the second's, the first is read as it was made).
third = mine.items[2]
ready = [
    {"op": "replace", "path": "/status/readyReplicas", "value": 2},
    {"op": "replace", "path": "/status/availableReplicas", "value": 2},
]
written = apps.patch_namespaced_deployment_status(third.metadata.name, sys.argv[2], ready)
same = written.metadata.generation == third.metadata.generation
print(f"status ready {written.status.ready_replicas}/{written.spec.replicas} same generation {same}")
# Server-side apply through the dynamic client, as a controller that owns a Deployment's
# replicas applies them (forced: the generated Deployments' replicas are another
# manager's), to the fifth Deployment (the Node.js client applies to the fourth).
fifth = mine.items[4]
dyn = dynamic.DynamicClient(client.ApiClient())
deployments = dyn.resources.get(api_version="apps/v1", kind="Deployment")
body = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": fifth.metadata.name, "namespace": sys.argv[2]},
    "spec": {"replicas": 5},
}
applied = dyn.server_side_apply(
    deployments, body=body, namespace=sys.argv[2], field_manager="client", force_conflicts=True
)
entries = applied.to_dict()["metadata"]["managedFields"]
owners = [e["manager"] for e in entries if "f:replicas" in e["fieldsV1"].get("f:spec", {})]
print(f"applied replicas {applied.spec.replicas} owners {','.join(owners)}")
