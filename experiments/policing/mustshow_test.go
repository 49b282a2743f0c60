package policing

import (
	"testing"
)

func loadSpec(t testing.TB) *Spec {
	t.Helper()
	s, err := LoadSpec("")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Must-show (issue 14, sim): the three behavioural bullets on the
// simulator's summary, first server, every mode except the unlimited
// download (a 1 Gbit/s flow: seconds of CPU, and no bullet needs it).
func TestSimMustShow(t *testing.T) {
	if testing.Short() {
		// Whole simulated TCP runs: minutes under -race; the integration
		// phase (no -short) runs them.
		t.Skip("runs TCP simulations")
	}
	s := loadSpec(t)
	res, err := Run(s, Sim{}, Options{Select: func(c Cell) bool {
		return c.Server == s.Servers[0] && !(c.Mode == "nolimit" && !c.Upload)
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range SortedKeys(res.Summary) {
		if !contains(k, ".server.") {
			t.Logf("%s = %.4g", k, res.Summary[k])
		}
	}
	for _, c := range MustShow(res.Summary, "sim") {
		if !c.OK && c.Advisory {
			t.Logf("MISS (advisory) %s: %s", c.Name, c.Detail)
		} else if !c.OK {
			t.Errorf("%s: %s", c.Name, c.Detail)
		} else {
			t.Logf("ok %s: %s", c.Name, c.Detail)
		}
	}
	if err := res.Write(t.TempDir()); err != nil {
		t.Fatal(err)
	}
}
