package tcam

import "fmt"

// Mirror is a TCAM with a Classifier kept in step with it: the TCAM prices
// every change and records every lookup, while the answers come from the
// classifier, so the live packet path never scans the slots.
type Mirror struct {
	tcam       *TCAM
	classifier *Classifier
}

// NewMirror wraps an empty TCAM; cacheSlots sizes the classifier's
// exact-match cache (0 disables it).
func NewMirror(t *TCAM, cacheSlots int) (*Mirror, error) {
	if t.Len() != 0 {
		return nil, fmt.Errorf("tcam mirror: TCAM already holds %d entries", t.Len())
	}
	return &Mirror{tcam: t, classifier: NewClassifier(t.TieBreak(), cacheSlots)}, nil
}

// TCAM is the mirrored TCAM, for its totals and read-only queries. Changes
// must go through the Mirror or the two fall out of step.
func (m *Mirror) TCAM() *TCAM { return m.tcam }

// Classifier is the mirroring classifier (read-only use).
func (m *Mirror) Classifier() *Classifier { return m.classifier }

// InsertCost is TCAM.InsertCost.
func (m *Mirror) InsertCost(e Entry) (Cost, error) { return m.tcam.InsertCost(e) }

// Insert installs e in both; it fails without changing either when the
// TCAM refuses (full, duplicate ID).
func (m *Mirror) Insert(e Entry) (Cost, error) {
	c, err := m.tcam.Insert(e)
	if err != nil {
		return Cost{}, err
	}
	if err := m.classifier.Insert(e); err != nil {
		// Cannot happen while both hold the same IDs; undo to stay in step.
		_, _ = m.tcam.Delete(e.ID)
		return Cost{}, fmt.Errorf("tcam mirror: classifier out of step: %w", err)
	}
	return c, nil
}

// Delete removes entry id from both.
func (m *Mirror) Delete(id uint64) (Cost, error) {
	c, err := m.tcam.Delete(id)
	if err != nil {
		return Cost{}, err
	}
	if _, err := m.classifier.Delete(id); err != nil {
		return c, fmt.Errorf("tcam mirror: classifier out of step: %w", err)
	}
	return c, nil
}

// Lookup answers from the classifier and charges the TCAM one lookup.
func (m *Mirror) Lookup(k Key) (Entry, bool) {
	m.tcam.RecordLookup()
	return m.classifier.Lookup(k)
}
