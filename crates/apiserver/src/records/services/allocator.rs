//! The cluster IPs and node ports Services hold: kube-apiserver's service IP allocator
//! (one IPv4 range: a single-stack cluster) and node port allocator, as records of who
//! holds what. Every Service kept has its addresses here ([`Allocated::claim`] when it is
//! written, [`Allocated::release`] when it is deleted), so a write is checked against the
//! Services there are and a failed one holds nothing.
//!
//! The range is kubeadm's and kind's `--service-cluster-ip-range`, 10.96.0.0/12 (about a
//! million addresses; kube-apiserver's own default, 10.0.0.0/24, holds 254 Services). Its
//! first address is the `kubernetes` Service's, kept free of allocation though that
//! Service is not served. Both allocators split their range as kube-apiserver's do
//! (KEP-3070, KEP-3668): a lower band that Services asking for a given address or port
//! are likely to use (256 addresses; 86 ports, 30000-30085), and the rest, which
//! allocation takes first. kube-apiserver picks at random within a band; this picks the
//! next free one in order, so that `serve` hands out the same addresses run to run.

use std::collections::{BTreeMap, BTreeSet};
use std::net::Ipv4Addr;

use serde_json::Value;

/// The Service holding an address or a port: its namespace and name.
pub(in crate::records) type Owner = (String, String);

/// The service IP range: 10.96.0.0/12.
const RANGE_START: u32 = u32::from_be_bytes([10, 96, 0, 0]);
const RANGE_BITS: u32 = 12;
/// Addresses in the range, its network and broadcast addresses included.
const RANGE_SIZE: u32 = 1 << (32 - RANGE_BITS);
/// The lower band of the range, allocated from only when the rest is full:
/// `min(max(16, size / 16), 256)` addresses.
const IP_STATIC_BAND: u32 = 256;
/// The `kubernetes` Service's address, the range's first.
const KUBERNETES_OFFSET: u32 = 1;

/// The node port range: kube-apiserver's default `--service-node-port-range`.
pub(in crate::records) const NODE_PORTS: std::ops::RangeInclusive<u16> = 30000..=32767;
/// The lower band of node ports: `min(max(16, size / 32), 128)` of the 2,768.
const PORT_STATIC_BAND: u16 = 86;

/// Why an address or a port asked for cannot be had, in kube-apiserver's words.
pub(in crate::records) const TAKEN_IP: &str = "provided IP is already allocated";
pub(in crate::records) const IP_OUT_OF_RANGE: &str =
    "the provided network does not match the current range";
pub(in crate::records) const TAKEN_PORT: &str = "provided port is already allocated";
pub(in crate::records) const PORT_OUT_OF_RANGE: &str =
    "provided port is not in the valid range. The range of valid ports is 30000-32767";

/// Who holds each cluster IP and node port.
#[derive(Debug, Default)]
pub(in crate::records) struct Allocated {
    /// Each address held, as its offset in the range.
    ips: BTreeMap<u32, Owner>,
    /// Each node port held: the ports' `nodePort`s and health check node ports.
    ports: BTreeMap<u16, Owner>,
}

/// What one write has taken so far, beside what is held: two ports of one Service
/// allocated in one write are two ports.
#[derive(Debug, Default)]
pub(in crate::records) struct Taking {
    ports: BTreeSet<u16>,
}

impl Allocated {
    /// Whether `owner` may have `ip`: in the range (not its network or broadcast
    /// address), and held by nobody else. `Err` says why not.
    pub(in crate::records) fn check_ip(
        &self,
        ip: Ipv4Addr,
        owner: &Owner,
    ) -> Result<(), &'static str> {
        let offset = u32::from(ip).wrapping_sub(RANGE_START);
        if offset == 0 || offset >= RANGE_SIZE - 1 {
            return Err(IP_OUT_OF_RANGE);
        }
        match self.ips.get(&offset) {
            Some(holder) if holder != owner => Err(TAKEN_IP),
            _ if offset == KUBERNETES_OFFSET => Err(TAKEN_IP),
            _ => Ok(()),
        }
    }

    /// The next address nobody holds: the upper band first, then the lower one.
    pub(in crate::records) fn next_ip(&self) -> Option<Ipv4Addr> {
        let free = |offset: &u32| *offset != KUBERNETES_OFFSET && !self.ips.contains_key(offset);
        let upper = IP_STATIC_BAND..RANGE_SIZE - 1;
        let offset = first_gap(&self.ips, upper).or_else(|| (1..IP_STATIC_BAND).find(free))?;
        Some(Ipv4Addr::from(RANGE_START + offset))
    }

    /// Whether `owner` may have node port `port` (or `taking` it already).
    pub(in crate::records) fn check_port(
        &self,
        port: u16,
        owner: &Owner,
        taking: &Taking,
    ) -> Result<(), &'static str> {
        if !NODE_PORTS.contains(&port) {
            return Err(PORT_OUT_OF_RANGE);
        }
        match self.ports.get(&port) {
            Some(holder) if holder != owner => Err(TAKEN_PORT),
            _ if taking.ports.contains(&port) => Err(TAKEN_PORT),
            _ => Ok(()),
        }
    }

    /// The next node port nobody holds and this write has not taken, which it takes:
    /// the upper band first, then the lower one. `None` when every one is held.
    pub(in crate::records) fn next_port(&self, owner: &Owner, taking: &mut Taking) -> Option<u16> {
        let (start, end) = (*NODE_PORTS.start(), *NODE_PORTS.end());
        let free = |port: &u16| {
            self.ports.get(port).is_none_or(|holder| holder == owner)
                && !taking.ports.contains(port)
                && !self.ports_of(owner).contains(port)
        };
        let upper = (start + PORT_STATIC_BAND)..=end;
        let lower = start..(start + PORT_STATIC_BAND);
        let port = upper.chain(lower).find(free)?;
        taking.ports.insert(port);
        Some(port)
    }

    /// Takes `port` for this write, once [`Allocated::check_port`] allowed it.
    pub(in crate::records) fn take_port(taking: &mut Taking, port: u16) {
        taking.ports.insert(port);
    }

    /// The ports `owner` holds now (a write may keep them, but a new one is not one of
    /// them).
    fn ports_of(&self, owner: &Owner) -> BTreeSet<u16> {
        (self.ports.iter())
            .filter(|(_, holder)| *holder == owner)
            .map(|(port, _)| *port)
            .collect()
    }

    /// Records that `owner` holds what `service` (as kept) names, in place of what
    /// `before` (its previous version) named.
    pub(in crate::records) fn claim(
        &mut self,
        owner: &Owner,
        service: &Value,
        before: Option<&Value>,
    ) {
        if let Some(before) = before {
            self.release(owner, before);
        }
        let (ips, ports) = held(service);
        for ip in ips {
            self.ips
                .insert(u32::from(ip).wrapping_sub(RANGE_START), owner.clone());
        }
        for port in ports {
            self.ports.insert(port, owner.clone());
        }
    }

    /// Records that `owner` no longer holds what `service` (as kept) names.
    pub(in crate::records) fn release(&mut self, owner: &Owner, service: &Value) {
        let (ips, ports) = held(service);
        for ip in ips {
            let offset = u32::from(ip).wrapping_sub(RANGE_START);
            if self.ips.get(&offset) == Some(owner) {
                self.ips.remove(&offset);
            }
        }
        for port in ports {
            if self.ports.get(&port) == Some(owner) {
                self.ports.remove(&port);
            }
        }
    }
}

/// The first offset in `band` that `held` has no entry for: the start, or the first gap
/// after it (as many steps as there are entries before the gap).
fn first_gap(held: &BTreeMap<u32, Owner>, band: std::ops::Range<u32>) -> Option<u32> {
    let mut next = band.start;
    for offset in held.range(band.clone()).map(|(offset, _)| *offset) {
        if offset != next {
            break;
        }
        next += 1;
    }
    (next < band.end).then_some(next)
}

/// The cluster IPs (in the range) and node ports a kept Service holds.
fn held(service: &Value) -> (Vec<Ipv4Addr>, Vec<u16>) {
    let spec = &service["spec"];
    let ips = (spec["clusterIPs"].as_array().into_iter().flatten())
        .filter_map(|ip| ip.as_str()?.parse::<Ipv4Addr>().ok())
        .collect();
    let node_ports = (spec["ports"].as_array().into_iter().flatten()).map(|p| &p["nodePort"]);
    let ports = node_ports
        .chain([&spec["healthCheckNodePort"]])
        .filter_map(|port| u16::try_from(port.as_u64()?).ok())
        .filter(|port| *port != 0)
        .collect();
    (ips, ports)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn owner(name: &str) -> Owner {
        ("default".to_owned(), name.to_owned())
    }

    fn service(ips: &[&str], ports: &[u16]) -> Value {
        let ports: Vec<Value> = ports.iter().map(|p| json!({"nodePort": p})).collect();
        json!({"spec": {"clusterIPs": ips, "ports": ports}})
    }

    #[test]
    fn addresses_come_from_the_upper_band_in_order_and_a_released_one_comes_back() {
        let mut allocated = Allocated::default();
        let first = allocated.next_ip().unwrap();
        assert_eq!(first, Ipv4Addr::new(10, 96, 1, 0));
        allocated.claim(&owner("a"), &service(&["10.96.1.0"], &[]), None);
        assert_eq!(allocated.next_ip(), Some(Ipv4Addr::new(10, 96, 1, 1)));
        allocated.claim(&owner("b"), &service(&["10.96.1.1"], &[]), None);
        allocated.release(&owner("a"), &service(&["10.96.1.0"], &[]));
        assert_eq!(allocated.next_ip(), Some(first));
    }

    #[test]
    fn an_address_asked_for_must_be_in_the_range_and_free() {
        let mut allocated = Allocated::default();
        allocated.claim(&owner("a"), &service(&["10.96.0.10"], &[]), None);
        let ip = |text: &str| text.parse::<Ipv4Addr>().unwrap();
        assert_eq!(
            allocated.check_ip(ip("10.96.0.10"), &owner("b")),
            Err(TAKEN_IP)
        );
        assert_eq!(allocated.check_ip(ip("10.96.0.10"), &owner("a")), Ok(()));
        assert_eq!(
            allocated.check_ip(ip("10.96.0.1"), &owner("b")),
            Err(TAKEN_IP)
        );
        for outside in ["10.96.0.0", "10.111.255.255", "10.0.0.5", "192.168.0.1"] {
            let refused = allocated.check_ip(ip(outside), &owner("b"));
            assert_eq!(refused, Err(IP_OUT_OF_RANGE), "{outside}");
        }
        assert_eq!(
            allocated.check_ip(ip("10.111.255.254"), &owner("b")),
            Ok(())
        );
    }

    #[test]
    fn node_ports_of_one_write_differ_and_the_lower_band_comes_last() {
        let mut allocated = Allocated::default();
        let mut taking = Taking::default();
        let a = allocated.next_port(&owner("a"), &mut taking).unwrap();
        let b = allocated.next_port(&owner("a"), &mut taking).unwrap();
        assert_eq!((a, b), (30086, 30087));
        assert_eq!(
            allocated.check_port(a, &owner("a"), &taking),
            Err(TAKEN_PORT)
        );
        allocated.claim(&owner("a"), &service(&[], &[a, b]), None);
        let mut other = Taking::default();
        assert_eq!(
            allocated.check_port(a, &owner("b"), &other),
            Err(TAKEN_PORT)
        );
        assert_eq!(
            allocated.check_port(80, &owner("b"), &other),
            Err(PORT_OUT_OF_RANGE)
        );
        assert_eq!(allocated.next_port(&owner("b"), &mut other), Some(30088));
        // A Service's new port is not one it holds already.
        let mut again = Taking::default();
        assert_eq!(allocated.next_port(&owner("a"), &mut again), Some(30088));
        let full: Vec<u16> = (30086..=32767).collect();
        allocated.claim(&owner("c"), &service(&[], &full), None);
        assert_eq!(
            allocated.next_port(&owner("d"), &mut Taking::default()),
            Some(30000)
        );
    }
}
