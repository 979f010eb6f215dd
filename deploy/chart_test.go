package deploy

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// The chart is rendered by a real helm: the binary HELM names, or helm on
// the PATH (.ci/run installs it with `go install helm.sh/helm/v3/cmd/helm@v3.22.0`,
// outside the shop's go.mod). Without one the test is skipped, except
// under CI, where it fails.
const (
	chartDir    = "helm/shopbot"
	kubeVersion = "1.33.0" // the chart needs >= 1.30 (preStop sleep)
	release     = "shop"
	namespace   = "shop"
)

// The shop's own shutdown after SIGTERM (docs/operator.md, "Kubernetes"):
// 2 s to close its listeners, a fulfilment step in flight (a create and a
// poll at their 15 s upstream timeouts, then the buyer's message), then 8 s
// for update handlers. The grace period must cover it after the preStop
// pause.
const shutdownNeeds = 2 + 35 + 8

// example is one example values file and what its rendering must hold.
type example struct {
	file           string
	mode           string // webhook or polling
	redisVar       string
	replicas       int32
	journal        string // emptyDir, hostPath or pvc
	journalChown   bool   // an init container hands the journal to the shop's user
	existingSecret string // "": the chart's own Secret
	serviceMonitor bool
	cpu            string // the container's CPU request
}

var examples = []example{
	{file: "single.yaml", mode: "webhook", redisVar: "REDIS_URL", replicas: 3, journal: "emptyDir", cpu: "250m"},
	{file: "sentinel.yaml", mode: "webhook", redisVar: "REDIS_SENTINEL_URL", replicas: 3, journal: "emptyDir", existingSecret: "shop-secrets", serviceMonitor: true, cpu: "250m"},
	{file: "cluster.yaml", mode: "webhook", redisVar: "REDIS_CLUSTER_URL", replicas: 4, journal: "pvc", journalChown: true, cpu: "500m"},
	{file: "polling.yaml", mode: "polling", redisVar: "REDIS_URL", replicas: 1, journal: "hostPath", journalChown: true, existingSecret: "shop-secrets", cpu: "250m"},
}

// secretVars are the variables that must come from a Secret, never a value.
var secretVars = []string{"TELEGRAM_TOKEN", "RESELLER_API_KEY", "WEBHOOK_SECRET", "REDIS_URL", "REDIS_SENTINEL_URL", "REDIS_CLUSTER_URL"}

func helmCommand(t *testing.T) string {
	t.Helper()
	if h := os.Getenv("HELM"); h != "" {
		return h
	}
	if h, err := exec.LookPath("helm"); err == nil {
		return h
	}
	if os.Getenv("CI") != "" {
		t.Fatal("no helm: set HELM or put helm on the PATH (.ci/run installs it)")
	}
	t.Skip("no helm: set HELM or put helm on the PATH")
	return ""
}

// helm runs helm with args in this directory and returns its stdout, or
// its error with stderr.
func helm(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(helmCommand(t), args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("helm %s: %v: %s", strings.Join(args, " "), err, errOut.String())
	}
	return out.String(), nil
}

func render(t *testing.T, args ...string) (string, error) {
	return helm(t, append([]string{"template", release, chartDir, "--namespace", namespace, "--kube-version", kubeVersion}, args...)...)
}

// rendered is every object of one rendering, decoded strictly.
type rendered struct {
	deployment      *appsv1.Deployment
	services        []*corev1.Service
	secrets         []*corev1.Secret
	ingresses       []*networkingv1.Ingress
	pdbs            []*policyv1.PodDisruptionBudget
	claims          []*corev1.PersistentVolumeClaim
	pods            []*corev1.Pod // helm test hooks
	serviceMonitors []*monitoringv1.ServiceMonitor
	accounts        []*corev1.ServiceAccount
}

// decode splits a rendering into its documents and decodes each strictly
// (an unknown or misspelt field is an error) into its API type by
// apiVersion and kind; a kind the chart should not make is an error too.
func decode(t *testing.T, out string) *rendered {
	t.Helper()
	r := &rendered{}
	for i, doc := range strings.Split(out, "\n---\n") {
		if strings.TrimSpace(stripComments(doc)) == "" {
			continue
		}
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
			t.Fatalf("document %d: %v\n%s", i, err, doc)
		}
		into := func(v any) {
			if err := yaml.UnmarshalStrict([]byte(doc), v); err != nil {
				t.Fatalf("document %d (%s %s) does not decode strictly: %v\n%s", i, tm.APIVersion, tm.Kind, err, doc)
			}
		}
		switch tm.APIVersion + " " + tm.Kind {
		case "apps/v1 Deployment":
			if r.deployment != nil {
				t.Fatal("two Deployments")
			}
			r.deployment = &appsv1.Deployment{}
			into(r.deployment)
		case "v1 Service":
			v := &corev1.Service{}
			into(v)
			r.services = append(r.services, v)
		case "v1 Secret":
			v := &corev1.Secret{}
			into(v)
			r.secrets = append(r.secrets, v)
		case "networking.k8s.io/v1 Ingress":
			v := &networkingv1.Ingress{}
			into(v)
			r.ingresses = append(r.ingresses, v)
		case "policy/v1 PodDisruptionBudget":
			v := &policyv1.PodDisruptionBudget{}
			into(v)
			r.pdbs = append(r.pdbs, v)
		case "v1 PersistentVolumeClaim":
			v := &corev1.PersistentVolumeClaim{}
			into(v)
			r.claims = append(r.claims, v)
		case "v1 Pod":
			v := &corev1.Pod{}
			into(v)
			r.pods = append(r.pods, v)
		case "monitoring.coreos.com/v1 ServiceMonitor":
			v := &monitoringv1.ServiceMonitor{}
			into(v)
			r.serviceMonitors = append(r.serviceMonitors, v)
		case "v1 ServiceAccount":
			v := &corev1.ServiceAccount{}
			into(v)
			r.accounts = append(r.accounts, v)
		default:
			t.Fatalf("document %d: unexpected %s %s\n%s", i, tm.APIVersion, tm.Kind, doc)
		}
	}
	if r.deployment == nil {
		t.Fatal("no Deployment rendered")
	}
	return r
}

func stripComments(doc string) string {
	var b strings.Builder
	for _, line := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

func TestChartExamplesRenderValidObjects(t *testing.T) {
	for _, ex := range examples {
		t.Run(strings.TrimSuffix(ex.file, ".yaml"), func(t *testing.T) {
			values := filepath.Join(chartDir, "examples", ex.file)
			if _, err := helm(t, "lint", "--strict", chartDir, "-f", values, "--kube-version", kubeVersion); err != nil {
				t.Fatal(err)
			}
			out, err := render(t, "-f", values)
			if err != nil {
				t.Fatal(err)
			}
			checkRendering(t, ex, decode(t, out))
		})
	}
}

func checkRendering(t *testing.T, ex example, r *rendered) {
	d := r.deployment
	spec := d.Spec.Template.Spec
	if len(spec.Containers) != 1 {
		t.Fatalf("%d containers, want the shop alone", len(spec.Containers))
	}
	c := spec.Containers[0]
	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		if _, dup := env[e.Name]; dup {
			t.Errorf("%s is set twice", e.Name)
		}
		env[e.Name] = e
	}

	// Replicas and how they are replaced.
	if d.Spec.Replicas == nil || *d.Spec.Replicas != ex.replicas {
		t.Errorf("replicas %v, want %d", d.Spec.Replicas, ex.replicas)
	}
	switch ex.mode {
	case "webhook":
		ru := d.Spec.Strategy.RollingUpdate
		if d.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType || ru == nil || ru.MaxUnavailable == nil || ru.MaxUnavailable.IntValue() != 0 {
			t.Errorf("webhook replicas must roll with none unavailable: %+v", d.Spec.Strategy)
		}
	case "polling":
		if d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
			t.Errorf("a poller must be recreated, not rolled (two would fight over getUpdates): %+v", d.Spec.Strategy)
		}
		if _, ok := env["WEBHOOK_URL"]; ok {
			t.Error("polling with WEBHOOK_URL set")
		}
	}

	// Secrets are referenced, never inlined, and the reference resolves.
	secretName := ex.existingSecret
	if secretName == "" {
		if len(r.secrets) != 1 {
			t.Fatalf("%d Secrets rendered, want the chart's one", len(r.secrets))
		}
		secretName = r.secrets[0].Name
	} else if len(r.secrets) != 0 {
		t.Errorf("existingSecret %s given, yet the chart rendered %d Secrets", ex.existingSecret, len(r.secrets))
	}
	wantSecret := []string{"TELEGRAM_TOKEN", "RESELLER_API_KEY", ex.redisVar}
	if ex.mode == "webhook" {
		wantSecret = append(wantSecret, "WEBHOOK_SECRET")
	}
	for _, name := range secretVars {
		e, ok := env[name]
		if !slices.Contains(wantSecret, name) {
			if ok {
				t.Errorf("%s is set, but this configuration does not use it", name)
			}
			continue
		}
		if !ok {
			t.Errorf("%s is not set", name)
			continue
		}
		if e.Value != "" || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
			t.Errorf("%s is not a secretKeyRef: %+v", name, e)
			continue
		}
		ref := e.ValueFrom.SecretKeyRef
		if ref.Name != secretName {
			t.Errorf("%s refers to Secret %s, want %s", name, ref.Name, secretName)
		}
		if ex.existingSecret == "" {
			if _, ok := r.secrets[0].StringData[ref.Key]; !ok {
				t.Errorf("%s refers to key %s, which the chart's Secret lacks", name, ref.Key)
			}
		}
	}
	// No secret value leaks into any pod's environment or arguments.
	var secretValues []string
	for _, s := range r.secrets {
		for _, v := range s.StringData {
			secretValues = append(secretValues, v)
		}
	}
	for _, p := range append([]corev1.PodSpec{spec}, podSpecs(r.pods)...) {
		for _, c := range append(p.InitContainers, p.Containers...) {
			for _, e := range c.Env {
				for _, v := range secretValues {
					if v != "" && strings.Contains(e.Value, v) {
						t.Errorf("container %s: %s carries a secret's value", c.Name, e.Name)
					}
				}
			}
		}
	}

	// Ports: the webhook and /healthz on HTTP_ADDR, /metrics on METRICS_ADDR.
	ports := map[string]int32{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	httpPort, metricsPort := addrPort(t, env["HTTP_ADDR"].Value), addrPort(t, env["METRICS_ADDR"].Value)
	if httpPort == metricsPort || ports["http"] != httpPort || ports["metrics"] != metricsPort {
		t.Errorf("ports %v, HTTP_ADDR %q, METRICS_ADDR %q: want http and metrics on those, apart", ports, env["HTTP_ADDR"].Value, env["METRICS_ADDR"].Value)
	}

	// Probes: /healthz on the webhook's port.
	for name, p := range map[string]*corev1.Probe{"startup": c.StartupProbe, "readiness": c.ReadinessProbe, "liveness": c.LivenessProbe} {
		if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/healthz" || p.HTTPGet.Port.String() != "http" {
			t.Errorf("%s probe %+v, want GET /healthz on port http", name, p)
			continue
		}
		if p.PeriodSeconds <= 0 || p.FailureThreshold <= 0 || p.TimeoutSeconds <= 0 {
			t.Errorf("%s probe without period, threshold or timeout: %+v", name, p)
		}
	}
	if l := c.LivenessProbe; l != nil && l.PeriodSeconds*l.FailureThreshold < 60 {
		t.Errorf("liveness restarts a pod after %d s: a Redis failover must not restart every replica", l.PeriodSeconds*l.FailureThreshold)
	}

	// Shutdown: a preStop pause (the image has no shell: the sleep action),
	// then the shop's own shutdown within the grace period.
	if c.Lifecycle == nil || c.Lifecycle.PreStop == nil || c.Lifecycle.PreStop.Sleep == nil || c.Lifecycle.PreStop.Exec != nil {
		t.Fatalf("preStop %+v, want the sleep action", c.Lifecycle)
	}
	pause := c.Lifecycle.PreStop.Sleep.Seconds
	if pause <= 0 || spec.TerminationGracePeriodSeconds == nil || *spec.TerminationGracePeriodSeconds < pause+shutdownNeeds {
		t.Errorf("grace %v s after a %d s pause: the shop needs %d s more to finish in-flight work", spec.TerminationGracePeriodSeconds, pause, shutdownNeeds)
	}

	// Resources and the user it runs as.
	if got := c.Resources.Requests.Cpu().String(); got != ex.cpu || c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero() {
		t.Errorf("resources %+v, want a %s CPU request and memory request and limit", c.Resources, ex.cpu)
	}
	if !c.Resources.Limits.Cpu().IsZero() {
		t.Error("a CPU limit throttles every buyer's answer")
	}
	if sc := c.SecurityContext; sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		t.Error("the root filesystem is writable")
	}
	if psc := spec.SecurityContext; psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot {
		t.Error("the pod may run as root")
	}

	// Scraping: annotations on the pods, the metrics port on the Service,
	// and the ServiceMonitor when asked for.
	ann := d.Spec.Template.Annotations
	if ann["prometheus.io/scrape"] != "true" || ann["prometheus.io/port"] != fmt.Sprint(metricsPort) || ann["prometheus.io/path"] != "/metrics" {
		t.Errorf("scrape annotations %v", ann)
	}
	if len(r.services) != 1 {
		t.Fatalf("%d Services", len(r.services))
	}
	svc := r.services[0]
	if !selects(svc.Spec.Selector, d.Spec.Template.Labels) {
		t.Errorf("the Service selects %v, the pods are %v", svc.Spec.Selector, d.Spec.Template.Labels)
	}
	svcTargets := map[string]string{}
	for _, p := range svc.Spec.Ports {
		svcTargets[p.Name] = p.TargetPort.String()
	}
	if svcTargets["metrics"] != "metrics" || svcTargets["http"] != "http" {
		t.Errorf("Service ports %+v", svc.Spec.Ports)
	}
	if len(r.serviceMonitors) != map[bool]int{true: 1}[ex.serviceMonitor] {
		t.Errorf("%d ServiceMonitors, want it %v", len(r.serviceMonitors), ex.serviceMonitor)
	}
	for _, sm := range r.serviceMonitors {
		if sm.Spec.JobLabel == "" || svc.Labels[sm.Spec.JobLabel] != "shopbot" {
			t.Errorf("ServiceMonitor job label %q: the alert rules select job=\"shopbot\", the Service's label says %q", sm.Spec.JobLabel, svc.Labels[sm.Spec.JobLabel])
		}
		if !selects(sm.Spec.Selector.MatchLabels, svc.Labels) || len(sm.Spec.Endpoints) != 1 || sm.Spec.Endpoints[0].Port != "metrics" || sm.Spec.Endpoints[0].Path != "/metrics" {
			t.Errorf("ServiceMonitor %+v does not scrape the Service's metrics port", sm.Spec)
		}
	}

	// The webhook behind the Ingress: only its path, over TLS, to the
	// Service's http port, at the URL the shop registers.
	if ex.mode == "webhook" {
		if len(r.ingresses) != 1 {
			t.Fatalf("%d Ingresses", len(r.ingresses))
		}
		ing := r.ingresses[0]
		if len(ing.Spec.Rules) != 1 || ing.Spec.Rules[0].HTTP == nil || len(ing.Spec.Rules[0].HTTP.Paths) != 1 {
			t.Fatalf("Ingress rules %+v, want one host with the webhook's path", ing.Spec.Rules)
		}
		rule := ing.Spec.Rules[0]
		path := rule.HTTP.Paths[0]
		if want := "https://" + rule.Host + path.Path; env["WEBHOOK_URL"].Value != want {
			t.Errorf("WEBHOOK_URL %q, the Ingress serves %s", env["WEBHOOK_URL"].Value, want)
		}
		if path.PathType == nil || *path.PathType != networkingv1.PathTypeExact || path.Backend.Service == nil ||
			path.Backend.Service.Name != svc.Name || path.Backend.Service.Port.Name != "http" {
			t.Errorf("Ingress path %+v, want exactly the webhook's path to %s:http", path, svc.Name)
		}
		if len(ing.Spec.TLS) != 1 || ing.Spec.TLS[0].SecretName == "" || !slices.Contains(ing.Spec.TLS[0].Hosts, rule.Host) {
			t.Errorf("Ingress TLS %+v, want a certificate for %s", ing.Spec.TLS, rule.Host)
		}
	} else if len(r.ingresses) != 0 {
		t.Error("an Ingress for a poller")
	}

	// The journal: JOURNAL_DIR on the journal volume, of the example's kind.
	if env["JOURNAL_DIR"].Value == "" || !mounted(c, "journal", env["JOURNAL_DIR"].Value) {
		t.Errorf("JOURNAL_DIR %q is not the journal volume's mount", env["JOURNAL_DIR"].Value)
	}
	var vol *corev1.Volume
	for i := range spec.Volumes {
		if spec.Volumes[i].Name == "journal" {
			vol = &spec.Volumes[i]
		}
	}
	if vol == nil {
		t.Fatal("no journal volume")
	}
	switch ex.journal {
	case "emptyDir":
		if vol.EmptyDir == nil || vol.EmptyDir.SizeLimit == nil {
			t.Errorf("journal %+v, want a bounded emptyDir", vol.VolumeSource)
		}
	case "hostPath":
		if vol.HostPath == nil || !strings.Contains(vol.HostPath.Path, namespace+"-"+release) {
			t.Errorf("journal %+v, want a hostPath of this shop's own", vol.VolumeSource)
		}
	case "pvc":
		if vol.PersistentVolumeClaim == nil || len(r.claims) != 1 || r.claims[0].Name != vol.PersistentVolumeClaim.ClaimName ||
			!slices.Contains(r.claims[0].Spec.AccessModes, corev1.ReadWriteMany) {
			t.Errorf("journal %+v, claims %d: want a ReadWriteMany claim shared by every replica", vol.VolumeSource, len(r.claims))
		}
	}

	if chown := len(spec.InitContainers) == 1 && mounted(spec.InitContainers[0], "journal", env["JOURNAL_DIR"].Value); chown != ex.journalChown || len(spec.InitContainers) > 1 {
		t.Errorf("%d init containers: want one handing the journal to the shop's user: %v", len(spec.InitContainers), ex.journalChown)
	}

	// A disruption budget for more than one replica; `helm test` runs check.
	if (len(r.pdbs) == 1) != (ex.replicas > 1) {
		t.Errorf("%d PodDisruptionBudgets for %d replicas", len(r.pdbs), ex.replicas)
	}
	if len(r.pods) != 1 || len(r.pods[0].Spec.Containers) != 1 || !slices.Equal(r.pods[0].Spec.Containers[0].Args, []string{"check"}) ||
		r.pods[0].Annotations["helm.sh/hook"] != "test" {
		t.Error("no `helm test` pod running shopbot check")
	}
}

func podSpecs(pods []*corev1.Pod) []corev1.PodSpec {
	var out []corev1.PodSpec
	for _, p := range pods {
		out = append(out, p.Spec)
	}
	return out
}

func addrPort(t *testing.T, addr string) int32 {
	t.Helper()
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatalf("address %q: %v", addr, err)
	}
	var n int32
	fmt.Sscan(port, &n)
	return n
}

func selects(selector, labels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

func mounted(c corev1.Container, volume, path string) bool {
	return slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == volume && m.MountPath == path })
}

// The chart refuses what would break the shop, with a message saying why.
func TestChartRefusesBrokenValues(t *testing.T) {
	single := filepath.Join(chartDir, "examples", "single.yaml")
	polling := filepath.Join(chartDir, "examples", "polling.yaml")
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"two pollers", []string{"-f", polling, "--set", "replicas=2"}, "replicas must be 1"},
		{"a secret in config", []string{"-f", single, "--set", "config.TELEGRAM_TOKEN=123:abc"}, "config.TELEGRAM_TOKEN"},
		{"no token", []string{"-f", single, "--set", "secrets.telegramToken="}, "secrets.telegramToken is required"},
		{"no Redis", []string{"-f", single, "--set", "secrets.redisUrl="}, "external Redis"},
		{"an unknown Redis mode", []string{"-f", single, "--set", "redis.mode=ring"}, "redis.mode must be"},
		{"an unknown journal", []string{"-f", single, "--set", "journal.type=nfs"}, "journal.type must be"},
		{"no upstream", []string{"-f", single, "--set", "config.RESELLER_BASE_URL="}, "RESELLER_BASE_URL is required"},
		{"no public host", []string{"-f", single, "--set", "ingress.host="}, "needs ingress.host"},
		{"the bare defaults", nil, "is required"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := render(t, c.args...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("rendered with %v: %v; want a refusal saying %q", c.args, err, c.want)
			}
		})
	}
}
