package cli

import (
	"errors"
	"fmt"
	"github.com/dtree-dev/dtree/types"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/dtree-dev/dtree/internal/settings"
)

// A bad setting is a configuration error, exit 2, however it is wrapped
// (dtree run returns settings.Load's error as it is).
func TestExitCodeSettingsError(t *testing.T) {
	t.Parallel()
	bad := &settings.Error{Source: settings.Source{Layer: settings.LayerEnv, Name: "DTREE_DEFAULT_TIMEOUT"},
		Key: "default_timeout", Err: errors.New(`"0" is not a positive duration`), Hint: "change or unset DTREE_DEFAULT_TIMEOUT"}
	tests := []struct {
		name string
		err  error
	}{
		{name: "as returned", err: bad},
		{name: "wrapped", err: fmt.Errorf("load settings: %w", bad)},
		{name: "as a usage error", err: settingsFailure(bad)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, types.ExitUsage, exitCode(tt.err))
		})
	}
	var usage *UsageError
	if assert.ErrorAs(t, settingsFailure(bad), &usage) {
		assert.Equal(t, bad.Hint, usage.Hint, "the hint reaches printError")
	}
}
