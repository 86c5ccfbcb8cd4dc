# A Python operator beside a pod informer: a Secret from a manifest's stringData, a
# Service and a ServiceAccount, then
# the official client's leader election on its ConfigMap lock (kubernetes.leaderelection
# has no other lock), which exits once it leads.
# Usage: configmap_lock.py KUBECONFIG NAMESPACE
import json, os, sys
from kubernetes import client, config
from kubernetes.leaderelection import electionconfig, leaderelection
from kubernetes.leaderelection.resourcelock.configmaplock import ConfigMapLock

config.load_kube_config(sys.argv[1])
namespace = sys.argv[2]
v1 = client.CoreV1Api()
# A Secret from a manifest's stringData, read back from its data.
v1.create_namespaced_secret(namespace, {
    "metadata": {"name": "python-secret"}, "stringData": {"password": "hunter2"},
})
secret = v1.read_namespaced_secret("python-secret", namespace)
print(f"secret {secret.type} {sorted(secret.data)} {secret.data['password']}")
# The Service and ServiceAccount an operator makes for its workload, decoded into the
# client's models; the Service's address and node port are the server's.
v1.create_namespaced_service_account(namespace, {"metadata": {"name": "python-bot"}})
service = v1.create_namespaced_service(namespace, {
    "metadata": {"name": "python-web"},
    "spec": {"type": "NodePort", "selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": "http"}]},
})
port = service.spec.ports[0]
print(f"service {service.spec.type} {service.spec.cluster_ip.startswith('10.')} "
      f"{port.protocol} {port.target_port} {30000 <= port.node_port <= 32767} "
      f"{v1.read_namespaced_service_account('python-bot', namespace).metadata.name}")
def leading():
    lock = v1.read_namespaced_config_map("python-lock", namespace)
    record = json.loads(lock.metadata.annotations["control-plane.alpha.kubernetes.io/leader"])
    print(f"leading {record['holderIdentity']}", flush=True)
    os._exit(0)
lock = ConfigMapLock("python-lock", namespace, "python-0")
election = electionconfig.Config(lock, lease_duration=15, renew_deadline=10, retry_period=2,
                                 onstarted_leading=leading, onstopped_leading=None)
leaderelection.LeaderElection(election).run()
