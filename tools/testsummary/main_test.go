package main

import (
	"strings"
	"testing"
)

func TestRunCountsAndShowsFailures(t *testing.T) {
	in := strings.Join([]string{
		`{"Action":"run","Package":"p","Test":"TestA"}`,
		`{"Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}`,
		`{"Action":"pass","Package":"p","Test":"TestA"}`,
		`{"Action":"output","Package":"p","Test":"TestB","Output":"    b_test.go:9: boom\n"}`,
		`{"Action":"fail","Package":"p","Test":"TestB"}`,
		`{"Action":"output","Package":"p","Test":"TestC","Output":"    c_test.go:3: ovs-ofctl not installed\n"}`,
		`{"Action":"output","Package":"p","Test":"TestC","Output":"--- SKIP: TestC (0.00s)\n"}`,
		`{"Action":"skip","Package":"p","Test":"TestC"}`,
		`{"Action":"output","Package":"p","Output":"FAIL\tp\t0.1s\n"}`,
		`{"Action":"fail","Package":"p"}`,
		`{"Action":"skip","Package":"q"}`,
		`not json`,
	}, "\n")
	var out strings.Builder
	s, err := run(strings.NewReader(in), &out)
	if err != nil {
		t.Fatal(err)
	}
	if s.passed != 1 || s.failed != 1 || s.skipped != 1 || s.badPackages != 1 {
		t.Errorf("summary %+v", s)
	}
	if len(s.skips) != 1 || !strings.Contains(s.skips[0], "ovs-ofctl not installed") {
		t.Errorf("skip reasons %q", s.skips)
	}
	for _, want := range []string{"--- FAIL: p TestB", "boom", "FAIL\tp\t0.1s", "not json"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "=== RUN") {
		t.Errorf("output shows passing tests' lines:\n%s", out.String())
	}
}
