package experiments

import (
	"bytes"
	"encoding/json"
	"math"
)

// Summary is summary.json: the contract scripts and tests rely on
// (docs/experiments.md). Field order is fixed by the struct; map keys are
// sorted by encoding/json, so the file is byte-identical for a seed except
// wall_seconds.
type Summary struct {
	Spec        string         `json:"spec"`
	Backend     string         `json:"backend"`
	Profile     string         `json:"profile"`
	Seed        uint64         `json:"seed"`
	WallSeconds float64        `json:"wall_seconds"`
	Results     map[string]any `json:"results"`
	Paper       map[string]any `json:"paper"`
}

// Summary builds summary.json's content: every value (a number, or an
// array of four bin shares), and the paper's value for every key the paper
// states.
func (r *Result) Summary() Summary {
	s := Summary{
		Spec:        r.Spec.Name,
		Backend:     r.Backend,
		Profile:     r.Profile.Name,
		Seed:        r.Seed,
		WallSeconds: math.Round(r.Wall.Seconds()*1000) / 1000,
		Results:     map[string]any{},
		Paper:       map[string]any{},
	}
	for k, v := range r.Values {
		s.Results[k] = jsonValue(v)
	}
	if r.Spec.KeyPrefix != "" {
		return s // its keys are its own: the paper states none of them
	}
	for k, p := range PaperNumbers() {
		s.Paper[k] = p.JSON()
	}
	return s
}

// jsonValue is a scalar for one value, an array otherwise. Values are
// rounded to 12 significant digits so that the text never depends on the
// last bit of a float computation.
func jsonValue(v []float64) any {
	round := func(x float64) float64 {
		if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
			return x
		}
		p := math.Pow(10, 11-math.Floor(math.Log10(math.Abs(x))))
		return math.Round(x*p) / p
	}
	if len(v) == 1 {
		return round(v[0])
	}
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = round(x)
	}
	return out
}

// MarshalSummary renders summary.json (indented, trailing newline).
func MarshalSummary(s Summary) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(s); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
