// Package deploycheck tests the deployment files in deploy/ (Dockerfile,
// Kubernetes manifests, Prometheus rules, Grafana dashboard). It has no
// non-test code; it sits in the scripts module so that its test-only
// dependencies (prometheus/prometheus, k8s.io/api) stay out of the others.
package deploycheck
