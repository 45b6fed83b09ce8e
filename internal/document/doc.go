// Package document imports charts — Lucid's "CSV of shape data" export,
// the Lucid API document-contents JSON, and dtree's own YAML
// (readme/yaml-charts.md) — into a types.Document: a graph of nodes and
// labelled edges per page, with the import errors and warnings of
// readme/lint.md#classes (and malformed_yaml for YAML).
//
// An importer never fails on bad chart content: what is wrong with the chart
// is reported in Document.Errors and Document.Warnings, each a
// types.Diagnostic with a stable class name. The error return is kept for
// failures to read the input at all.
//
//	FromCSV(r io.Reader) (*types.Document, error)
//	FromJSON(r io.Reader) (*types.Document, error)
//	FromYAML(r io.Reader) (*types.Document, error)
//	Read(path, format string, stdin io.Reader) (*types.Document, error)
package document
