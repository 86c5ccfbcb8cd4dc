//! Services, kept as records: an operator's Service beside its Deployment, `kubectl
//! expose` and `kubectl create service`, the Services an ingress controller, external-dns
//! or a mesh's informer watches. Before, Services were listed empty and could not be
//! written, so a controller that owns one retried its reconcile for ever.
//!
//! kube-apiserver's Service registry does more to a write than most kinds' (k8s.io/kubernetes
//! v1.37.2 pkg/registry/core/service, pkg/apis/core/v1/defaults.go), and so does this:
//! - defaults ([`defaulted`], `SetDefaults_Service`): type `ClusterIP`, session affinity
//!   `None` (a `ClientIP` one's timeout three hours), each port's protocol `TCP` and
//!   target port its port, the traffic policies `Cluster`, a LoadBalancer's node ports
//!   allocated, its ingress's IP mode `VIP`;
//! - what a write keeps and drops ([`prepared`]): a create's status is empty, an update
//!   keeps the status and the cluster IPs and node ports it leaves out, and drops those
//!   of a type it leaves (a NodePort made a ClusterIP loses its node ports, an
//!   ExternalName its addresses and families); a write to `/status` keeps the spec;
//! - the IP family fields of a single-stack IPv4 cluster, then a cluster IP from the
//!   service range and node ports from theirs ([`allocator`]), a health check node port
//!   for a LoadBalancer whose external traffic stays local; an address or port asked for
//!   is checked against those other Services hold;
//! - validation ([`validate`]: `ValidateServiceCreate`, `ValidateServiceUpdate`,
//!   `ValidateServiceStatusUpdate`), and kubectl's table ([`crate::printers`]).
//!
//! A deleted Service's addresses and ports are free again at once. No Endpoints or
//! EndpointSlices follow a Service (kube-controller-manager makes those), and the
//! `kubernetes` Service of `default` is not served: it would name an address nobody
//! routes here.

pub(super) mod allocator;
mod validate;

use std::net::Ipv4Addr;

use serde_json::{Value, json};

use allocator::Taking;
pub(super) use allocator::{Allocated, Owner};
pub(super) use validate::{validate, validate_status};

use crate::status::ApiError;
use crate::write::{Causes, Endpoint};

/// kube-apiserver's `DefaultClientIPServiceAffinitySeconds`: three hours.
const CLIENT_IP_TIMEOUT_SECONDS: i64 = 10_800;

/// `SetDefaults_Service`: what kube-apiserver fills into a Service it decodes.
pub(super) fn defaulted(mut service: Value) -> Value {
    let Some(spec) = service.get_mut("spec").filter(|s| s.is_object()) else {
        return service;
    };
    if text(spec, "sessionAffinity").is_empty() {
        spec["sessionAffinity"] = json!("None");
    }
    match text(spec, "sessionAffinity") {
        "None" => {
            spec.as_object_mut()
                .map(|s| s.remove("sessionAffinityConfig"));
        }
        "ClientIP" if spec["sessionAffinityConfig"]["clientIP"]["timeoutSeconds"].is_null() => {
            let timeout = json!({"timeoutSeconds": CLIENT_IP_TIMEOUT_SECONDS});
            spec["sessionAffinityConfig"] = json!({ "clientIP": timeout });
        }
        _ => {}
    }
    if text(spec, "type").is_empty() {
        spec["type"] = json!("ClusterIP");
    }
    for port in spec["ports"].as_array_mut().into_iter().flatten() {
        if text(port, "protocol").is_empty() {
            port["protocol"] = json!("TCP");
        }
        let target = &port["targetPort"];
        if target.is_null() || *target == 0 || *target == "" {
            port["targetPort"] = port["port"].clone();
        }
    }
    if externally_accessible(spec) && text(spec, "externalTrafficPolicy").is_empty() {
        spec["externalTrafficPolicy"] = json!("Cluster");
    }
    let kind = text(spec, "type").to_owned();
    let with_cluster_ip = matches!(kind.as_str(), "ClusterIP" | "NodePort" | "LoadBalancer");
    if spec["internalTrafficPolicy"].is_null() && with_cluster_ip {
        spec["internalTrafficPolicy"] = json!("Cluster");
    }
    if kind == "LoadBalancer" {
        if spec["allocateLoadBalancerNodePorts"].is_null() {
            spec["allocateLoadBalancerNodePorts"] = json!(true);
        }
        let ingress = service["status"]["loadBalancer"]["ingress"].as_array_mut();
        for ingress in ingress.into_iter().flatten() {
            if !text(ingress, "ip").is_empty() && ingress["ipMode"].is_null() {
                ingress["ipMode"] = json!("VIP");
            }
        }
    }
    service
}

/// What kube-apiserver's registry makes of a write of `service` (defaulted), given the
/// live one for an update, before it validates it: through the object, the status
/// kept (an empty one for a create), what the IP family fields and the allocators give
/// it; through `/status`, the live spec. `owner` is the Service's namespace and name.
/// `Err` is the 422 (or, for a range with nothing left, the 500) kube-apiserver answers
/// before its validation runs.
pub(super) fn prepared(
    mut service: Value,
    live: Option<&Value>,
    endpoint: Endpoint,
    allocated: &Allocated,
    owner: &Owner,
) -> Result<Value, ApiError> {
    if let (Endpoint::Status, Some(live)) = (endpoint, live) {
        service["spec"] = live["spec"].clone();
        return Ok(service);
    }
    match live {
        None => service["status"] = json!({}),
        Some(live) => {
            service["status"] = live["status"].clone();
            patch_allocated_values(&mut service["spec"], &live["spec"]);
            normalize_cluster_ips(&mut service["spec"], Some(&live["spec"]));
            drop_type_dependent_fields(&mut service, &live["spec"]);
        }
    }
    if live.is_none() {
        normalize_cluster_ips(&mut service["spec"], None);
    }
    let was = live.map(|l| &l["spec"]);
    ip_family_fields(&mut service["spec"], was, &owner.1)?;
    allocate(&mut service["spec"], was, allocated, owner)?;
    if text(&service["spec"], "type") == "ExternalName" {
        // kube-apiserver drops it from every ExternalName it reads back
        // (`defaultOnReadInternalTrafficPolicy`).
        remove(&mut service["spec"], "internalTrafficPolicy");
    }
    Ok(service)
}

/// `patchAllocatedValues`: the cluster IPs, node ports (by port name, unless another
/// port has taken them) and health check node port an update leaves out, from the live
/// Service, where both the old and the new type have them.
fn patch_allocated_values(spec: &mut Value, was: &Value) {
    if needs_cluster_ip(was) && needs_cluster_ip(spec) {
        if text(spec, "clusterIP").is_empty() {
            spec["clusterIP"] = was["clusterIP"].clone();
        }
        if is_empty(&spec["clusterIPs"]) && !is_empty(&was["clusterIPs"]) {
            spec["clusterIPs"] = was["clusterIPs"].clone();
        }
    }
    if needs_node_port(was) && needs_node_port(spec) {
        let used: Vec<i64> = node_ports(spec)
            .filter(|port| node_ports(was).any(|p| p == *port))
            .collect();
        let by_name = |name: &Value| {
            let old = was["ports"].as_array().into_iter().flatten();
            // The last port of the name, as Go's map of them keeps it.
            old.filter(|p| p["name"] == *name)
                .map(|p| p["nodePort"].as_i64().unwrap_or_default())
                .next_back()
                .unwrap_or_default()
        };
        for port in spec["ports"].as_array_mut().into_iter().flatten() {
            if port["nodePort"].as_i64().unwrap_or_default() == 0 {
                let old = by_name(&port["name"]);
                if old != 0 && !used.contains(&old) {
                    port["nodePort"] = json!(old);
                }
            }
        }
    }
    if needs_health_check(was)
        && needs_health_check(spec)
        && spec["healthCheckNodePort"].as_i64().unwrap_or_default() == 0
    {
        spec["healthCheckNodePort"] = was["healthCheckNodePort"].clone();
    }
}

/// `normalizeClusterIPs`: `clusterIPs` kept in step with `clusterIP`, for clients that
/// know only the one (`was`: the live spec of an update).
fn normalize_cluster_ips(spec: &mut Value, was: Option<&Value>) {
    let ip = text(spec, "clusterIP").to_owned();
    let Some(was) = was else {
        if !ip.is_empty() && is_empty(&spec["clusterIPs"]) {
            spec["clusterIPs"] = json!([ip]);
        }
        return;
    };
    if !is_empty(&was["clusterIPs"])
        && is_empty(&spec["clusterIPs"])
        && text(was, "clusterIP") == ip
    {
        spec["clusterIPs"] = was["clusterIPs"].clone();
    }
    if text(was, "clusterIP") != ip {
        let same_list = spec["clusterIPs"] == was["clusterIPs"];
        if !text(was, "clusterIP").is_empty() && ip.is_empty() {
            if same_list {
                remove(spec, "clusterIPs");
            }
        } else if same_list {
            spec["clusterIPs"] = json!([ip]);
        }
    }
}

/// `dropTypeDependentFields`: what an update of a Service to another type leaves behind
/// of the old one's, where the write kept the old values: an ExternalName's cluster IPs,
/// families and family policy; a ClusterIP's node ports; a health check port where none
/// is needed; the allocation setting and class of a LoadBalancer; the external traffic
/// policy where nothing is external; a LoadBalancer's status.
fn drop_type_dependent_fields(service: &mut Value, was: &Value) {
    let spec = &mut service["spec"];
    if needs_cluster_ip(was) && !needs_cluster_ip(spec) {
        if spec["clusterIP"] == was["clusterIP"] && spec["clusterIPs"] == was["clusterIPs"] {
            remove(spec, "clusterIP");
            remove(spec, "clusterIPs");
        }
        if spec["ipFamilies"] == was["ipFamilies"] {
            remove(spec, "ipFamilies");
        }
        if spec["ipFamilyPolicy"] == was["ipFamilyPolicy"] {
            remove(spec, "ipFamilyPolicy");
        }
    }
    if needs_node_port(was)
        && !needs_node_port(spec)
        && node_ports(spec).all(|port| node_ports(was).any(|p| p == port))
    {
        for port in spec["ports"].as_array_mut().into_iter().flatten() {
            remove(port, "nodePort");
        }
    }
    if needs_health_check(was)
        && !needs_health_check(spec)
        && spec["healthCheckNodePort"] == was["healthCheckNodePort"]
    {
        remove(spec, "healthCheckNodePort");
    }
    let was_balancer = text(was, "type") == "LoadBalancer";
    if was_balancer && text(spec, "type") != "LoadBalancer" {
        let (new, old) = (
            &spec["allocateLoadBalancerNodePorts"],
            &was["allocateLoadBalancerNodePorts"],
        );
        if !new.is_null() && new == old {
            remove(spec, "allocateLoadBalancerNodePorts");
        }
        if spec["loadBalancerClass"] == was["loadBalancerClass"] {
            remove(spec, "loadBalancerClass");
        }
    }
    if externally_accessible(was)
        && !externally_accessible(spec)
        && spec["externalTrafficPolicy"] == was["externalTrafficPolicy"]
    {
        remove(spec, "externalTrafficPolicy");
    }
    if text(&service["spec"], "type") != "LoadBalancer" {
        service["status"]["loadBalancer"] = json!({});
    }
}

/// `initIPFamilyFields` on a single-stack IPv4 cluster: the family policy (the live
/// one, or `RequireDualStack` for a headless Service without a selector, or
/// `SingleStack`), the families the cluster IPs give, IPv4 where none is asked; what the
/// cluster cannot give is a 422: IPv6, dual stack for a Service with addresses.
fn ip_family_fields(spec: &mut Value, was: Option<&Value>, name: &str) -> Result<(), ApiError> {
    if text(spec, "type") == "ExternalName" {
        return Ok(());
    }
    let selectorless = spec["selector"].as_object().is_none_or(|s| s.is_empty());
    if spec["ipFamilyPolicy"].is_null() {
        let kept = was.map(|w| &w["ipFamilyPolicy"]).filter(|p| !p.is_null());
        spec["ipFamilyPolicy"] = match kept {
            Some(policy) => policy.clone(),
            None if headless(spec) && selectorless => json!("RequireDualStack"),
            None => json!("SingleStack"),
        };
    }
    let mut causes = Causes::default();
    validate::cluster_ips_related(spec, was, &mut causes);
    causes.into_result("Service", name)?;
    let mut causes = Causes::default();
    let policy = text(spec, "ipFamilyPolicy").to_owned();
    if policy == "SingleStack" {
        let why = "must be 'RequireDualStack' or 'PreferDualStack' when multiple";
        if list(&spec["clusterIPs"]).len() == 2 {
            let why = format!("{why} cluster IPs are specified");
            causes.invalid("spec.ipFamilyPolicy", &json!(policy), &why);
        }
        if list(&spec["ipFamilies"]).len() == 2 {
            let why = format!("{why} IP families are specified");
            causes.invalid("spec.ipFamilyPolicy", &json!(policy), &why);
        }
    }
    let ips: Vec<String> = (list(&spec["clusterIPs"]).iter())
        .filter_map(|ip| ip.as_str().map(str::to_owned))
        .collect();
    for (i, ip) in ips.iter().enumerate() {
        if ip == "None" {
            break;
        }
        if i < list(&spec["ipFamilies"]).len() {
            continue;
        }
        match ip.parse::<Ipv4Addr>() {
            Ok(_) => push(spec, "ipFamilies", json!("IPv4")),
            Err(_) => causes.invalid(
                &format!("spec.clusterIPs[{i}]"),
                &spec["clusterIPs"],
                "IPv6 is not configured on this cluster",
            ),
        }
    }
    causes.into_result("Service", name)?;
    if headless(spec) && selectorless {
        if list(&spec["ipFamilies"]).is_empty() {
            spec["ipFamilies"] = json!(["IPv4"]);
        }
        if list(&spec["ipFamilies"]).len() < 2 && policy != "SingleStack" {
            let other = match spec["ipFamilies"][0].as_str() {
                Some("IPv4") => "IPv6",
                _ => "IPv4",
            };
            push(spec, "ipFamilies", json!(other));
        }
        return Ok(());
    }
    let mut causes = Causes::default();
    if policy == "RequireDualStack" {
        let why = "this cluster is not configured for dual-stack services";
        causes.invalid("spec.ipFamilyPolicy", &json!(policy), why);
    }
    for (i, family) in list(&spec["ipFamilies"]).iter().enumerate() {
        if *family != "IPv4" {
            let at = format!("spec.ipFamilies[{i}]");
            causes.invalid(&at, family, "not configured on this cluster");
        }
    }
    causes.into_result("Service", name)?;
    if list(&spec["ipFamilies"]).is_empty() {
        spec["ipFamilies"] = json!(["IPv4"]);
    }
    Ok(())
}

/// The allocators' part of a write (`allocateCreate`, `allocateUpdate`): a cluster IP
/// for a Service that needs one and has none, the one it names checked, on create or
/// where an ExternalName becomes another type (an update's other changes of the address
/// are validation's to refuse); node ports for a NodePort or a LoadBalancer (one for all
/// ports of the same number), those it names checked; a health check node port where it
/// needs one.
fn allocate(
    spec: &mut Value,
    was: Option<&Value>,
    allocated: &Allocated,
    owner: &Owner,
) -> Result<(), ApiError> {
    let name = owner.1.as_str();
    if needs_cluster_ip(spec) && was.is_none_or(|was| !needs_cluster_ip(was)) {
        let first = spec["clusterIPs"][0].as_str().map(str::to_owned);
        match first.as_deref() {
            None | Some("") => {
                let ip = allocated.next_ip().ok_or_else(|| {
                    ApiError::internal(format!(
                        "failed to allocate a serviceIP for Service {name:?}: range is full"
                    ))
                })?;
                spec["clusterIP"] = json!(ip.to_string());
                spec["clusterIPs"] = json!([ip.to_string()]);
            }
            Some("None") => {}
            Some(text) => {
                // Validation took anything but an IPv4 address already.
                let ip: Ipv4Addr = text.parse().map_err(|_| {
                    ApiError::internal(format!("failed to parse service IP {text:?}"))
                })?;
                if let Err(why) = allocated.check_ip(ip, owner) {
                    let mut causes = Causes::default();
                    let why = format!("failed to allocate IP {text}: {why}");
                    causes.invalid("spec.clusterIPs", &spec["clusterIPs"], &why);
                    causes.into_result("Service", name)?;
                }
            }
        }
    }
    let mut taking = Taking::default();
    if needs_node_port(spec) {
        node_ports_allocated(spec, allocated, owner, &mut taking)?;
    }
    if needs_health_check(spec) {
        let asked = spec["healthCheckNodePort"].as_i64().unwrap_or_default();
        let port = match asked {
            0 => allocated.next_port(owner, &mut taking).ok_or_else(|| {
                ApiError::internal(
                    "failed to allocate a HealthCheck NodePort 0: range is full".to_owned(),
                )
            })?,
            asked => {
                let port = u16::try_from(asked).unwrap_or_default();
                allocated.check_port(port, owner, &taking).map_err(|why| {
                    ApiError::internal(format!(
                        "failed to allocate requested HealthCheck NodePort {asked}: {why}"
                    ))
                })?;
                Allocated::take_port(&mut taking, port);
                port
            }
        };
        spec["healthCheckNodePort"] = json!(port);
    }
    Ok(())
}

/// `initNodePorts`: each port's node port, the one it names or one of the same port
/// number's, else the next free one where the type allocates them (a LoadBalancer with
/// `allocateLoadBalancerNodePorts: false` keeps only those asked for).
fn node_ports_allocated(
    spec: &mut Value,
    allocated: &Allocated,
    owner: &Owner,
    taking: &mut Taking,
) -> Result<(), ApiError> {
    let allocates = text(spec, "type") == "NodePort"
        || (text(spec, "type") == "LoadBalancer" && spec["allocateLoadBalancerNodePorts"] == true);
    let name = owner.1.as_str();
    let refused = |i: usize, port: i64, why: &str| {
        let mut causes = Causes::default();
        causes.invalid(&format!("spec.ports[{i}].nodePort"), &json!(port), why);
        causes.into_result("Service", name)
    };
    let requested: Vec<(i64, i64)> = (spec["ports"].as_array().into_iter().flatten())
        .map(|p| (number(&p["port"]), number(&p["nodePort"])))
        .collect();
    let mut by_port: Vec<(i64, i64)> = Vec::new();
    let Some(ports) = spec["ports"].as_array_mut() else {
        return Ok(());
    };
    for (i, port) in ports.iter_mut().enumerate() {
        let (number_, asked) = (number(&port["port"]), number(&port["nodePort"]));
        if asked == 0 && !allocates {
            continue;
        }
        let given = by_port.iter().find(|(p, _)| *p == number_).map(|(_, n)| *n);
        match given {
            None => {
                let wanted = (requested.iter())
                    .find(|(p, n)| *p == number_ && *n != 0)
                    .map(|(_, n)| *n);
                let node_port = match wanted {
                    Some(wanted) => {
                        let checked =
                            u16::try_from(wanted).map_err(|_| allocator::PORT_OUT_OF_RANGE);
                        match checked
                            .and_then(|p| allocated.check_port(p, owner, taking).map(|()| p))
                        {
                            Ok(p) => Allocated::take_port(taking, p),
                            Err(why) => refused(i, wanted, why)?,
                        }
                        wanted
                    }
                    None => i64::from(allocated.next_port(owner, taking).ok_or_else(|| {
                        ApiError::internal(
                            "failed to allocate a nodePort: range is full".to_owned(),
                        )
                    })?),
                };
                port["nodePort"] = json!(node_port);
                by_port.push((number_, node_port));
            }
            Some(given) if asked == 0 => port["nodePort"] = json!(given),
            Some(given) if asked != given => {
                let checked = u16::try_from(asked).map_err(|_| allocator::PORT_OUT_OF_RANGE);
                match checked.and_then(|p| allocated.check_port(p, owner, taking).map(|()| p)) {
                    Ok(p) => Allocated::take_port(taking, p),
                    Err(why) => refused(i, asked, why)?,
                }
            }
            Some(_) => {}
        }
    }
    Ok(())
}

fn text<'a>(value: &'a Value, field: &str) -> &'a str {
    value[field].as_str().unwrap_or_default()
}

fn number(value: &Value) -> i64 {
    value.as_i64().unwrap_or_default()
}

/// The elements of a list field (none where it is unset).
fn list(value: &Value) -> &[Value] {
    value.as_array().map_or(&[], Vec::as_slice)
}

fn is_empty(value: &Value) -> bool {
    list(value).is_empty()
}

fn push(spec: &mut Value, field: &str, value: Value) {
    match spec[field].as_array_mut() {
        Some(list) => list.push(value),
        None => spec[field] = json!([value]),
    }
}

fn remove(value: &mut Value, field: &str) {
    value.as_object_mut().map(|o| o.remove(field));
}

/// The node ports a spec's ports name (those not 0).
fn node_ports(spec: &Value) -> impl Iterator<Item = i64> + '_ {
    (spec["ports"].as_array().into_iter().flatten())
        .map(|p| number(&p["nodePort"]))
        .filter(|port| *port != 0)
}

/// A headless Service: `clusterIP: None`.
fn headless(spec: &Value) -> bool {
    text(spec, "clusterIP") == "None"
}

fn needs_cluster_ip(spec: &Value) -> bool {
    text(spec, "type") != "ExternalName"
}

fn needs_node_port(spec: &Value) -> bool {
    matches!(text(spec, "type"), "NodePort" | "LoadBalancer")
}

/// `NeedsHealthCheck`: a LoadBalancer whose external traffic stays on the node.
fn needs_health_check(spec: &Value) -> bool {
    text(spec, "type") == "LoadBalancer" && text(spec, "externalTrafficPolicy") == "Local"
}

/// `ExternallyAccessible`: a LoadBalancer, a NodePort, a ClusterIP with external IPs.
fn externally_accessible(spec: &Value) -> bool {
    match text(spec, "type") {
        "LoadBalancer" | "NodePort" => true,
        "ClusterIP" => !is_empty(&spec["externalIPs"]),
        _ => false,
    }
}

#[cfg(test)]
mod tests;
