"""The official Python client against `informer-mem serve` of Deployments (apps/v1): a
namespace's, every one's, and a watch from resourceVersion 0, each decoded into the
client's models; then a JSON patch of one's status, as a controller writes it.
Usage: python deployments.py KUBECONFIG NAMESPACE"""
import sys

from kubernetes import client, config, watch

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
