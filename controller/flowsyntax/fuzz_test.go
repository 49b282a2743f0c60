package flowsyntax

import (
	"reflect"
	"testing"
)

// FuzzParseFlow: any input either fails with an error or parses to a flow
// whose formatting parses back to the same flow; nothing panics.
func FuzzParseFlow(f *testing.F) {
	for _, s := range []string{
		"priority=100,tcp,nw_dst=10.0.0.2,tp_dst=80,actions=output:2",
		"in_port=1 dl_src=00:00:00:00:00:01 actions=2",
		"cookie=0x10,idle_timeout=5,ip,nw_src=10.1.2.3/255.255.0.0,actions=drop",
		"icmp,icmp_type=8,actions=enqueue(1,2),controller:64,mod_dl_src:0a:0b:0c:0d:0e:0f",
		"arp,actions=FLOOD",
		"actions=",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		flow, err := ParseFlow(s)
		if err != nil {
			return
		}
		text := flow.String()
		back, err := ParseFlow(text)
		if err != nil {
			t.Fatalf("ParseFlow(%q) ok, but its String %q fails: %v", s, text, err)
		}
		if !reflect.DeepEqual(back, flow) {
			t.Fatalf("round trip of %q via %q:\n got  %+v\n want %+v", s, text, back, flow)
		}
	})
}
