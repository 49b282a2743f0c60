// Package deploy holds the deployment files — of a live run the
// Prometheus scrape config, the Grafana dashboard and provisioning, the
// systemd units; of a sharded sweep the Kubernetes jobs (k8s/); the
// Mininet custom module (mininet/) — and, as Go code, only the tests that
// keep them honest.
//
// Every metric the dashboard queries must be registered by the code, the
// Prometheus config must scrape the documented ports, and the Kubernetes
// manifests must decode strictly into the k8s.io/api types and agree with
// each other and with `experiment run --shard` (docs/scale.md).
package deploy
