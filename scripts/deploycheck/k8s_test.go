package deploycheck

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"
)

const k8sDir = "k8s"

// manifests are the objects of a kustomize build or of the base's files,
// decoded strictly into the Kubernetes API types.
type manifests struct {
	statefulSets []*appsv1.StatefulSet
	services     []*corev1.Service
	pdbs         []*policyv1.PodDisruptionBudget
	configMaps   []*corev1.ConfigMap
}

// docSep splits a YAML stream into its documents.
var docSep = regexp.MustCompile(`(?m)^---\s*$`)

// decode adds the objects of a YAML stream: each document by its kind, an
// unknown field (a typo, a field at the wrong level) or an unknown kind
// fails.
func (m *manifests) decode(t *testing.T, name string, stream []byte) {
	t.Helper()
	for i, doc := range docSep.Split(string(stream), -1) {
		if strings.TrimSpace(stripComments(doc)) == "" {
			continue
		}
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		require.NoError(t, yaml.Unmarshal([]byte(doc), &head), "%s document %d", name, i)
		where := name + " " + head.Kind
		strict := func(obj any) {
			require.NoError(t, yaml.UnmarshalStrict([]byte(doc), obj), "%s document %d", where, i)
		}
		switch head.APIVersion + " " + head.Kind {
		case "apps/v1 StatefulSet":
			o := new(appsv1.StatefulSet)
			strict(o)
			m.statefulSets = append(m.statefulSets, o)
		case "v1 Service":
			o := new(corev1.Service)
			strict(o)
			m.services = append(m.services, o)
		case "policy/v1 PodDisruptionBudget":
			o := new(policyv1.PodDisruptionBudget)
			strict(o)
			m.pdbs = append(m.pdbs, o)
		case "v1 ConfigMap":
			o := new(corev1.ConfigMap)
			strict(o)
			m.configMaps = append(m.configMaps, o)
		default:
			t.Fatalf("%s document %d: kind %q of %q: add it to this test", name, i, head.Kind, head.APIVersion)
		}
	}
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

// kustomization is the base's kustomization.yaml, strictly: the fields
// this base uses.
type kustomization struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Labels     []struct {
		Pairs map[string]string `json:"pairs"`
	} `json:"labels"`
	Resources []string `json:"resources"`
	Images    []struct {
		Name   string `json:"name"`
		NewTag string `json:"newTag"`
	} `json:"images"`
}

// base decodes every file of the base and checks that kustomization.yaml
// lists exactly the manifests there are.
func base(t *testing.T) manifests {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(k8sDir, "kustomization.yaml"))
	require.NoError(t, err)
	var k kustomization
	require.NoError(t, yaml.UnmarshalStrict(raw, &k), "kustomization.yaml")
	files, err := filepath.Glob(filepath.Join(k8sDir, "*.yaml"))
	require.NoError(t, err)
	var listed []string
	for _, f := range files {
		if filepath.Base(f) != "kustomization.yaml" {
			listed = append(listed, filepath.Base(f))
		}
	}
	assert.ElementsMatch(t, listed, k.Resources, "kustomization.yaml lists every manifest of deploy/k8s, and only those")
	var m manifests
	for _, f := range k.Resources {
		raw, err := os.ReadFile(filepath.Join(k8sDir, f))
		require.NoError(t, err)
		m.decode(t, f, raw)
	}
	return m
}

// The base decodes strictly, and says what the deployment needs: both
// servers as StatefulSets with machine ids from etcd, a persistent data
// dir, liveness on /healthz and readiness on /readyz, non-root on a
// read-only root filesystem, resources, a Service and a PDB each.
func TestManifests(t *testing.T) {
	checkManifests(t, base(t))
}

// kubectl kustomize builds the base, and its output decodes strictly too.
func TestKustomizeBuild(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("SKIPPED LOUDLY: kubectl is not on PATH, so `kubectl kustomize deploy/k8s` is not checked (install kubectl to run this test)")
	}
	var stderr bytes.Buffer
	cmd := exec.Command(kubectl, "kustomize", k8sDir)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "kubectl kustomize %s: %s", k8sDir, stderr.String())
	var m manifests
	m.decode(t, "kubectl kustomize output", out)
	checkManifests(t, m)
	for _, s := range m.statefulSets {
		assert.Equal(t, "vesta-go", s.Labels["app.kubernetes.io/part-of"], "the base's labels apply")
		assert.Contains(t, s.Spec.Template.Spec.Containers[0].Image, ":latest", "the base's image tag applies")
	}
}

// A manifest with a typo is refused: the checks above can fail.
func TestManifestTypoFails(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(k8sDir, "server-rest.yaml"))
	require.NoError(t, err)
	typo := strings.Replace(string(raw), "readinessProbe:", "readinesProbe:", 1)
	require.NotEqual(t, string(raw), typo)
	assert.Error(t, yaml.UnmarshalStrict([]byte(typo), new(appsv1.StatefulSet)))
}

func checkManifests(t *testing.T, m manifests) {
	t.Helper()
	require.Len(t, m.statefulSets, 2)
	known := configVars(t)
	known["GOMEMLIMIT"] = true // the Go runtime's, not a configuration key
	checkEnv := func(where, name string) {
		assert.True(t, known[name], "%s: %s is no configuration variable (docs/configuration.md)", where, name)
	}
	shared := map[string]string{}
	for _, cm := range m.configMaps {
		for k, v := range cm.Data {
			checkEnv("ConfigMap "+cm.Name, k)
			shared[k] = v
		}
	}
	assert.Equal(t, "etcd", shared["VESTA_MACHINE_PROVIDER"], "machine ids from etcd")
	assert.NotEmpty(t, shared["VESTA_ETCD_ENDPOINTS"])

	names := map[string]bool{}
	for _, s := range m.statefulSets {
		names[s.Name] = true
		where := "StatefulSet " + s.Name
		pod := s.Spec.Template.Spec
		require.Len(t, pod.Containers, 1, where)
		c := pod.Containers[0]
		env := map[string]string{}
		nodeName := false
		for _, e := range c.Env {
			checkEnv(where, e.Name)
			env[e.Name] = e.Value
			if e.Name == "VESTA_LEASE_NODE_NAME" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
				nodeName = e.ValueFrom.FieldRef.FieldPath == "metadata.name"
			}
		}
		assert.True(t, nodeName, "%s: the pod's name is its node name in the lease", where)
		require.Len(t, c.EnvFrom, 1, where)
		assert.True(t, slices.ContainsFunc(m.configMaps, func(cm *corev1.ConfigMap) bool { return cm.Name == c.EnvFrom[0].ConfigMapRef.Name }),
			"%s: its ConfigMap is in the base", where)

		// The data dir: a volume claim template mounted where VESTA_DATA_DIR says.
		require.Len(t, s.Spec.VolumeClaimTemplates, 1, where)
		claim := s.Spec.VolumeClaimTemplates[0]
		assert.False(t, claim.Spec.Resources.Requests.Storage().IsZero(), where)
		mounted := false
		for _, vm := range c.VolumeMounts {
			if vm.Name == claim.Name {
				mounted = vm.MountPath == env["VESTA_DATA_DIR"] && !vm.ReadOnly
			}
		}
		assert.True(t, mounted, "%s: the claim %s is mounted at VESTA_DATA_DIR %q", where, claim.Name, env["VESTA_DATA_DIR"])

		// Probes: liveness /healthz, readiness /readyz, on an HTTP port the
		// server listens on.
		ports := map[string]int32{}
		for _, p := range c.Ports {
			ports[p.Name] = p.ContainerPort
		}
		httpPort := env["VESTA_LISTEN"]
		if a, ok := env["VESTA_ADMIN_LISTEN"]; ok {
			httpPort = a // server-rpc's HTTP is the admin listener
		}
		for probe, want := range map[*corev1.Probe]string{c.LivenessProbe: "/healthz", c.ReadinessProbe: "/readyz", c.StartupProbe: "/healthz"} {
			require.NotNil(t, probe, "%s: a probe for %s", where, want)
			require.NotNil(t, probe.HTTPGet, where)
			assert.Equal(t, want, probe.HTTPGet.Path, where)
			port := probe.HTTPGet.Port
			require.Equal(t, intstr.String, port.Type, "%s: probes name their port", where)
			require.Contains(t, ports, port.StrVal, where)
			assert.Equal(t, ":"+itoa(ports[port.StrVal]), httpPort, "%s: %s probes the port the server's HTTP listens on", where, want)
		}

		// Locked down: non-root, read-only root filesystem, no privileges.
		require.NotNil(t, pod.SecurityContext, where)
		assert.True(t, *pod.SecurityContext.RunAsNonRoot, where)
		assert.NotZero(t, *pod.SecurityContext.RunAsUser, where)
		require.NotNil(t, c.SecurityContext, where)
		assert.True(t, *c.SecurityContext.ReadOnlyRootFilesystem, where)
		assert.False(t, *c.SecurityContext.AllowPrivilegeEscalation, where)
		assert.Equal(t, []corev1.Capability{"ALL"}, c.SecurityContext.Capabilities.Drop, where)

		// Resources: requests for CPU and memory, a memory limit.
		assert.False(t, c.Resources.Requests.Cpu().IsZero(), where)
		assert.False(t, c.Resources.Requests.Memory().IsZero(), where)
		assert.False(t, c.Resources.Limits.Memory().IsZero(), where)
		assert.GreaterOrEqual(t, *pod.TerminationGracePeriodSeconds, int64(20), "%s: time to drain and store the mark", where)

		labels := s.Spec.Template.Labels
		selects := func(sel map[string]string) bool {
			for k, v := range sel {
				if labels[k] != v {
					return false
				}
			}
			return len(sel) > 0
		}
		assert.True(t, selects(s.Spec.Selector.MatchLabels), "%s: its selector matches its pods", where)
		assert.True(t, slices.ContainsFunc(m.pdbs, func(p *policyv1.PodDisruptionBudget) bool { return selects(p.Spec.Selector.MatchLabels) }),
			"%s: a PodDisruptionBudget covers it", where)
		assert.True(t, slices.ContainsFunc(m.services, func(sv *corev1.Service) bool { return sv.Name == s.Spec.ServiceName && selects(sv.Spec.Selector) }),
			"%s: its serviceName %s is a Service selecting its pods", where, s.Spec.ServiceName)
	}
	assert.True(t, names["vesta-rest"] && names["vesta-rpc"], "both servers: %v", names)
	for _, sv := range m.services {
		for _, p := range sv.Spec.Ports {
			assert.Equal(t, intstr.String, p.TargetPort.Type, "Service %s: targets a named port", sv.Name)
		}
	}
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }
