// Package deploy holds the deployment files of a live run — the
// Prometheus scrape config, the Grafana dashboard and provisioning, the
// systemd units — and, as Go code, only the tests that keep them honest:
// every metric the dashboard queries must be registered by the code, and
// the Prometheus config must scrape the documented ports.
package deploy
