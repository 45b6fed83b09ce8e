// Package settings reads dtree's settings (readme/settings.md): built-in
// defaults, the user file ($XDG_CONFIG_HOME/dtree/config.yaml), the project
// file (./dtree.yaml, or --config FILE), DTREE_* environment variables and
// flags, in rising precedence, with custom agent CLIs under clis:. Load is
// the one place viper is used; UserFile edits the user file for `dtree
// settings`. readme/settings.md is the user's manual for both.
package settings
