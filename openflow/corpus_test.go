package openflow_test

import (
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	of "github.com/pseudocong/pseudocong/openflow"
)

var writeCorpus = flag.Bool("write-fuzz-corpus", false, "regenerate the seed corpus under testdata/fuzz from the golden vectors and the capture")

// TestWriteFuzzCorpus regenerates testdata/fuzz/<FuzzName>/ when run with
// -write-fuzz-corpus; otherwise it checks the checked-in corpus exists and
// is in the `go test fuzz v1` format.
func TestWriteFuzzCorpus(t *testing.T) {
	corpus := map[string]map[string]string{} // fuzz name -> file -> contents
	add := func(fuzz, name string, values ...any) {
		if corpus[fuzz] == nil {
			corpus[fuzz] = map[string]string{}
		}
		var sb strings.Builder
		sb.WriteString("go test fuzz v1\n")
		for _, v := range values {
			switch v := v.(type) {
			case []byte:
				fmt.Fprintf(&sb, "[]byte(%q)\n", v)
			case uint16:
				fmt.Fprintf(&sb, "uint16(%d)\n", v)
			}
		}
		corpus[fuzz][name] = sb.String()
	}

	names := make([]string, 0, len(goldenMessageHex))
	for n := range goldenMessageHex {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		b, _ := hex.DecodeString(goldenMessageHex[n])
		add("FuzzUnmarshal", "golden_"+n, b)
		switch of.Type(b[1]) {
		case of.TypeStatsRequest:
			add("FuzzStatsRequestBody", "golden_"+n, uint16(b[8])<<8|uint16(b[9]), b[12:])
		case of.TypeStatsReply:
			add("FuzzStatsReplyBody", "golden_"+n, uint16(b[8])<<8|uint16(b[9]), b[12:])
		case of.TypeFlowMod:
			add("FuzzMatch", "golden_"+n, b[8:48])
			add("FuzzActions", "golden_"+n, b[72:])
		}
	}
	for n, h := range goldenActionHex {
		b, _ := hex.DecodeString(h)
		add("FuzzActions", "golden_"+n, b)
	}
	// Real Open vSwitch / ovs-testcontroller encodings: a few of each type.
	perType := map[of.Type]int{}
	msgs, _ := pcapMessages(t, goldenPcap)
	for _, b := range msgs {
		typ := of.Type(b[1])
		if perType[typ] >= 3 {
			continue
		}
		name := fmt.Sprintf("ovs_%s_%d", strings.ToLower(typ.String()), perType[typ])
		perType[typ]++
		add("FuzzUnmarshal", name, b)
		switch typ {
		case of.TypeFlowMod:
			add("FuzzMatch", name, b[8:48])
			add("FuzzActions", name, b[72:])
		case of.TypePacketOut:
			n := int(b[14])<<8 | int(b[15])
			add("FuzzActions", name, b[16:16+n])
		}
	}
	bad, _ := pcapMessages(t, malformedPcap)
	for i, b := range bad {
		add("FuzzUnmarshal", fmt.Sprintf("malformed_%d", i), b)
	}

	for fuzz, files := range corpus {
		dir := filepath.Join("testdata", "fuzz", fuzz)
		if *writeCorpus {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		for name, contents := range files {
			path := filepath.Join(dir, name)
			if *writeCorpus {
				if err := os.WriteFile(path, []byte(contents), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Errorf("seed corpus missing (regenerate with -write-fuzz-corpus): %v", err)
				continue
			}
			if string(got) != contents {
				t.Errorf("%s is stale (regenerate with -write-fuzz-corpus)", path)
			}
		}
	}
}
