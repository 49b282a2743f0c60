package testenv

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

func TestParseOpenFlowFields(t *testing.T) {
	// Lines as tshark 4.0 prints them with the columns of openFlowFields
	// and aggregator "|" (taken from real captures on this machine).
	for _, tc := range []struct {
		name    string
		out     string
		want    []OpenFlowRecord
		wantErr bool
	}{
		{
			name: "one hello",
			out:  "4\t0x01\t0\t1\t8\t\t\t\n",
			want: []OpenFlowRecord{{Frame: 4, Version: 1, Type: 0, XID: 1, Length: 8}},
		},
		{
			name: "two messages in one frame, warning",
			out:  "4\t0x01|0x01\t0|2\t1|2\t8|12\t\t6291456\tMessage data not dissected yet\n",
			want: []OpenFlowRecord{
				{Frame: 4, Version: 1, Type: 0, XID: 1, Length: 8, MaxSeverity: SeverityWarning, Expert: []string{"Message data not dissected yet"}},
				{Frame: 4, Version: 1, Type: 2, XID: 2, Length: 12, MaxSeverity: SeverityWarning, Expert: []string{"Message data not dissected yet"}},
			},
		},
		{
			name: "malformed features reply",
			out:  "6\t0x01\t6\t6\t8\t[Malformed Packet: openflow_v1]|_ws.malformed\t2097152|8388608\tA, with comma|Malformed Packet (Exception occurred)\n",
			want: []OpenFlowRecord{{Frame: 6, Version: 1, Type: 6, XID: 6, Length: 8, Malformed: true,
				MaxSeverity: SeverityError, Expert: []string{"A, with comma", "Malformed Packet (Exception occurred)"}}},
		},
		{name: "empty output", out: "\n", want: nil},
		{name: "column counts disagree", out: "4\t0x01\t0|2\t1\t8\t\t\t\n", wantErr: true},
		{name: "non-numeric type", out: "4\t0x01\tHELLO\t1\t8\t\t\t\n", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseOpenFlowFields(tc.out)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestParseQueryResponse(t *testing.T) {
	for _, tc := range []struct {
		name    string
		body    string
		want    []Sample
		wantErr string
	}{
		{
			name: "vector",
			body: `{"status":"success","data":{"resultType":"vector","result":[{"metric":{"__name__":"up","job":"j"},"value":[1700000000.5,"1"]}]}}`,
			want: []Sample{{Metric: map[string]string{"__name__": "up", "job": "j"}, Time: time.Unix(1700000000, 5e8), Value: 1}},
		},
		{
			name: "empty vector",
			body: `{"status":"success","data":{"resultType":"vector","result":[]}}`,
			want: []Sample{},
		},
		{
			name: "scalar",
			body: `{"status":"success","data":{"resultType":"scalar","result":[1700000000,"2.5"]}}`,
			want: []Sample{{Time: time.Unix(1700000000, 0), Value: 2.5}},
		},
		{
			name:    "error envelope",
			body:    `{"status":"error","errorType":"bad_data","error":"parse error"}`,
			wantErr: "bad_data: parse error",
		},
		{name: "not json", body: `<html>`, wantErr: "decode response"},
		{
			name:    "matrix unsupported",
			body:    `{"status":"success","data":{"resultType":"matrix","result":[]}}`,
			wantErr: "unsupported result type",
		},
		{
			name:    "bad value",
			body:    `{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,"x"]}]}}`,
			wantErr: "sample value",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseQueryResponse([]byte(tc.body))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestScrapeConfigIsValidYAML(t *testing.T) {
	for _, tc := range []struct {
		interval     time.Duration
		wantInterval string
	}{
		{2 * time.Second, "2s"},
		{100 * time.Millisecond, "1s"}, // clamped
	} {
		text := ScrapeConfig("job-a", tc.interval, "127.0.0.1:1", "127.0.0.1:2")
		var cfg struct {
			Global struct {
				ScrapeInterval string `yaml:"scrape_interval"`
			} `yaml:"global"`
			ScrapeConfigs []struct {
				JobName       string `yaml:"job_name"`
				StaticConfigs []struct {
					Targets []string `yaml:"targets"`
				} `yaml:"static_configs"`
			} `yaml:"scrape_configs"`
		}
		if err := yaml.Unmarshal([]byte(text), &cfg); err != nil {
			t.Fatalf("%v\n%s", err, text)
		}
		if cfg.Global.ScrapeInterval != tc.wantInterval {
			t.Errorf("scrape_interval = %q, want %q", cfg.Global.ScrapeInterval, tc.wantInterval)
		}
		if len(cfg.ScrapeConfigs) != 1 || cfg.ScrapeConfigs[0].JobName != "job-a" ||
			!reflect.DeepEqual(cfg.ScrapeConfigs[0].StaticConfigs[0].Targets, []string{"127.0.0.1:1", "127.0.0.1:2"}) {
			t.Errorf("unexpected config %+v from\n%s", cfg, text)
		}
	}
}

func TestOpenFlowRecordBroken(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    OpenFlowRecord
		want bool
	}{
		{"clean", OpenFlowRecord{Type: 0, Length: 8}, false},
		{"undissected body is a warning", OpenFlowRecord{Type: 1, Length: 12, MaxSeverity: SeverityWarning}, false},
		{"malformed", OpenFlowRecord{Type: 6, Length: 8, Malformed: true, MaxSeverity: SeverityError}, true},
		{"error expert without malformed", OpenFlowRecord{Type: 10, Length: 20, MaxSeverity: SeverityError}, true},
		{"72-byte FLOW_MOD false positive", OpenFlowRecord{Type: 14, Length: 72, Malformed: true, MaxSeverity: SeverityError}, false},
		{"malformed FLOW_MOD of another length", OpenFlowRecord{Type: 14, Length: 80, Malformed: true}, true},
	} {
		if got := tc.r.Broken(); got != tc.want {
			t.Errorf("%s: Broken() = %v, want %v", tc.name, got, tc.want)
		}
	}
}
