// Package testchart generates synthetic charts for benchmarks and fuzz seeds:
// Lucid "CSV of shape data" exports and Lucid API document-contents JSON of
// any size, shaped like the real thing
// (readme/charts.md#exporting-from-lucid), so the importer and the walker can
// be measured on charts far larger than anyone would draw by hand.
//
// The output is deterministic: the same arguments always give the same bytes,
// so a benchmark or a fuzz seed built from it is reproducible. Ids are dense
// 1..N in row order in the CSV, as Lucid assigns them at export time, and
// 12-character strings in the JSON, like the ids the API returns.
package testchart
