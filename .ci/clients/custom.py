"""The official Python client's CustomObjectsApi against `informer-mem serve` of cert-manager
Certificates copied from a sample with a status: a list, the status subresource written by a
merge patch as an operator writes it (the generation stays), a write to the object that
leaves the status as it was, and the status read back.
Usage: python custom.py KUBECONFIG NAMESPACE"""
import sys

from kubernetes import client, config

config.load_kube_config(config_file=sys.argv[1])
namespace = sys.argv[2]
api = client.CustomObjectsApi()
group, version, plural = "cert-manager.io", "v1", "certificates"
listed = api.list_namespaced_custom_object(group, version, namespace, plural)
print(f"certificates {len(listed['items'])}")
name = listed["items"][0]["metadata"]["name"]
generation = listed["items"][0]["metadata"]["generation"]
written = api.patch_namespaced_custom_object_status(
    group, version, namespace, plural, name, {"status": {"revision": 42}}
)
print(f"status revision {written['status']['revision']} "
      f"generation kept {written['metadata']['generation'] == generation}")
patched = api.patch_namespaced_custom_object(
    group, version, namespace, plural, name,
    {"spec": {"duration": "48h"}, "status": {"revision": 1}},
)
print(f"object status revision {patched['status']['revision']} "
      f"generation moved {patched['metadata']['generation'] == generation + 1}")
read = api.get_namespaced_custom_object_status(group, version, namespace, plural, name)
print(f"read {read['spec']['duration']} {read['status']['revision']}")
