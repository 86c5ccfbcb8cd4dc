"""The official Python client against `informer-mem serve`: discovery, a namespace's pods, a page of
every pod, a watch from resourceVersion 0, an Event watched, a namespace of its own made,
written into, deleted and watched. Usage: python list.py KUBECONFIG NAMESPACE"""
import sys

from kubernetes import client, config, watch

config.load_kube_config(config_file=sys.argv[1])
v1 = client.CoreV1Api()
# Discovery as the client asks it, with trailing slashes (/version/, /api/, /apis/, /api/v1/).
version = client.VersionApi().get_code()
groups = client.ApisApi().get_api_versions()
resources = v1.get_api_resources()
print(f"discovery {version.major} {client.CoreApi().get_api_versions().versions} "
      f"{'pods' in [r.name for r in resources.resources]} {type(groups).__name__}")
pods = v1.list_namespaced_pod(sys.argv[2])
print(f"pods {len(pods.items)}")
page = v1.list_pod_for_all_namespaces(limit=7)
print(f"page {len(page.items)} continue {bool(page.metadata._continue)}")
events = watch.Watch().stream(
    v1.list_namespaced_pod, sys.argv[2], resource_version="0", timeout_seconds=2
)
print(f"watch {sum(1 for _ in events)}")
# An Event written, then watched: the records a controller writes beside its cache.
namespace = sys.argv[2]
v1.create_namespaced_event(namespace, {
    "metadata": {"name": "python.1"},
    "involvedObject": {"kind": "Pod", "namespace": namespace, "name": pods.items[0].metadata.name},
    "reason": "Seen", "message": "seen by python", "type": "Normal",
})
events = watch.Watch().stream(v1.list_namespaced_event, namespace, timeout_seconds=1)
print("events watch " + " ".join(f"{e['type']} {e['object'].metadata.name}" for e in events))
# A namespace of its own, as a test suite makes one: created, a pod in it, labelled,
# deleted; then watched from before it was made, as an informer on namespaces resumes.
before = v1.list_namespace().metadata.resource_version
made = v1.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="python-made")))
v1.create_namespaced_pod("python-made", {
    "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
    "spec": {"containers": [{"name": "c", "image": "nginx"}]},
})
# A pod-security label, as a test suite sets it (the client's patch of a dict).
labelled = v1.patch_namespace(
    "python-made", {"metadata": {"labels": {"pod-security.kubernetes.io/enforce": "baseline"}}}
)
print(f"namespace labelled {labelled.metadata.labels['pod-security.kubernetes.io/enforce']}")
# The client reads the answer (the namespace, Terminating) as a dict.
deleted = v1.delete_namespace("python-made")
try:
    v1.read_namespace("python-made")
    gone = "kept"
except client.ApiException as e:
    gone = str(e.status)
print(f"namespace {made.status.phase} {deleted['status']['phase']} {gone}")
events = watch.Watch().stream(
    v1.list_namespace, resource_version=before, field_selector="metadata.name=python-made",
    timeout_seconds=1,
)
print("namespaces watch " + " ".join(f"{e['type']} {e['object'].status.phase}" for e in events))
