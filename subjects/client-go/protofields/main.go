// Command protofields prints, for every field of the protobuf messages of meta/v1 and of
// every group version kube-apiserver serves by default, how Go's generated code writes it and how Go's
// JSON reads it: the table the built-in apiserver's protobuf wire follows
// (crates/apiserver/proto/go-fields.tsv). A .proto file cannot say it: whether a field is a pointer (written
// only when set) or a value (written always, at its zero too), whether its JSON is
// omitempty, and which fields Go embeds in the enclosing JSON object, and whether Go's JSON
// leaves it out at its zero.
//
//	go run ./protofields > ../../crates/apiserver/proto/go-fields.tsv
package main

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func main() {
	roots := []any{
		// Every type of the three packages is reached from these.
		corev1.Pod{}, corev1.PodList{}, corev1.Node{}, corev1.NodeList{},
		corev1.ConfigMap{}, corev1.ConfigMapList{}, corev1.Secret{}, corev1.SecretList{},
		corev1.Namespace{}, corev1.NamespaceList{}, corev1.Service{}, corev1.Event{},
		corev1.PersistentVolume{}, corev1.PersistentVolumeClaim{},
		appsv1.Deployment{}, appsv1.DeploymentList{}, appsv1.ReplicaSet{},
		appsv1.StatefulSet{}, appsv1.DaemonSet{}, appsv1.ControllerRevision{},
		// What programs write beside their work: leader election's Leases, Events.
		coordinationv1.Lease{}, coordinationv1.LeaseList{},
		eventsv1.Event{}, eventsv1.EventList{}, corev1.EventList{},
		// What programs and kubectl ask of the server: who am I, may I.
		authenticationv1.SelfSubjectReview{},
		authorizationv1.SelfSubjectAccessReview{}, authorizationv1.SelfSubjectRulesReview{},
		authorizationv1.SubjectAccessReview{}, authorizationv1.LocalSubjectAccessReview{},
		// What kubectl drain and autoscalers send to end a pod: an Eviction.
		policyv1.Eviction{},
		// Every other kind a sample may hold (objects.sample), served in protobuf as
		// kube-apiserver serves it, and the lists of them.
		corev1.ServiceList{}, corev1.ServiceAccount{}, corev1.ServiceAccountList{},
		corev1.Endpoints{}, corev1.EndpointsList{}, corev1.LimitRange{}, corev1.LimitRangeList{},
		corev1.PersistentVolumeList{}, corev1.PersistentVolumeClaimList{},
		corev1.PodTemplate{}, corev1.PodTemplateList{},
		corev1.ReplicationController{}, corev1.ReplicationControllerList{},
		corev1.ResourceQuota{}, corev1.ResourceQuotaList{},
		appsv1.ReplicaSetList{}, appsv1.StatefulSetList{}, appsv1.DaemonSetList{},
		appsv1.ControllerRevisionList{},
		admissionregistrationv1.MutatingWebhookConfiguration{},
		admissionregistrationv1.MutatingWebhookConfigurationList{},
		admissionregistrationv1.ValidatingWebhookConfiguration{},
		admissionregistrationv1.ValidatingWebhookConfigurationList{},
		admissionregistrationv1.ValidatingAdmissionPolicy{},
		admissionregistrationv1.ValidatingAdmissionPolicyList{},
		admissionregistrationv1.ValidatingAdmissionPolicyBinding{},
		admissionregistrationv1.ValidatingAdmissionPolicyBindingList{},
		autoscalingv1.HorizontalPodAutoscaler{}, autoscalingv1.HorizontalPodAutoscalerList{},
		autoscalingv1.Scale{},
		autoscalingv2.HorizontalPodAutoscaler{}, autoscalingv2.HorizontalPodAutoscalerList{},
		batchv1.Job{}, batchv1.JobList{}, batchv1.CronJob{}, batchv1.CronJobList{},
		certificatesv1.CertificateSigningRequest{}, certificatesv1.CertificateSigningRequestList{},
		discoveryv1.EndpointSlice{}, discoveryv1.EndpointSliceList{},
		flowcontrolv1.FlowSchema{}, flowcontrolv1.FlowSchemaList{},
		flowcontrolv1.PriorityLevelConfiguration{}, flowcontrolv1.PriorityLevelConfigurationList{},
		networkingv1.Ingress{}, networkingv1.IngressList{},
		networkingv1.IngressClass{}, networkingv1.IngressClassList{},
		networkingv1.NetworkPolicy{}, networkingv1.NetworkPolicyList{},
		networkingv1.IPAddress{}, networkingv1.IPAddressList{},
		networkingv1.ServiceCIDR{}, networkingv1.ServiceCIDRList{},
		nodev1.RuntimeClass{}, nodev1.RuntimeClassList{},
		policyv1.PodDisruptionBudget{}, policyv1.PodDisruptionBudgetList{},
		rbacv1.Role{}, rbacv1.RoleList{}, rbacv1.RoleBinding{}, rbacv1.RoleBindingList{},
		rbacv1.ClusterRole{}, rbacv1.ClusterRoleList{},
		rbacv1.ClusterRoleBinding{}, rbacv1.ClusterRoleBindingList{},
		resourcev1.DeviceClass{}, resourcev1.DeviceClassList{},
		resourcev1.ResourceClaim{}, resourcev1.ResourceClaimList{},
		resourcev1.ResourceClaimTemplate{}, resourcev1.ResourceClaimTemplateList{},
		resourcev1.ResourceSlice{}, resourcev1.ResourceSliceList{},
		schedulingv1.PriorityClass{}, schedulingv1.PriorityClassList{},
		storagev1.CSIDriver{}, storagev1.CSIDriverList{}, storagev1.CSINode{}, storagev1.CSINodeList{},
		storagev1.CSIStorageCapacity{}, storagev1.CSIStorageCapacityList{},
		storagev1.StorageClass{}, storagev1.StorageClassList{},
		storagev1.VolumeAttachment{}, storagev1.VolumeAttachmentList{},
		storagev1.VolumeAttributesClass{}, storagev1.VolumeAttributesClassList{},
		metav1.Status{}, metav1.DeleteOptions{}, metav1.WatchEvent{},
		metav1.PartialObjectMetadata{}, metav1.PartialObjectMetadataList{}, metav1.Table{},
	}
	seen := map[reflect.Type]bool{}
	var lines []string
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
			if t.Kind() == reflect.Map {
				walk(t.Key())
			}
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] || !strings.HasPrefix(t.PkgPath(), "k8s.io/") {
			return
		}
		seen[t] = true
		message := strings.ReplaceAll(t.PkgPath(), "/", ".") + "." + t.Name()
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			walk(f.Type)
			tag, ok := f.Tag.Lookup("protobuf")
			if !ok {
				continue
			}
			name := protoName(tag, f.Name)
			json := f.Tag.Get("json")
			jsonName, options, _ := strings.Cut(json, ",")
			var how []string
			if f.Anonymous && jsonName == "" {
				how = append(how, "inline")
			}
			switch f.Type.Kind() {
			case reflect.Pointer, reflect.Slice, reflect.Map:
				how = append(how, "if-set")
			default:
				how = append(how, "always")
			}
			for _, option := range []string{"omitempty", "omitzero"} {
				if strings.Contains(options, option) {
					how = append(how, option)
				}
			}
			lines = append(lines, fmt.Sprintf("%s\t%s\t%s", message, name, strings.Join(how, ",")))
		}
	}
	for _, root := range roots {
		walk(reflect.TypeOf(root))
	}
	sort.Strings(lines)
	fmt.Println("# message\tfield\thow Go writes it (always: at its zero too; if-set: a pointer, slice or map) and reads its JSON (inline: embedded in the enclosing object; omitempty; omitzero: left out at its zero, a struct too)")
	for _, line := range lines {
		fmt.Println(line)
	}
}

// protoName is the field's name in its message: the tag's name=, or the Go name with a
// lower-case first letter (an embedded struct's tag has none).
func protoName(tag, goName string) string {
	for _, part := range strings.Split(tag, ",") {
		if name, ok := strings.CutPrefix(part, "name="); ok {
			return name
		}
	}
	return strings.ToLower(goName[:1]) + goName[1:]
}
