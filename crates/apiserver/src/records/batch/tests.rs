//! Jobs and CronJobs as an operator and kubectl write them beside a pod scenario. The
//! expected answers are kube-apiserver v1.37.2's to the same requests (checked by hand
//! against servers/kube-apiserver: `kubectl create job`, `kubectl create cronjob`, the
//! refusals below).

use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::records::tests::{Client, JSON, pods};

const BATCH: &str = "/apis/batch/v1/namespaces/default";
const MERGE: &str = "application/merge-patch+json";

/// What `kubectl create job NAME --image=busybox -- echo hi` sends.
fn job(name: &str) -> Value {
    json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
           "spec": {"template": {"metadata": {}, "spec": {
               "containers": [{"name": name, "image": "busybox", "command": ["echo", "hi"],
                               "resources": {}}],
               "restartPolicy": "Never"}}}})
}

/// What `kubectl create cronjob NAME --image=busybox --schedule=SCHEDULE` sends.
fn cron_job(name: &str, schedule: &str) -> Value {
    json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": name},
           "spec": {"schedule": schedule, "jobTemplate": {"metadata": {"name": name}, "spec": {
               "template": {"metadata": {}, "spec": {
                   "containers": [{"name": name, "image": "busybox", "resources": {}}],
                   "restartPolicy": "OnFailure"}}}}}})
}

async fn create(client: &Client, plural: &str, body: &Value) -> (StatusCode, Value) {
    client
        .send("POST", &format!("{BATCH}/{plural}"), JSON, body)
        .await
}

#[tokio::test]
async fn a_job_is_defaulted_and_selects_its_pods_by_its_uid_which_nobody_owns() {
    let client = Client::new(&pods());
    let (code, job) = create(&client, "jobs", &job("j1")).await;
    assert_eq!(code, StatusCode::CREATED, "{job}");
    let uid = job["metadata"]["uid"].as_str().unwrap();
    assert_eq!(uid.len(), 36);
    let labels = json!({"batch.kubernetes.io/controller-uid": uid,
                        "batch.kubernetes.io/job-name": "j1",
                        "controller-uid": uid, "job-name": "j1"});
    let mut spec = job["spec"].clone();
    let template = spec.as_object_mut().unwrap().remove("template").unwrap();
    assert_eq!(
        spec,
        json!({"backoffLimit": 6, "completionMode": "NonIndexed", "completions": 1,
               "manualSelector": false, "parallelism": 1,
               "podReplacementPolicy": "TerminatingOrFailed", "suspend": false,
               "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}})
    );
    assert_eq!(template["metadata"]["labels"], labels);
    assert_eq!(
        template["spec"]["containers"][0]["imagePullPolicy"], "Always",
        "the pod template is defaulted as a pod is"
    );
    // Its labels are its template's, as the storage's decoding defaults them.
    assert_eq!(job["metadata"]["labels"], labels);
    assert_eq!(job["metadata"]["generation"], 1);
    assert_eq!(job["status"], json!({}));
    // The defaults are the writer's (they were there when its field manager saw the
    // object); the generated selector and labels are nobody's.
    let owned = &job["metadata"]["managedFields"][0]["fieldsV1"]["f:spec"];
    assert_eq!(owned["f:backoffLimit"], json!({}));
    assert!(owned.get("f:selector").is_none(), "{owned}");
    assert!(owned["f:template"].get("f:metadata").is_none(), "{owned}");
    assert!(
        job["metadata"]["managedFields"][0]["fieldsV1"]
            .get("f:metadata")
            .is_none()
    );

    let (code, cron_job) = create(&client, "cronjobs", &cron_job("c1", "*/5 * * * *")).await;
    assert_eq!(code, StatusCode::CREATED, "{cron_job}");
    let mut spec = cron_job["spec"].clone();
    let template = spec.as_object_mut().unwrap().remove("jobTemplate").unwrap();
    assert_eq!(
        spec,
        json!({"concurrencyPolicy": "Allow", "failedJobsHistoryLimit": 1,
               "schedule": "*/5 * * * *", "successfulJobsHistoryLimit": 3, "suspend": false})
    );
    // The Job template's spec is not a Job's: not defaulted but for its pod template.
    let job_spec = &template["spec"];
    assert!(job_spec.get("backoffLimit").is_none(), "{job_spec}");
    assert_eq!(
        job_spec["template"]["spec"]["dnsPolicy"], "ClusterFirst",
        "{job_spec}"
    );
    assert!(cron_job["metadata"].get("labels").is_none());
}

#[tokio::test]
async fn jobs_and_cron_jobs_are_validated_as_kube_apiserver_validates_them() {
    let client = Client::new(&pods());
    let mut bad = job("bad");
    bad["spec"]["parallelism"] = json!(-1);
    bad["spec"]["template"]["spec"]["restartPolicy"] = json!("Always");
    let (code, refused) = create(&client, "jobs", &bad).await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        refused["message"],
        r#"Job.batch "bad" is invalid: [spec.parallelism: Invalid value: -1: must be greater than or equal to 0, spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"]"#
    );
    let mut unsupported = job("unsupported");
    unsupported["spec"]["completionMode"] = json!("Sometimes");
    let (_, refused) = create(&client, "jobs", &unsupported).await;
    assert_eq!(
        refused["message"],
        r#"Job.batch "unsupported" is invalid: spec.completionMode: Unsupported value: "Sometimes": supported values: "NonIndexed", "Indexed""#
    );

    let cases = [
        (
            "61 * * * *",
            r#"spec.schedule: Invalid value: "61 * * * *": end of range (61) above maximum (59): 61"#,
        ),
        (
            "TZ=UTC 0 * * * *",
            r#"spec.schedule: Invalid value: "TZ=UTC 0 * * * *": cannot use TZ or CRON_TZ in schedule, use timeZone field instead"#,
        ),
        ("", "spec.schedule: Required value"),
    ];
    for (schedule, why) in cases {
        let (code, refused) = create(&client, "cronjobs", &cron_job("c", schedule)).await;
        assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY, "{schedule}");
        let message = format!(r#"CronJob.batch "c" is invalid: {why}"#);
        assert_eq!(refused["message"], message.as_str(), "{schedule}");
    }
    let long = "a".repeat(53);
    let (_, refused) = create(&client, "cronjobs", &cron_job(&long, "@hourly")).await;
    assert_eq!(
        refused["message"],
        format!(
            r#"CronJob.batch "{long}" is invalid: metadata.name: Invalid value: "{long}": must be no more than 52 characters"#
        )
    );

    let (code, _) = create(&client, "cronjobs", &cron_job("nightly", "@daily")).await;
    assert_eq!(code, StatusCode::CREATED);
    let (code, refused) = client
        .send(
            "PATCH",
            &format!("{BATCH}/cronjobs/nightly"),
            MERGE,
            &json!({"spec": {"timeZone": "Mars/Base"}}),
        )
        .await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        refused["message"],
        r#"CronJob.batch "nightly" is invalid: spec.timeZone: Invalid value: "Mars/Base": unknown time zone Mars/Base"#
    );
    let (code, zoned) = client
        .send(
            "PATCH",
            &format!("{BATCH}/cronjobs/nightly"),
            MERGE,
            &json!({"spec": {"timeZone": "Europe/Paris"}}),
        )
        .await;
    assert_eq!(code, StatusCode::OK, "{zoned}");
    assert_eq!(zoned["metadata"]["generation"], 2);
}

#[tokio::test]
async fn a_jobs_template_changes_only_while_it_is_suspended() {
    let client = Client::new(&pods());
    create(&client, "jobs", &job("running")).await;
    let image = json!({"spec": {"template": {"spec": {"containers": [
        {"name": "running", "image": "busybox:2"}]}}}});
    let path = format!("{BATCH}/jobs/running");
    let (code, refused) = client.send("PATCH", &path, MERGE, &image).await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY);
    let message = refused["message"].as_str().unwrap();
    assert!(
        message.starts_with(r#"Job.batch "running" is invalid: spec.template: Invalid value: "#)
            && message.ends_with(": field is immutable"),
        "{message}"
    );
    let selector = json!({"spec": {"selector": {"matchLabels": {"job-name": "running"}}}});
    let (_, refused) = client.send("PATCH", &path, MERGE, &selector).await;
    assert!(
        (refused["message"].as_str().unwrap()).contains("spec.selector: Invalid value: "),
        "{refused}"
    );

    let mut suspended = job("suspended");
    suspended["spec"]["suspend"] = json!(true);
    create(&client, "jobs", &suspended).await;
    let image = json!({"spec": {"template": {"spec": {"containers": [
        {"name": "suspended", "image": "busybox:2"}]}}}});
    let path = format!("{BATCH}/jobs/suspended");
    let (code, changed) = client.send("PATCH", &path, MERGE, &image).await;
    assert_eq!(code, StatusCode::OK, "{changed}");
    assert_eq!(changed["metadata"]["generation"], 2);
}

#[tokio::test]
async fn a_jobs_status_is_its_controllers_and_kubectl_reads_it_in_kube_apiservers_columns() {
    let client = Client::new(&pods());
    create(&client, "jobs", &job("done")).await;
    create(&client, "jobs", &job("waiting")).await;
    let status = json!({"status": {"succeeded": 1, "startTime": "2026-12-02T02:00:00Z",
                                   "completionTime": "2026-12-02T02:03:10Z",
                                   "conditions": [{"type": "Complete", "status": "True"}]},
                        "spec": {"parallelism": 5}});
    let (code, done) = client
        .send(
            "PATCH",
            &format!("{BATCH}/jobs/done/status"),
            MERGE,
            &status,
        )
        .await;
    assert_eq!(code, StatusCode::OK, "{done}");
    assert_eq!(done["status"]["succeeded"], 1);
    assert_eq!(
        done["spec"]["parallelism"], 1,
        "a status write keeps the spec"
    );
    assert_eq!(done["metadata"]["generation"], 1);
    // Through the object, the status is kept as it was.
    let (_, kept) = client
        .send(
            "PATCH",
            &format!("{BATCH}/jobs/done"),
            MERGE,
            &json!({"status": {"succeeded": 0}}),
        )
        .await;
    assert_eq!(kept["status"]["succeeded"], 1);

    let (_, selected) = client
        .get(&format!("{BATCH}/jobs?fieldSelector=status.successful%3D1"))
        .await;
    let names: Vec<&Value> = (selected["items"].as_array().unwrap().iter())
        .map(|job| &job["metadata"]["name"])
        .collect();
    assert_eq!(names, [&json!("done")]);
    let (_, unselected) = client
        .get(&format!("{BATCH}/jobs?fieldSelector=status.successful%3D0"))
        .await;
    assert_eq!(unselected["items"][0]["metadata"]["name"], "waiting");
    let (code, refused) = client
        .get(&format!("{BATCH}/jobs?fieldSelector=spec.x%3D1"))
        .await;
    assert_eq!(code, StatusCode::BAD_REQUEST);
    assert_eq!(
        refused["message"],
        r#"field label "spec.x" not supported for Job"#
    );

    let (table, titles) = client.table(&format!("{BATCH}/jobs")).await;
    assert_eq!(
        titles,
        [
            "Name",
            "Status",
            "Completions",
            "Duration",
            "Age",
            "Containers",
            "Images",
            "Selector"
        ]
    );
    let cells = table["rows"][0]["cells"].as_array().unwrap();
    assert_eq!(
        cells[0..4],
        [
            json!("done"),
            json!("Complete"),
            json!("1/1"),
            json!("3m10s")
        ]
    );
    assert_eq!(cells[5..7], [json!("done"), json!("busybox")]);
    let uid = done["metadata"]["uid"].as_str().unwrap();
    assert_eq!(
        cells[7],
        format!("batch.kubernetes.io/controller-uid={uid}").as_str()
    );
    assert_eq!(table["rows"][1]["cells"][1], "Running");
}

#[tokio::test]
async fn batch_is_discovered_beside_pods_with_its_short_names_and_schemas() {
    // Its place in `/apis`: kubectl_finds_the_records_in_discovery_and_gets_their_tables.
    let client = Client::new(&pods());
    let (code, list) = client.get("/apis/batch/v1").await;
    assert_eq!(code, StatusCode::OK);
    let resources: Vec<(&str, &Value, &Value)> = (list["resources"].as_array().unwrap().iter())
        .map(|r| {
            (
                r["name"].as_str().unwrap(),
                &r["shortNames"],
                &r["categories"],
            )
        })
        .collect();
    assert_eq!(
        resources,
        [
            ("cronjobs", &json!(["cj"]), &json!(["all"])),
            ("cronjobs/status", &Value::Null, &Value::Null),
            ("jobs", &Value::Null, &json!(["all"])),
            ("jobs/status", &Value::Null, &Value::Null),
        ]
    );
    // `kubectl explain cronjob.spec.schedule` reads the group's schemas.
    let (code, document) = client.get("/openapi/v3/apis/batch/v1").await;
    assert_eq!(code, StatusCode::OK);
    let schemas = &document["components"]["schemas"];
    assert!(
        schemas["io.k8s.api.batch.v1.CronJobSpec"]["properties"]["schedule"].is_object(),
        "{}",
        schemas.as_object().map_or(0, serde_json::Map::len)
    );
}
