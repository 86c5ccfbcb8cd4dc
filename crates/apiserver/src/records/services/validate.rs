//! kube-apiserver's validation of a Service (k8s.io/kubernetes v1.37.2
//! pkg/apis/core/validation: `ValidateServiceCreate`, `ValidateServiceUpdate`,
//! `validateService`, `validateServicePort`, `ValidateServiceClusterIPsRelatedFields`,
//! `ValidateServiceStatusUpdate`), each cause in its words and in its order.

use std::collections::BTreeSet;
use std::net::IpAddr;

use serde_json::{Value, json};

use super::{externally_accessible, headless, list, needs_health_check, number, text};
use crate::version::NamespacedName;
use crate::write::{self, Causes};
use k8s::names::{
    dns_label_errors, dns_subdomain_errors, label_value_errors, qualified_name_errors,
};

/// Why a port number is refused.
const PORT_RANGE: &str = "must be between 1 and 65535, inclusive";
/// Why an address is refused.
const NOT_AN_IP: &str = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)";
/// The longest session affinity a ClientIP Service may have: a day.
const MAX_AFFINITY_SECONDS: i64 = 86_400;

/// `ValidateServiceCreate` (`current`: `None`) or `ValidateServiceUpdate` of `service`,
/// as it is to be kept: its name a DNS-1123 label (`RelaxedServiceNameValidation`, GA in
/// 1.37), its metadata as every object's, then the update's immutable fields and the
/// Service's own rules.
pub(in crate::records) fn validate(
    key: &NamespacedName,
    service: &Value,
    current: Option<&Value>,
    causes: &mut Causes,
) {
    write::label_named_metadata(&key.name, &service["metadata"], causes);
    let spec = &service["spec"];
    if let Some(current) = current {
        let was = &current["spec"];
        upgraded_cluster_ips(spec, was, causes);
        upgraded_families(spec, was, causes);
        if text(was, "type") == "LoadBalancer"
            && text(spec, "type") == "LoadBalancer"
            && spec["loadBalancerClass"] != was["loadBalancerClass"]
        {
            let why = "may not change once set";
            causes.invalid("spec.loadBalancerClass", &spec["loadBalancerClass"], why);
        }
        if needs_health_check(was)
            && needs_health_check(spec)
            && spec["healthCheckNodePort"] != was["healthCheckNodePort"]
        {
            let why = "Forbidden: field is immutable".to_owned();
            causes.push("FieldValueForbidden", "spec.healthCheckNodePort", why);
        }
    }
    service_spec(service, current.map(|c| &c["spec"]), causes);
}

/// `ValidateServiceStatusUpdate`: the metadata, and the load balancer's ingress, which
/// only a LoadBalancer has: each an address or a DNS name, with its IP mode.
pub(in crate::records) fn validate_status(
    key: &NamespacedName,
    service: &Value,
    causes: &mut Causes,
) {
    write::label_named_metadata(&key.name, &service["metadata"], causes);
    let ingress = list(&service["status"]["loadBalancer"]["ingress"]);
    if text(&service["spec"], "type") != "LoadBalancer" && !ingress.is_empty() {
        let why = "Forbidden: may only be used when `spec.type` is 'LoadBalancer'".to_owned();
        causes.push("FieldValueForbidden", "status.loadBalancer.ingress", why);
        return;
    }
    for (i, ingress) in ingress.iter().enumerate() {
        let at = format!("status.loadBalancer.ingress[{i}]");
        let ip = text(ingress, "ip");
        if !ip.is_empty() && ip.parse::<IpAddr>().is_err() {
            causes.invalid(&format!("{at}.ip"), &json!(ip), NOT_AN_IP);
        }
        match (&ingress["ipMode"], ip.is_empty()) {
            (Value::Null, false) => causes.push(
                "FieldValueRequired",
                &format!("{at}.ipMode"),
                "Required value: must be specified when `ip` is set".to_owned(),
            ),
            (Value::Null, true) => {}
            (_, true) => causes.push(
                "FieldValueForbidden",
                &format!("{at}.ipMode"),
                "Forbidden: may not be specified when `ip` is not set".to_owned(),
            ),
            (mode, false) => one_of(causes, &format!("{at}.ipMode"), mode, &["Proxy", "VIP"]),
        }
        let hostname = text(ingress, "hostname");
        if !hostname.is_empty() {
            let whys = dns_subdomain_errors(hostname);
            causes.invalid_each(&format!("{at}.hostname"), hostname, whys);
            if hostname.parse::<IpAddr>().is_ok() {
                let why = "must be a DNS name, not an IP address";
                causes.invalid(&format!("{at}.hostname"), &json!(hostname), why);
            }
        }
    }
}

/// `validateService`: ports, type, the external name, selector, session affinity, the
/// cluster IPs, external IPs, node ports, source ranges, the load balancer's settings
/// and the traffic policies.
fn service_spec(service: &Value, was: Option<&Value>, causes: &mut Causes) {
    let spec = &service["spec"];
    let kind = text(spec, "type");
    let ports = list(&spec["ports"]);
    if ports.is_empty() && !headless(spec) && kind != "ExternalName" {
        causes.required("spec.ports");
    }
    type_fields(spec, causes);
    let mut names = BTreeSet::new();
    for (i, port) in ports.iter().enumerate() {
        let at = format!("spec.ports[{i}]");
        service_port(port, &at, ports.len() > 1, &mut names, causes);
    }
    for (key, value) in spec["selector"].as_object().into_iter().flatten() {
        causes.invalid_each("spec.selector", key, qualified_name_errors(key));
        let value = value.as_str().unwrap_or_default();
        causes.invalid_each("spec.selector", value, label_value_errors(value));
    }
    session_affinity(spec, causes);
    cluster_ips_related(spec, was, causes);
    let old_external = was.map(|w| list(&w["externalIPs"])).unwrap_or_default();
    for (i, ip) in list(&spec["externalIPs"]).iter().enumerate() {
        if !old_external.contains(ip) {
            endpoint_ip(ip, &format!("spec.externalIPs[{i}]"), causes);
        }
    }
    match kind {
        "" => causes.required("spec.type"),
        kind => {
            let supported = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"];
            one_of(causes, "spec.type", &json!(kind), &supported);
        }
    }
    if kind == "ClusterIP" {
        for (i, port) in ports.iter().enumerate() {
            if number(&port["nodePort"]) != 0 {
                let at = format!("spec.ports[{i}].nodePort");
                forbidden(causes, &at, "may not be used when `type` is 'ClusterIP'");
            }
        }
    }
    duplicated_ports(ports, causes);
    load_balancer_fields(spec, causes);
    traffic_policies(spec, causes);
}

/// What a type asks of the other fields: no headless NodePort or LoadBalancer; an
/// ExternalName's external name, a DNS-1123 subdomain, and no addresses or families.
fn type_fields(spec: &Value, causes: &mut Causes) {
    let kind = text(spec, "type");
    match kind {
        "LoadBalancer" | "NodePort" if headless(spec) => {
            let why = format!("may not be set to 'None' for {kind} services");
            causes.invalid("spec.clusterIPs[0]", &json!("None"), &why);
        }
        "ExternalName" => {
            let why = "may not be set for ExternalName services";
            for field in ["clusterIPs", "ipFamilies"] {
                if !list(&spec[field]).is_empty() {
                    forbidden(causes, &format!("spec.{field}"), why);
                }
            }
            if !spec["ipFamilyPolicy"].is_null() {
                forbidden(causes, "spec.ipFamilyPolicy", why);
            }
            let name = text(spec, "externalName");
            let cname = name.strip_suffix('.').unwrap_or(name);
            if cname.is_empty() {
                causes.required("spec.externalName");
            } else {
                causes.invalid_each("spec.externalName", cname, dns_subdomain_errors(cname));
            }
        }
        _ => {}
    }
}

/// What only a LoadBalancer may have: source ranges (valid CIDRs), the node port
/// allocation setting (which it must have) and a class (a qualified name).
fn load_balancer_fields(spec: &Value, causes: &mut Causes) {
    let balancer = text(spec, "type") == "LoadBalancer";
    let only = "may only be used when `type` is 'LoadBalancer'";
    let ranges = list(&spec["loadBalancerSourceRanges"]);
    if !ranges.is_empty() && !balancer {
        forbidden(causes, "spec.LoadBalancerSourceRanges", only);
    }
    for (i, range) in ranges.iter().enumerate() {
        if !is_cidr(range.as_str().unwrap_or_default().trim()) {
            let why = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)";
            causes.invalid(&format!("spec.LoadBalancerSourceRanges[{i}]"), range, why);
        }
    }
    let allocation = &spec["allocateLoadBalancerNodePorts"];
    if !allocation.is_null() && !balancer {
        forbidden(causes, "spec.allocateLoadBalancerNodePorts", only);
    }
    if balancer && allocation.is_null() {
        causes.required("allocateLoadBalancerNodePorts");
    }
    match spec["loadBalancerClass"].as_str() {
        Some(class) if balancer => {
            let whys = qualified_name_errors(class);
            causes.invalid_each("spec.loadBalancerClass", class, whys);
        }
        Some(_) => forbidden(causes, "spec.loadBalancerClass", only),
        None => {}
    }
}

/// `validateServicePort`.
fn service_port(
    port: &Value,
    at: &str,
    name_required: bool,
    names: &mut BTreeSet<String>,
    causes: &mut Causes,
) {
    let name = text(port, "name");
    if name.is_empty() && name_required {
        causes.required(&format!("{at}.name"));
    } else if !name.is_empty() {
        causes.invalid_each(&format!("{at}.name"), name, dns_label_errors(name));
        if !names.insert(name.to_owned()) {
            duplicate(causes, &format!("{at}.name"), &json!(name));
        }
    }
    let number_ = number(&port["port"]);
    if !(1..=65535).contains(&number_) {
        causes.invalid(&format!("{at}.port"), &json!(number_), PORT_RANGE);
    }
    match text(port, "protocol") {
        "" => causes.required(&format!("{at}.protocol")),
        protocol => {
            let supported = ["SCTP", "TCP", "UDP"];
            one_of(
                causes,
                &format!("{at}.protocol"),
                &json!(protocol),
                &supported,
            );
        }
    }
    port_number_or_name(&port["targetPort"], &format!("{at}.targetPort"), causes);
    if let Some(protocol) = port["appProtocol"].as_str() {
        let whys = qualified_name_errors(protocol);
        causes.invalid_each(&format!("{at}.appProtocol"), protocol, whys);
    }
}

/// `ValidatePortNumOrName`: a number in 1-65535, or an IANA service name.
fn port_number_or_name(port: &Value, at: &str, causes: &mut Causes) {
    if let Some(number_) = port.as_i64() {
        if !(1..=65535).contains(&number_) {
            causes.invalid(at, &json!(number_), PORT_RANGE);
        }
        return;
    }
    let name = port.as_str().unwrap_or_default();
    let mut why = Vec::new();
    if name.len() > 15 {
        why.push("must be no more than 15 characters");
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    {
        why.push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)");
    }
    if !name.chars().any(|c| c.is_ascii_lowercase()) {
        why.push("must contain at least one letter (a-z)");
    }
    if name.contains("--") {
        why.push("must not contain consecutive hyphens");
    }
    if name.starts_with('-') || name.ends_with('-') {
        why.push("must not begin or end with a hyphen");
    }
    for why in why {
        causes.invalid(at, &json!(name), why);
    }
}

/// The session affinity: `None` without a configuration, or `ClientIP` with a timeout of
/// at most a day.
fn session_affinity(spec: &Value, causes: &mut Causes) {
    let config = &spec["sessionAffinityConfig"];
    match text(spec, "sessionAffinity") {
        "" => causes.required("spec.sessionAffinity"),
        "None" if !config.is_null() => {
            let why = "must not be set when session affinity is None";
            forbidden(causes, "spec.sessionAffinityConfig", why);
        }
        "None" => {}
        "ClientIP" => {
            let why = "Required value: when session affinity type is ClientIP".to_owned();
            let at = "spec.sessionAffinityConfig";
            let timeout = &config["clientIP"]["timeoutSeconds"];
            if config.is_null() {
                causes.push("FieldValueRequired", at, why);
            } else if config["clientIP"].is_null() {
                causes.push("FieldValueRequired", &format!("{at}.clientIP"), why);
            } else if timeout.is_null() {
                causes.push(
                    "FieldValueRequired",
                    &format!("{at}.clientIP.timeoutSeconds"),
                    why,
                );
            } else if !(1..=MAX_AFFINITY_SECONDS).contains(&number(timeout)) {
                let why = format!("must be greater than 0 and less than {MAX_AFFINITY_SECONDS}");
                causes.invalid(&format!("{at}.clientIP.timeoutSeconds"), timeout, &why);
            }
        }
        other => {
            let supported = ["ClientIP", "None"];
            one_of(causes, "spec.sessionAffinity", &json!(other), &supported);
        }
    }
}

/// `ValidateServiceClusterIPsRelatedFields` (none for an ExternalName): `clusterIPs`
/// starts with `clusterIP`, the families and the policy are known ones, each address is
/// one (`None` only alone), at most two and of two families, the families those of the
/// addresses.
pub(super) fn cluster_ips_related(spec: &Value, was: Option<&Value>, causes: &mut Causes) {
    if text(spec, "type") == "ExternalName" {
        return;
    }
    let ip = text(spec, "clusterIP");
    let ips = list(&spec["clusterIPs"]);
    match (ip.is_empty(), ips.first()) {
        (false, None) => causes.required("spec.clusterIPs"),
        (false, Some(first)) if first != ip => {
            causes.invalid(
                "spec.clusterIPs",
                &spec["clusterIPs"],
                "first value must match `clusterIP`",
            );
        }
        (true, Some(_)) => {
            let why = "must be empty when `clusterIP` is not specified";
            causes.invalid("spec.clusterIPs", &spec["clusterIPs"], why);
        }
        _ => {}
    }
    families_and_policy(spec, causes);
    let old = was.map(|w| list(&w["clusterIPs"])).unwrap_or_default();
    let mut invalid = false;
    for (i, each) in ips.iter().enumerate() {
        if i == 0 && *each == "None" {
            if ips.len() > 1 {
                invalid = true;
                let why = "'None' must be the first and only value";
                causes.invalid("spec.clusterIPs", &spec["clusterIPs"], why);
            }
            continue;
        }
        if !old.contains(each)
            && each
                .as_str()
                .and_then(|t| t.parse::<IpAddr>().ok())
                .is_none()
        {
            invalid = true;
            causes.invalid(&format!("spec.clusterIPs[{i}]"), each, NOT_AN_IP);
        }
    }
    if ips.len() > 2 {
        causes.invalid(
            "spec.clusterIPs",
            &spec["clusterIPs"],
            "may only hold up to 2 values",
        );
    }
    if invalid {
        return;
    }
    let parsed: Vec<IpAddr> = ips
        .iter()
        .filter_map(|t| t.as_str()?.parse().ok())
        .collect();
    if ips.len() > 1 && !(parsed.len() == 2 && parsed[0].is_ipv4() != parsed[1].is_ipv4()) {
        let why = "may specify no more than one IP for each IP family";
        causes.invalid("spec.clusterIPs", &spec["clusterIPs"], why);
    }
    let families = list(&spec["ipFamilies"]);
    if !headless(spec) {
        for (i, (ip, family)) in parsed.iter().zip(families).enumerate() {
            let of_ip = if ip.is_ipv4() { "IPv4" } else { "IPv6" };
            if *family != of_ip {
                let why = format!("expected an {family} value as indicated by `ipFamilies[{i}]`");
                causes.invalid(
                    &format!("spec.clusterIPs[{i}]"),
                    &json!(ip.to_string()),
                    &why,
                );
            }
        }
    }
}

/// The IP families (known ones, none twice) and the family policy (a known one).
fn families_and_policy(spec: &Value, causes: &mut Causes) {
    let mut seen = BTreeSet::new();
    for (i, family) in list(&spec["ipFamilies"]).iter().enumerate() {
        let at = format!("spec.ipFamilies[{i}]");
        one_of(causes, &at, family, &["IPv4", "IPv6"]);
        if !seen.insert(family.to_string()) {
            duplicate(causes, &at, family);
        }
    }
    let policy = &spec["ipFamilyPolicy"];
    if !policy.is_null() {
        let supported = ["PreferDualStack", "RequireDualStack", "SingleStack"];
        one_of(causes, "spec.ipFamilyPolicy", policy, &supported);
    }
}

/// `validateUpgradeDowngradeClusterIPs`: the primary cluster IP may not change, nor be
/// unset, but between an ExternalName and another type, or headless to headless.
fn upgraded_cluster_ips(spec: &Value, was: &Value, causes: &mut Causes) {
    if text(spec, "type") == "ExternalName" || text(was, "type") == "ExternalName" {
        return;
    }
    if headless(spec) && headless(was) {
        return;
    }
    let (new, old) = (list(&spec["clusterIPs"]), list(&was["clusterIPs"]));
    let changed = "may not change once set";
    let value = &spec["clusterIPs"];
    if new.len() == old.len() {
        for (i, (n, o)) in new.iter().zip(old).enumerate() {
            if n != o {
                causes.invalid(&format!("spec.clusterIPs[{i}]"), value, changed);
            }
        }
    } else if new.len() < old.len() {
        if new.is_empty() {
            let why = "primary clusterIP can not be unset";
            causes.invalid("spec.clusterIPs[0]", value, why);
        } else if new[0] != old[0] {
            causes.invalid("spec.clusterIPs[0]", value, changed);
        }
        if new.len() == 1 && spec["ipFamilyPolicy"] != "SingleStack" {
            let why = "must be set to 'SingleStack' when releasing the secondary clusterIP";
            causes.invalid("spec.ipFamilyPolicy", &spec["ipFamilyPolicy"], why);
        }
    } else if !old.is_empty() && new[0] != old[0] {
        causes.invalid("spec.clusterIPs[0]", value, changed);
    }
}

/// `validateUpgradeDowngradeIPFamilies`: the primary family may not change.
fn upgraded_families(spec: &Value, was: &Value, causes: &mut Causes) {
    if text(spec, "type") == "ExternalName" || text(was, "type") == "ExternalName" {
        return;
    }
    if headless(spec) || headless(was) {
        return;
    }
    let (new, old) = (list(&spec["ipFamilies"]), list(&was["ipFamilies"]));
    let changed = "may not change once set";
    if new.len() == old.len() {
        if new.iter().zip(old).any(|(n, o)| n != o) {
            causes.invalid("spec.ipFamilies[0]", &spec["ipFamilies"], changed);
        }
    } else if new.len() < old.len() {
        if list(&spec["clusterIPs"]).is_empty() {
            let why = "primary ipFamily can not be unset";
            causes.invalid("spec.ipFamilies[0]", &spec["ipFamilies"], why);
        }
        if !new.is_empty() && new[0] != old[0] {
            causes.invalid("spec.ipFamilies[0]", &spec["clusterIPs"], changed);
        }
        if new.len() == 1 && spec["ipFamilyPolicy"] != "SingleStack" {
            let why = "must be set to 'SingleStack' when releasing the secondary ipFamily";
            causes.invalid("spec.ipFamilyPolicy", &spec["ipFamilyPolicy"], why);
        }
    } else if !old.is_empty() && !new.is_empty() && new[0] != old[0] {
        causes.invalid("spec.ipFamilies[0]", &spec["clusterIPs"], changed);
    }
}

/// Two ports of one protocol with the same node port, or the same port.
fn duplicated_ports(ports: &[Value], causes: &mut Causes) {
    let mut node_ports = BTreeSet::new();
    for (i, port) in ports.iter().enumerate() {
        let node_port = number(&port["nodePort"]);
        if node_port != 0 && !node_ports.insert((text(port, "protocol"), node_port)) {
            duplicate(
                causes,
                &format!("spec.ports[{i}].nodePort"),
                &json!(node_port),
            );
        }
    }
    let mut seen = BTreeSet::new();
    for (i, port) in ports.iter().enumerate() {
        let (protocol, number_) = (text(port, "protocol"), number(&port["port"]));
        if !seen.insert((protocol, number_)) {
            // Go prints the key, a ServicePort of the protocol and port alone.
            let key = format!(
                "{{\"Name\":\"\",\"Protocol\":{protocol:?},\"AppProtocol\":null,\"Port\":{number_},\"TargetPort\":0,\"NodePort\":0}}"
            );
            let message = format!("Duplicate value: {key}");
            causes.push("FieldValueDuplicate", &format!("spec.ports[{i}]"), message);
        }
    }
}

/// The traffic policies: an external one exactly where traffic comes from outside, the
/// health check port exactly where a LoadBalancer keeps it local, an internal one for
/// every type with a cluster IP, a known traffic distribution.
fn traffic_policies(spec: &Value, causes: &mut Causes) {
    let external = &spec["externalTrafficPolicy"];
    let set = external.as_str().is_some_and(|p| !p.is_empty());
    match (externally_accessible(spec), set) {
        (false, true) => {
            let why = "may only be set for externally-accessible services";
            causes.invalid("spec.externalTrafficPolicy", external, why);
        }
        (true, false) => causes.required("spec.externalTrafficPolicy"),
        (true, true) => {
            one_of(
                causes,
                "spec.externalTrafficPolicy",
                external,
                &["Cluster", "Local"],
            );
        }
        (false, false) => {}
    }
    let health = number(&spec["healthCheckNodePort"]);
    match (needs_health_check(spec), health) {
        (false, 0) => {}
        (false, port) => {
            let why = "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'";
            causes.invalid("spec.healthCheckNodePort", &json!(port), why);
        }
        (true, 0) => causes.required("spec.healthCheckNodePort"),
        (true, port) if !(1..=65535).contains(&port) => {
            causes.invalid("spec.healthCheckNodePort", &json!(port), PORT_RANGE);
        }
        (true, _) => {}
    }
    let internal = &spec["internalTrafficPolicy"];
    match internal.as_str() {
        None if matches!(
            text(spec, "type"),
            "ClusterIP" | "NodePort" | "LoadBalancer"
        ) =>
        {
            causes.required("spec.internalTrafficPolicy");
        }
        None => {}
        Some(_) => one_of(
            causes,
            "spec.internalTrafficPolicy",
            internal,
            &["Cluster", "Local"],
        ),
    }
    let distribution = &spec["trafficDistribution"];
    if !distribution.is_null() {
        let known = ["PreferClose", "PreferSameZone", "PreferSameNode"];
        one_of(causes, "spec.trafficDistribution", distribution, &known);
    }
}

/// `ValidateEndpointIP` of an external IP: an address, and not one a Service may not
/// take.
fn endpoint_ip(ip: &Value, at: &str, causes: &mut Causes) {
    let text = ip.as_str().unwrap_or_default();
    let Ok(parsed) = text.parse::<IpAddr>() else {
        causes.invalid(at, ip, NOT_AN_IP);
        return;
    };
    if parsed.is_unspecified() {
        causes.invalid(at, ip, &format!("may not be unspecified ({text})"));
    }
    if parsed.is_loopback() {
        causes.invalid(
            at,
            ip,
            "may not be in the loopback range (127.0.0.0/8, ::1/128)",
        );
    }
    let (link_local, link_local_multicast) = match parsed {
        IpAddr::V4(v4) => (v4.is_link_local(), v4.octets()[..3] == [224, 0, 0]),
        IpAddr::V6(v6) => (
            v6.segments()[0] & 0xffc0 == 0xfe80,
            v6.segments()[0] & 0xff0f == 0xff02,
        ),
    };
    if link_local {
        causes.invalid(
            at,
            ip,
            "may not be in the link-local range (169.254.0.0/16, fe80::/10)",
        );
    }
    if link_local_multicast {
        let why = "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)";
        causes.invalid(at, ip, why);
    }
}

/// An address and a prefix length it can have.
fn is_cidr(text: &str) -> bool {
    let Some((ip, bits)) = text.split_once('/') else {
        return false;
    };
    let Ok(ip) = ip.parse::<IpAddr>() else {
        return false;
    };
    let max = if ip.is_ipv4() { 32 } else { 128 };
    bits.parse::<u8>().is_ok_and(|bits| bits <= max)
}

fn forbidden(causes: &mut Causes, at: &str, why: &str) {
    causes.push("FieldValueForbidden", at, format!("Forbidden: {why}"));
}

fn duplicate(causes: &mut Causes, at: &str, value: &Value) {
    causes.push(
        "FieldValueDuplicate",
        at,
        format!("Duplicate value: {value}"),
    );
}

/// Refuses `value` unless it is one of `supported`, listed as kube-apiserver lists them.
fn one_of(causes: &mut Causes, at: &str, value: &Value, supported: &[&str]) {
    if supported.iter().any(|s| value.as_str() == Some(s)) {
        return;
    }
    let listed: Vec<String> = supported.iter().map(|s| format!("{s:?}")).collect();
    let message = format!(
        "Unsupported value: {value}: supported values: {}",
        listed.join(", ")
    );
    causes.push("FieldValueNotSupported", at, message);
}
