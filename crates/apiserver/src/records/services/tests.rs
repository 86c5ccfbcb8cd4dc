//! Services and ServiceAccounts as an operator, kubectl and a load balancer controller
//! write them beside a pod scenario. The expected answers are kube-apiserver v1.37.2's to
//! the same requests (checked by hand against servers/kube-apiserver), but the cluster IPs
//! and node ports, which it picks at random.

use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::records::tests::{Client, JSON, pods};

const SERVICES: &str = "/api/v1/namespaces/default/services";
const ACCOUNTS: &str = "/api/v1/namespaces/default/serviceaccounts";
const MERGE: &str = "application/merge-patch+json";

fn service(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": name}, "spec": spec})
}

async fn create(client: &Client, name: &str, spec: Value) -> (StatusCode, Value) {
    client
        .send("POST", SERVICES, JSON, &service(name, spec))
        .await
}

#[tokio::test]
async fn kubectl_create_service_gets_kube_apiservers_defaults_and_a_cluster_ip() {
    let client = Client::new(&pods());
    // kubectl create service clusterip web --tcp=80:8080
    let spec = json!({"ports": [{"name": "80-8080", "port": 80, "targetPort": 8080}],
                      "selector": {"app": "web"}, "type": "ClusterIP"});
    let (code, web) = create(&client, "web", spec).await;
    assert_eq!(code, StatusCode::CREATED, "{web}");
    let ip = web["spec"]["clusterIP"].as_str().unwrap().to_owned();
    assert!(ip.starts_with("10.96.") && ip != "10.96.0.1", "{ip}");
    assert_eq!(
        web["spec"],
        json!({"ports": [{"name": "80-8080", "protocol": "TCP", "port": 80, "targetPort": 8080}],
               "selector": {"app": "web"}, "clusterIP": ip, "clusterIPs": [ip],
               "type": "ClusterIP", "sessionAffinity": "None", "ipFamilies": ["IPv4"],
               "ipFamilyPolicy": "SingleStack", "internalTrafficPolicy": "Cluster"})
    );
    assert_eq!(web["status"], json!({"loadBalancer": {}}));
    // Ports are a list map by port and protocol, as kube-apiserver's field manager keys
    // them; the address it allocated is nobody's.
    let fields = &web["metadata"]["managedFields"][0]["fieldsV1"]["f:spec"];
    assert!(
        fields["f:ports"][r#"k:{"port":80,"protocol":"TCP"}"#].is_object(),
        "{fields}"
    );
    assert!(fields.get("f:clusterIP").is_none(), "{fields}");

    // An ExternalName has no address, families or internal traffic policy; a headless
    // Service without a selector asks for both families, as on a single-stack cluster.
    let spec = json!({"type": "ExternalName", "externalName": "example.com"});
    let (_, external) = create(&client, "ext", spec).await;
    assert_eq!(
        external["spec"],
        json!({"type": "ExternalName", "sessionAffinity": "None", "externalName": "example.com"})
    );
    let (_, headless) = create(&client, "headless", json!({"clusterIP": "None"})).await;
    assert_eq!(headless["spec"]["clusterIPs"], json!(["None"]));
    assert_eq!(headless["spec"]["ipFamilies"], json!(["IPv4", "IPv6"]));
    assert_eq!(headless["spec"]["ipFamilyPolicy"], "RequireDualStack");
    // A ClientIP affinity lasts three hours unless it says otherwise.
    let spec = json!({"sessionAffinity": "ClientIP", "ports": [{"port": 80}]});
    let (_, sticky) = create(&client, "sticky", spec).await;
    assert_eq!(
        sticky["spec"]["sessionAffinityConfig"],
        json!({"clientIP": {"timeoutSeconds": 10800}})
    );
}

#[tokio::test]
async fn node_ports_are_allocated_once_per_port_number_and_an_address_is_held_once() {
    let client = Client::new(&pods());
    let spec = json!({"type": "NodePort", "ports": [
        {"name": "dns", "port": 53, "protocol": "UDP"},
        {"name": "dns-tcp", "port": 53, "protocol": "TCP"},
        {"name": "http", "port": 80}]});
    let (code, dns) = create(&client, "dns", spec).await;
    assert_eq!(code, StatusCode::CREATED, "{dns}");
    let ports: Vec<i64> = (dns["spec"]["ports"].as_array().unwrap().iter())
        .map(|p| p["nodePort"].as_i64().unwrap())
        .collect();
    // UDP and TCP 53 share one node port, as kube-apiserver's initNodePorts gives them.
    assert_eq!(ports[0], ports[1]);
    assert_ne!(ports[0], ports[2]);
    assert!(
        ports.iter().all(|p| (30000..=32767).contains(p)),
        "{ports:?}"
    );
    assert_eq!(dns["spec"]["externalTrafficPolicy"], "Cluster");

    let taken = ports[0];
    let spec = json!({"type": "NodePort", "ports": [{"port": 80, "nodePort": taken}]});
    let (code, refused) = create(&client, "np1", spec).await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        refused["message"],
        format!(
            "Service \"np1\" is invalid: spec.ports[0].nodePort: Invalid value: {taken}: provided port is already allocated"
        )
    );
    let spec = json!({"type": "NodePort", "ports": [{"port": 80, "nodePort": 80}]});
    let (_, refused) = create(&client, "np2", spec).await;
    assert_eq!(
        refused["message"],
        "Service \"np2\" is invalid: spec.ports[0].nodePort: Invalid value: 80: provided port is not in the valid range. The range of valid ports is 30000-32767"
    );

    let ip = dns["spec"]["clusterIP"].as_str().unwrap();
    let (code, refused) = create(
        &client,
        "same",
        json!({"clusterIP": ip, "ports": [{"port": 80}]}),
    )
    .await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        refused["message"],
        format!(
            "Service \"same\" is invalid: spec.clusterIPs: Invalid value: [\"{ip}\"]: failed to allocate IP {ip}: provided IP is already allocated"
        )
    );
    for (asked, why) in [
        ("10.96.0.1", "provided IP is already allocated"),
        (
            "10.0.0.5",
            "the provided network does not match the current range",
        ),
    ] {
        let spec = json!({"clusterIP": asked, "ports": [{"port": 80}]});
        let (_, refused) = create(&client, "asks", spec).await;
        let wanted = format!("failed to allocate IP {asked}: {why}");
        assert!(
            refused["message"].as_str().unwrap().ends_with(&wanted),
            "{refused}"
        );
    }
    // A free one in the range is given as asked; a refused write held nothing.
    let spec = json!({"clusterIP": "10.96.0.10", "ports": [{"port": 53}]});
    let (code, kube_dns) = create(&client, "kube-dns", spec).await;
    assert_eq!(code, StatusCode::CREATED, "{kube_dns}");
    assert_eq!(kube_dns["spec"]["clusterIPs"], json!(["10.96.0.10"]));

    // Deleted, its address and ports are free again; the DELETE answers with the Service.
    let (code, gone) = client
        .send("DELETE", &format!("{SERVICES}/dns"), JSON, &Value::Null)
        .await;
    assert_eq!((code, &gone["kind"]), (StatusCode::OK, &json!("Service")));
    let spec =
        json!({"clusterIP": ip, "type": "NodePort", "ports": [{"port": 80, "nodePort": taken}]});
    let (code, again) = create(&client, "again", spec).await;
    assert_eq!(code, StatusCode::CREATED, "{again}");
}

#[tokio::test]
async fn an_update_keeps_what_was_allocated_and_a_new_type_drops_what_the_old_one_had() {
    let client = Client::new(&pods());
    let web = format!("{SERVICES}/web");
    let (_, created) = create(&client, "web", json!({"ports": [{"port": 80}]})).await;
    let ip = created["spec"]["clusterIP"].clone();
    // A PUT that leaves the address out keeps it (kubectl replace of a manifest).
    let (code, replaced) = client
        .send(
            "PUT",
            &web,
            JSON,
            &service("web", json!({"ports": [{"port": 81}]})),
        )
        .await;
    assert_eq!(code, StatusCode::OK, "{replaced}");
    assert_eq!(replaced["spec"]["clusterIP"], ip);
    let other = json!({"clusterIP": "10.96.0.99", "ports": [{"port": 81}]});
    let (code, refused) = client.send("PUT", &web, JSON, &service("web", other)).await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        refused["message"],
        "Service \"web\" is invalid: spec.clusterIPs[0]: Invalid value: [\"10.96.0.99\"]: may not change once set"
    );

    let patch = |body: Value| {
        let (client, web) = (&client, &web);
        async move { client.send("PATCH", web, MERGE, &body).await }
    };
    let (_, node_port) = patch(json!({"spec": {"type": "NodePort"}})).await;
    assert!(node_port["spec"]["ports"][0]["nodePort"].as_i64().unwrap() >= 30000);
    assert_eq!(node_port["spec"]["externalTrafficPolicy"], "Cluster");
    let (_, back) = patch(json!({"spec": {"type": "ClusterIP"}})).await;
    assert_eq!(
        back["spec"]["ports"],
        json!([{"protocol": "TCP", "port": 81, "targetPort": 81}])
    );
    assert!(
        back["spec"].get("externalTrafficPolicy").is_none(),
        "{back}"
    );
    let (_, external) =
        patch(json!({"spec": {"type": "ExternalName", "externalName": "x.example"}})).await;
    assert_eq!(
        external["spec"],
        json!({"ports": [{"protocol": "TCP", "port": 81, "targetPort": 81}],
               "type": "ExternalName", "sessionAffinity": "None", "externalName": "x.example"})
    );
    // Out of an ExternalName, a Service gets an address again.
    let (_, again) = patch(json!({"spec": {"type": "ClusterIP", "externalName": null}})).await;
    assert!(
        again["spec"]["clusterIP"]
            .as_str()
            .unwrap()
            .starts_with("10.96."),
        "{again}"
    );

    // A PUT of a Service there is not creates it, as its strategy allows.
    let created = service("created", json!({"ports": [{"port": 81}]}));
    let (code, _) = client
        .send("PUT", &format!("{SERVICES}/created"), JSON, &created)
        .await;
    assert_eq!(code, StatusCode::CREATED);
}

#[tokio::test]
async fn a_load_balancers_ingress_is_written_through_the_status_alone() {
    let client = Client::new(&pods());
    let spec =
        json!({"type": "LoadBalancer", "externalTrafficPolicy": "Local", "ports": [{"port": 80}]});
    let (_, created) = create(&client, "lb", spec).await;
    assert!(
        created["spec"]["healthCheckNodePort"].as_i64().unwrap() >= 30000,
        "{created}"
    );
    assert_eq!(created["spec"]["allocateLoadBalancerNodePorts"], true);
    let status = format!("{SERVICES}/lb/status");
    let ingress = json!({"status": {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}}});
    // The spec a status write sends is not written; the ingress's IP mode is defaulted.
    let mut body = ingress.clone();
    body["spec"] = json!({"type": "LoadBalancer", "ports": [{"port": 9}]});
    let (code, written) = client.send("PATCH", &status, MERGE, &body).await;
    assert_eq!(code, StatusCode::OK, "{written}");
    assert_eq!(written["spec"], created["spec"]);
    assert_eq!(
        written["status"],
        json!({"loadBalancer": {"ingress": [{"ip": "1.2.3.4", "ipMode": "VIP"}]}})
    );
    let managers: Vec<(&Value, &Value)> = (written["metadata"]["managedFields"].as_array())
        .unwrap()
        .iter()
        .map(|e| (&e["manager"], &e["subresource"]))
        .collect();
    assert_eq!(
        managers[1],
        (&json!("leader-elector"), &json!("status")),
        "{managers:?}"
    );
    let (_, table) = client
        .raw(
            "GET",
            SERVICES,
            &[("accept", "application/json;as=Table;v=v1;g=meta.k8s.io")],
            Vec::new(),
        )
        .await;
    let table: Value = serde_json::from_slice(&table).unwrap();
    let cells = table["rows"][0]["cells"].as_array().unwrap();
    let node_port = created["spec"]["ports"][0]["nodePort"].as_i64().unwrap();
    let wanted = [
        json!("LoadBalancer"),
        created["spec"]["clusterIP"].clone(),
        json!("1.2.3.4"),
        json!(format!("80:{node_port}/TCP")),
    ];
    assert_eq!(cells[1..5], wanted);

    // A write to the object keeps the status; an ingress on a ClusterIP is refused.
    let (_, kept) = client
        .send(
            "PATCH",
            &format!("{SERVICES}/lb"),
            MERGE,
            &json!({"status": {"loadBalancer": {}}}),
        )
        .await;
    assert_eq!(kept["status"], written["status"]);
    create(&client, "plain", json!({"ports": [{"port": 80}]})).await;
    let (code, refused) = client
        .send(
            "PATCH",
            &format!("{SERVICES}/plain/status"),
            MERGE,
            &ingress,
        )
        .await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        refused["message"],
        "Service \"plain\" is invalid: status.loadBalancer.ingress: Forbidden: may only be used when `spec.type` is 'LoadBalancer'"
    );
}

#[tokio::test]
async fn a_service_is_validated_as_kube_apiserver_validates_one() {
    let client = Client::new(&pods());
    for (spec, message) in [
        (json!({}), "spec.ports: Required value"),
        (
            json!({"type": "NodePort", "ports": [{"port": 80}, {"port": 81}]}),
            "[spec.ports[0].name: Required value, spec.ports[1].name: Required value]",
        ),
        (
            json!({"type": "Foo", "ports": [{"port": 80}]}),
            r#"spec.type: Unsupported value: "Foo": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort""#,
        ),
        (
            json!({"ports": [{"port": 0, "protocol": "XX", "targetPort": "a_b"}]}),
            r#"[spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive, spec.ports[0].protocol: Unsupported value: "XX": supported values: "SCTP", "TCP", "UDP", spec.ports[0].targetPort: Invalid value: "a_b": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)]"#,
        ),
        (
            json!({"type": "ExternalName", "ports": [{"port": 80}]}),
            "spec.externalName: Required value",
        ),
        (
            json!({"type": "ClusterIP", "ports": [{"port": 80, "nodePort": 30080}]}),
            "spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'",
        ),
        (
            json!({"ipFamilyPolicy": "RequireDualStack", "ports": [{"port": 80}]}),
            r#"spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services"#,
        ),
        (
            json!({"ipFamilies": ["IPv6"], "ports": [{"port": 80}]}),
            r#"spec.ipFamilies[0]: Invalid value: "IPv6": not configured on this cluster"#,
        ),
        (
            json!({"clusterIP": "10.96.0.7", "clusterIPs": ["10.96.0.8"], "ports": [{"port": 80}]}),
            r#"spec.clusterIPs: Invalid value: ["10.96.0.8"]: first value must match `clusterIP`"#,
        ),
        (
            json!({"externalTrafficPolicy": "Local", "ports": [{"port": 80}]}),
            r#"spec.externalTrafficPolicy: Invalid value: "Local": may only be set for externally-accessible services"#,
        ),
        (
            json!({"sessionAffinity": "ClientIP", "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 0}}, "ports": [{"port": 80}]}),
            "spec.sessionAffinityConfig.clientIP.timeoutSeconds: Invalid value: 0: must be greater than 0 and less than 86400",
        ),
        (
            json!({"ports": [{"name": "a", "port": 80}, {"name": "a", "port": 80}]}),
            r#"[spec.ports[1].name: Duplicate value: "a", spec.ports[1]: Duplicate value: {"Name":"","Protocol":"TCP","AppProtocol":null,"Port":80,"TargetPort":0,"NodePort":0}]"#,
        ),
        (
            json!({"allocateLoadBalancerNodePorts": false, "loadBalancerSourceRanges": ["1.2.3.0/24"], "ports": [{"port": 80}]}),
            "[spec.LoadBalancerSourceRanges: Forbidden: may only be used when `type` is 'LoadBalancer', spec.allocateLoadBalancerNodePorts: Forbidden: may only be used when `type` is 'LoadBalancer']",
        ),
        (
            json!({"internalTrafficPolicy": "Foo", "trafficDistribution": "Bar", "ports": [{"port": 80}]}),
            r#"[spec.internalTrafficPolicy: Unsupported value: "Foo": supported values: "Cluster", "Local", spec.trafficDistribution: Unsupported value: "Bar": supported values: "PreferClose", "PreferSameZone", "PreferSameNode"]"#,
        ),
        (
            json!({"externalIPs": ["1.2.3.4", "nope"], "ports": [{"port": 80}]}),
            r#"spec.externalIPs[1]: Invalid value: "nope": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"#,
        ),
    ] {
        let (code, refused) = create(&client, "bad", spec.clone()).await;
        assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY, "{spec}: {refused}");
        assert_eq!(
            refused["message"],
            format!("Service \"bad\" is invalid: {message}"),
            "{spec}"
        );
    }
    // Names are DNS-1123 labels, which may start with a digit.
    let (code, _) = create(&client, "1web", json!({"ports": [{"port": 80}]})).await;
    assert_eq!(code, StatusCode::CREATED);
    let (code, refused) = create(&client, "web.x", json!({"ports": [{"port": 80}]})).await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY, "{refused}");
    assert_eq!(refused["details"]["causes"][0]["field"], "metadata.name");
}

#[tokio::test]
async fn services_are_discovered_selected_watched_and_found_by_cluster_info() {
    let client = Client::new(&pods());
    let (_, core) = client.get("/api/v1").await;
    let listed = |name: &str| {
        (core["resources"].as_array().unwrap().iter())
            .find(|r| r["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("/api/v1 lists {name}"))
    };
    let services = listed("services");
    assert_eq!(services["verbs"].as_array().unwrap().len(), 8, "{services}");
    assert_eq!(
        (&services["categories"], &services["shortNames"]),
        (&json!(["all"]), &json!(["svc"]))
    );
    assert_eq!(
        listed("services/status")["verbs"],
        json!(["get", "patch", "update"])
    );
    assert_eq!(listed("serviceaccounts")["shortNames"], json!(["sa"]));

    let (_, list) = client.get("/api/v1/services").await;
    let rv = list["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut dns = service("kube-dns", json!({"ports": [{"port": 53}]}));
    dns["metadata"]["labels"] = json!({"kubernetes.io/cluster-service": "true"});
    client
        .send(
            "POST",
            "/api/v1/namespaces/kube-system/services",
            JSON,
            &dns,
        )
        .await;
    create(
        &client,
        "web",
        json!({"type": "NodePort", "ports": [{"port": 80}]}),
    )
    .await;
    // kubectl cluster-info: the cluster's services in kube-system by their label.
    let cluster_services = "/api/v1/namespaces/kube-system/services\
                            ?labelSelector=kubernetes.io%2Fcluster-service%3Dtrue";
    let (_, found) = client.get(cluster_services).await;
    assert_eq!(found["items"][0]["metadata"]["name"], "kube-dns");
    let (_, by_type) = client
        .get("/api/v1/services?fieldSelector=spec.type%3DNodePort")
        .await;
    let names: Vec<&Value> = by_type["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| &s["metadata"]["name"])
        .collect();
    assert_eq!(names, [&json!("web")]);
    let (code, refused) = client
        .get("/api/v1/services?fieldSelector=status.x%3Dy")
        .await;
    assert_eq!(code, StatusCode::BAD_REQUEST);
    assert_eq!(refused["message"], "field label not supported: status.x");

    client
        .send("DELETE", &format!("{SERVICES}/web"), JSON, &Value::Null)
        .await;
    let watch = format!("/api/v1/services?watch=true&resourceVersion={rv}&timeoutSeconds=1");
    let events = client.watch(&watch, JSON).await;
    let seen: Vec<(&Value, &Value)> = (events.iter())
        .map(|e| (&e["type"], &e["object"]["metadata"]["name"]))
        .collect();
    assert_eq!(
        seen,
        [
            (&json!("ADDED"), &json!("kube-dns")),
            (&json!("ADDED"), &json!("web")),
            (&json!("DELETED"), &json!("web"))
        ]
    );
}

#[tokio::test]
async fn a_service_account_is_kept_as_kube_apiserver_keeps_one() {
    let client = Client::new(&pods());
    let account =
        json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "bot"}});
    let (code, created) = client.send("POST", ACCOUNTS, JSON, &account).await;
    assert_eq!(code, StatusCode::CREATED, "{created}");
    assert_eq!(created["metadata"]["namespace"], "default");
    let (_, table) = client
        .raw(
            "GET",
            ACCOUNTS,
            &[("accept", "application/json;as=Table;v=v1;g=meta.k8s.io")],
            Vec::new(),
        )
        .await;
    let table: Value = serde_json::from_slice(&table).unwrap();
    let columns: Vec<&Value> = (table["columnDefinitions"].as_array().unwrap().iter())
        .map(|c| &c["name"])
        .collect();
    assert_eq!(columns, [&json!("Name"), &json!("Age")]);
    assert_eq!(table["rows"][0]["cells"][0], "bot");
    // Its strategy creates none on a PUT; a name is a DNS-1123 subdomain.
    let missing =
        json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "absent"}});
    let (code, _) = client
        .send("PUT", &format!("{ACCOUNTS}/absent"), JSON, &missing)
        .await;
    assert_eq!(code, StatusCode::NOT_FOUND);
    let bad = json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "Bot_2"}});
    let (code, refused) = client.send("POST", ACCOUNTS, JSON, &bad).await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(refused["details"]["causes"][0]["field"], "metadata.name");
    let (code, gone) = client
        .send("DELETE", &format!("{ACCOUNTS}/bot"), JSON, &Value::Null)
        .await;
    assert_eq!(
        (code, &gone["kind"]),
        (StatusCode::OK, &json!("ServiceAccount"))
    );
}
