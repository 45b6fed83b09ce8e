// Package types holds dtree's data: the imported chart (document, pages,
// nodes, edges), the diagnostics found while importing and linting it, and
// the processed form of a node that the runner uses. It does no I/O and
// imports nothing from internal/, so every layer can share it.
package types
