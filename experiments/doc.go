// Package experiments runs experiment specs and writes what they found:
// every cell of a spec's grid on the sim or live backend, then
// summary.json, the CSVs, the figures and report.md into one output
// directory, all at once.
//
// A spec is a grid of experiments × base loads × rates × priority
// patterns on one switch profile and seed (docs/experiments.md).
//
// A sweep too large for one machine runs as shards (`experiment run
// --shard i/n`, each a deterministic subset of the cells) whose outputs
// `experiment merge` combines into exactly what one run writes
// (docs/scale.md).
package experiments
