// Command testsummary reads `go test -json` on stdin and prints what a
// person reading CI needs: every package's result line, the output of
// every failed test, build errors, and one closing line
// "N passed, N failed, N skipped". A failed test's long log blocks (a
// message's continuation lines, past foldAt) are cut to their first and
// last lines, so that its error lines survive a CI log shown in part: a
// red CI once showed a test's 40-line process logs and a fitted profile,
// and cut the one line that said what failed. With -full FILE the whole
// output of every failed test is appended to FILE too. It exits non-zero
// when any test or package failed, when the stream had no test at all,
// or — with -no-skip — when any test skipped: CI runs every test against
// real peers, and a skip there hides a missing one.
//
//	go test -json ./... | go run ./tools/testsummary -no-skip
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// event is the part of test2json's TestEvent this command reads.
type event struct {
	Action     string
	Package    string
	Test       string
	Output     string
	ImportPath string // build-output events
}

type key struct{ pkg, test string }

type summary struct {
	passed, failed, skipped int
	skips                   []string
	badPackages             int
}

func main() {
	noSkip := flag.Bool("no-skip", false, "fail when any test skipped")
	full := flag.String("full", "", "append the whole output of every failed test to this file")
	flag.Parse()
	var fullOut io.Writer
	if *full != "" {
		f, err := os.OpenFile(*full, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			fmt.Fprintln(os.Stderr, "testsummary:", err)
			os.Exit(2)
		}
		fullOut = f // never closed: os.Exit ends the process, and every write is unbuffered
	}
	s, err := run(os.Stdin, os.Stdout, fullOut, *full)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		os.Exit(2)
	}
	code := 0
	if len(s.skips) > 0 {
		sort.Strings(s.skips)
		fmt.Printf("skipped tests (%d):\n  %s\n", len(s.skips), strings.Join(s.skips, "\n  "))
		if *noSkip {
			fmt.Println("testsummary: tests skipped under -no-skip: every test must run in CI")
			code = 1
		}
	}
	if s.failed > 0 || s.badPackages > 0 {
		code = 1
	}
	if s.passed+s.failed == 0 {
		fmt.Println("testsummary: no test ran")
		code = 1
	}
	fmt.Printf("%d passed, %d failed, %d skipped\n", s.passed, s.failed, s.skipped)
	os.Exit(code)
}

// run reads the stream from in and writes the summary to out; full, if
// not nil, gets every failed test's whole output (fullName is its name,
// for the note where a block is cut).
func run(in io.Reader, out, full io.Writer, fullName string) (summary, error) {
	var s summary
	outputs := map[key][]string{}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if err := json.Unmarshal(line, &e); err != nil {
			// Not JSON (go vet or linker noise): show it as it came.
			fmt.Fprintln(out, string(line))
			continue
		}
		k := key{e.Package, e.Test}
		switch e.Action {
		case "build-output":
			fmt.Fprint(out, e.Output)
		case "build-fail":
			s.badPackages++
		case "output":
			if e.Test == "" {
				// Package-level lines: "ok  pkg 1.2s", "FAIL pkg", panics
				// and timeouts outside a test.
				if t := strings.TrimSpace(e.Output); t != "PASS" && t != "FAIL" && !strings.HasPrefix(t, "=== ") {
					fmt.Fprint(out, e.Output)
				}
				continue
			}
			outputs[k] = append(outputs[k], e.Output)
		case "pass":
			if e.Test != "" {
				s.passed++
			}
			delete(outputs, k)
		case "skip":
			if e.Test != "" {
				s.skipped++
				s.skips = append(s.skips, e.Package+" "+e.Test+": "+lastReason(outputs[k]))
			}
			delete(outputs, k)
		case "fail":
			if e.Test == "" {
				s.badPackages++
				continue
			}
			s.failed++
			fmt.Fprintf(out, "--- FAIL: %s %s\n", e.Package, e.Test)
			text := strings.Join(outputs[k], "")
			writeFolded(out, strings.SplitAfter(text, "\n"), fullName)
			if full != nil {
				fmt.Fprintf(full, "--- FAIL: %s %s\n%s", e.Package, e.Test, text)
			}
			delete(outputs, k)
		}
	}
	return s, sc.Err()
}

// A run of continuation lines (indented 8 spaces or more: the second
// and later lines of one t.Log message, or a subtest's) longer than foldAt
// is shown as its first foldHead and last foldTail lines.
const (
	foldAt   = 20
	foldHead = 12
	foldTail = 4
)

// writeFolded writes a failed test's output lines with long continuation
// runs folded (see foldAt).
func writeFolded(out io.Writer, lines []string, fullName string) {
	where := "run the test with -v for them"
	if fullName != "" {
		where = "all of them in " + fullName
	}
	for i := 0; i < len(lines); {
		if !continuation(lines[i]) {
			fmt.Fprint(out, lines[i])
			i++
			continue
		}
		j := i + 1
		for j < len(lines) && continuation(lines[j]) {
			j++
		}
		if j-i > foldAt {
			fmt.Fprint(out, strings.Join(lines[i:i+foldHead], ""))
			fmt.Fprintf(out, "        [... %d lines cut by testsummary; %s]\n", j-i-foldHead-foldTail, where)
			fmt.Fprint(out, strings.Join(lines[j-foldTail:j], ""))
		} else {
			fmt.Fprint(out, strings.Join(lines[i:j], ""))
		}
		i = j
	}
}

func continuation(line string) bool { return strings.HasPrefix(line, "        ") }

// lastReason is the skip message: the last output line before the skip.
func lastReason(lines []string) string {
	for i := len(lines) - 1; i >= 0; i-- {
		if t := strings.TrimSpace(lines[i]); t != "" && !strings.HasPrefix(t, "--- SKIP") {
			return t
		}
	}
	return "(no reason given)"
}
