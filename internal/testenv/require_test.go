package testenv

import (
	"fmt"
	"testing"
)

// recordingTB captures Skipf/Fatalf instead of ending the test, so the
// skip-or-fail decision itself can be tested.
type recordingTB struct {
	testing.TB
	skipped, failed string
}

func (r *recordingTB) Helper()                           {}
func (r *recordingTB) Skipf(format string, args ...any)  { r.skipped = fmt.Sprintf(format, args...) }
func (r *recordingTB) Fatalf(format string, args ...any) { r.failed = fmt.Sprintf(format, args...) }

func TestInCI(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  bool
	}{
		{"", false}, {"false", false}, {"0", false}, {"FALSE", false},
		{"true", true}, {"1", true}, {"yes", true},
	} {
		t.Run(fmt.Sprintf("CI=%q", tc.value), func(t *testing.T) {
			t.Setenv("CI", tc.value)
			if got := InCI(); got != tc.want {
				t.Errorf("InCI() = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestRequireCommandSkipsLocallyFailsInCI(t *testing.T) {
	const missing = "pseudocong-no-such-command"
	for _, tc := range []struct {
		name     string
		ci       string
		commands []string
		wantSkip bool
		wantFail bool
	}{
		{"present locally", "", []string{"sh"}, false, false},
		{"present in CI", "true", []string{"sh"}, false, false},
		{"missing locally skips", "", []string{"sh", missing}, true, false},
		{"missing in CI fails", "true", []string{missing}, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("CI", tc.ci)
			rec := &recordingTB{TB: t}
			RequireCommand(rec, tc.commands...)
			if (rec.skipped != "") != tc.wantSkip || (rec.failed != "") != tc.wantFail {
				t.Errorf("skipped=%q failed=%q, want skip=%v fail=%v", rec.skipped, rec.failed, tc.wantSkip, tc.wantFail)
			}
		})
	}
}

func TestTaggedRejectsNamesOverIFNAMSIZ(t *testing.T) {
	for _, tc := range []struct {
		name     string
		wantFail bool
	}{
		{"br0", false},
		{"123456789", false}, // 6 + 9 = 15 bytes: the limit
		{"1234567890", true}, // 16 bytes
	} {
		rec := &recordingTB{TB: t}
		got := tagged(rec, NewTag(), tc.name)
		if (rec.failed != "") != tc.wantFail {
			t.Errorf("tagged(%q) = %q, failed=%q, want fail=%v", tc.name, got, rec.failed, tc.wantFail)
		}
	}
}

func TestNewTagShapeAndSpread(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < 50; i++ {
		tag := NewTag()
		if len(tag) != 6 || tag[:2] != "pc" {
			t.Fatalf("tag %q: want pc + 4 hex", tag)
		}
		seen[tag] = true
	}
	// 50 draws from 65536 values: a repeat-heavy result means no randomness.
	if len(seen) < 45 {
		t.Errorf("only %d distinct tags in 50 draws", len(seen))
	}
}

func TestTailBufferKeepsLastBytes(t *testing.T) {
	b := &tailBuffer{max: 5}
	for _, s := range []string{"abc", "defg", "h"} {
		fmt.Fprint(b, s)
	}
	if got := b.String(); got != "defgh" {
		t.Errorf("tail = %q, want %q", got, "defgh")
	}
}
