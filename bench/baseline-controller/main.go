// The controller-runtime baselines: bench:router's is what functions/pod-name-label does, as a Go controller would
// write it (metadata-only pod cache, a merge patch with an optimistic lock, one worker per key); bench:tenants-scale's
// (--shape=tenants) is the tenants' Loop (ConfigMaps owning Secrets) over many namespaces, a cache per namespace,
// read-only beside the router or (--write) in its place.
// bench/baseline-controller.ts builds it from the Go module proxy into ~/.cache/kubeloop; it is never committed built.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

var podGVK = schema.GroupVersionKind{Version: "v1", Kind: "Pod"}

type podNameLabeler struct {
	client     client.Client
	annotation string
	label      string
}

// Reconcile mirrors reconcilePodNameLabel: annotated pods carry their name as a label, others do not.
func (r *podNameLabeler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	pod := &metav1.PartialObjectMetadata{}
	pod.SetGroupVersionKind(podGVK)
	if err := r.client.Get(ctx, req.NamespacedName, pod); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if pod.DeletionTimestamp != nil {
		return reconcile.Result{}, nil
	}
	wanted := pod.Annotations[r.annotation] == "true"
	current, has := pod.Labels[r.label]
	if (wanted && current == pod.Name) || (!wanted && !has) || (wanted && len(pod.Name) > 63) {
		return reconcile.Result{}, nil
	}
	patch := client.MergeFromWithOptions(pod.DeepCopy(), client.MergeFromWithOptimisticLock{})
	labels := pod.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	if wanted {
		labels[r.label] = pod.Name
	} else {
		delete(labels, r.label)
	}
	pod.SetLabels(labels)
	if err := r.client.Patch(ctx, pod, patch); err != nil {
		if apierrors.IsNotFound(err) {
			return reconcile.Result{}, nil
		}
		// A conflict is retried with backoff, as controller-runtime users do by returning the error.
		return reconcile.Result{}, err
	}
	return reconcile.Result{}, nil
}

// secretCopier is the tenants' Loop of bench:tenants-scale as a Go controller: each ConfigMap wants a Secret
// "<name>-copy" holding its data. Read-only (the default), it only compares: at rest it runs beside the router, which
// keeps those Secrets, and is measured there (its watches, their bookmarks and renewals, its runtime). With --write it
// creates or updates the copy, as the router does for the tenants' function, and stands in the router's place.
type secretCopier struct {
	client client.Client
	scheme *runtime.Scheme
	write  bool
	// The annotation whose value (Unix ms) bench:tenants-scale writes with each quiet change: each reconcile of a
	// ConfigMap holding it prints a "marked reconcile" line, so the bench times the change up to here.
	marker string
	differ func()
}

func (r *secretCopier) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	configMap := &corev1.ConfigMap{}
	if err := r.client.Get(ctx, req.NamespacedName, configMap); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if changedAt, err := strconv.ParseInt(configMap.Annotations[r.marker], 10, 64); r.marker != "" && err == nil {
		fmt.Fprintf(os.Stderr, "{\"msg\":\"marked reconcile\",\"namespace\":%q,\"changedAt\":%d,\"resourceVersion\":%q,\"receivedAt\":%d}\n",
			configMap.Namespace, changedAt, configMap.ResourceVersion, time.Now().UnixMilli())
	}
	secret := &corev1.Secret{}
	err := r.client.Get(ctx, client.ObjectKey{Namespace: req.Namespace, Name: req.Name + "-copy"}, secret)
	if err != nil && !apierrors.IsNotFound(err) {
		return reconcile.Result{}, err
	}
	missing := err != nil
	if !missing && sameData(secret.Data, configMap.Data) {
		return reconcile.Result{}, nil
	}
	r.differ()
	if !r.write {
		return reconcile.Result{}, nil
	}
	data := map[string][]byte{}
	for key, value := range configMap.Data {
		data[key] = []byte(value)
	}
	if missing {
		secret = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: req.Namespace, Name: req.Name + "-copy"}, Data: data}
		if err := controllerutil.SetControllerReference(configMap, secret, r.scheme); err != nil {
			return reconcile.Result{}, err
		}
		return reconcile.Result{}, client.IgnoreAlreadyExists(r.client.Create(ctx, secret))
	}
	secret.Data = data
	// A conflict is retried with backoff, as controller-runtime users do by returning the error.
	return reconcile.Result{}, r.client.Update(ctx, secret)
}

func sameData(secret map[string][]byte, configMap map[string]string) bool {
	if len(secret) != len(configMap) {
		return false
	}
	for key, value := range configMap {
		if string(secret[key]) != value {
			return false
		}
	}
	return true
}

func main() {
	namespace := flag.String("namespace", "", "the namespaces watched, comma-separated (one cache each)")
	shape := flag.String("shape", "pods", "pods: bench:router's pod-name-label; tenants: bench:tenants-scale's ConfigMap-to-Secret copier, read-only")
	metricsAddress := flag.String("metrics-bind-address", "0", "where controller-runtime serves /metrics (0: nowhere)")
	write := flag.Bool("write", false, "tenants: create or update each copy (the router's place), not only compare")
	marker := flag.String("changed-at-annotation", "", "tenants: print a line for each reconcile of a ConfigMap holding this annotation (Unix ms)")
	qps := flag.Float64("qps", 20, "client QPS")
	burst := flag.Int("burst", 30, "client burst")
	workers := flag.Int("workers", 1, "MaxConcurrentReconciles")
	annotation := flag.String("annotation", "kubeloop.dev/add-pod-name-label", "annotation asking for the label")
	label := flag.String("label", "kubeloop.dev/pod-name", "label holding the pod name")
	flag.Parse()
	ctrl.SetLogger(zap.New())

	// --kubeconfig is controller-runtime's own flag (pkg/client/config).
	config, err := ctrl.GetConfig()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	config.QPS = float32(*qps)
	config.Burst = *burst
	namespaces := map[string]cache.Config{}
	for _, name := range strings.Split(*namespace, ",") {
		namespaces[name] = cache.Config{}
	}
	manager, err := ctrl.NewManager(config, ctrl.Options{
		Cache:                  cache.Options{DefaultNamespaces: namespaces},
		Metrics:                metricsserver.Options{BindAddress: *metricsAddress},
		HealthProbeBindAddress: "0",
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if *shape == "tenants" {
		err = ctrl.NewControllerManagedBy(manager).
			Named("copier").
			// The Loop's selector (app=bench), filtered after the cache as the router filters: both cache every
			// ConfigMap of the namespace, kube-root-ca.crt included.
			For(&corev1.ConfigMap{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetLabels()["app"] == "bench" }))).
			Owns(&corev1.Secret{}).
			WithOptions(controller.Options{MaxConcurrentReconciles: *workers}).
			// One stderr line per mismatch: the bench counts them, as it counts the other shape's errors.
			Complete(&secretCopier{client: manager.GetClient(), scheme: manager.GetScheme(), write: *write, marker: *marker, differ: func() { fmt.Fprintln(os.Stderr, `{"msg":"copy differs"}`) }})
	} else {
		err = ctrl.NewControllerManagedBy(manager).
			Named("pod-name-label").
			For(&corev1.Pod{}, builder.OnlyMetadata).
			WithOptions(controller.Options{MaxConcurrentReconciles: *workers}).
			Complete(&podNameLabeler{client: manager.GetClient(), annotation: *annotation, label: *label})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := manager.Start(ctrl.SetupSignalHandler()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
