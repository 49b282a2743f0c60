package main

import (
	"fmt"
	"strconv"
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
	s, err := run(strings.NewReader(in), &out, nil, "")
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

// A failed test's long log block is cut, its error line after the block
// kept, and the whole output goes to the -full writer.
func TestRunFoldsLongBlocks(t *testing.T) {
	ev := func(out string) string {
		return `{"Action":"output","Package":"p","Test":"TestD","Output":` + strconv.Quote(out) + `}`
	}
	lines := []string{ev("=== RUN   TestD\n"), ev("    d_test.go:1: process log:\n")}
	for i := range 100 {
		lines = append(lines, ev(fmt.Sprintf("        log line %d\n", i)))
	}
	lines = append(lines, ev("    d_test.go:2: the error\n"), ev("--- FAIL: TestD (1.00s)\n"),
		`{"Action":"fail","Package":"p","Test":"TestD"}`)
	var out, full strings.Builder
	if _, err := run(strings.NewReader(strings.Join(lines, "\n")), &out, &full, "F"); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"d_test.go:1: process log:", "log line 0\n", "log line 11\n", "[... 84 lines cut by testsummary; all of them in F]",
		"log line 96\n", "log line 99\n", "d_test.go:2: the error"} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
	for _, cut := range []string{"log line 12\n", "log line 95\n"} {
		if strings.Contains(got, cut) {
			t.Errorf("summary has %q, which is inside the cut", cut)
		}
	}
	for i := range 100 {
		if want := fmt.Sprintf("        log line %d\n", i); !strings.Contains(full.String(), want) {
			t.Fatalf("full output lacks %q", want)
		}
	}
	if !strings.Contains(full.String(), "d_test.go:2: the error") {
		t.Errorf("full output lacks the error line")
	}
}
