package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dtree-dev/dtree/types"
)

// flagError words a flag the command line got wrong as dtree's other
// errors are: the flag meant, when one is a typo away, and a bad value
// without Go's parser in it.
func flagError(c *cobra.Command, err error) error {
	var (
		missing *pflag.NotExistError
		invalid *pflag.InvalidValueError
	)
	switch {
	case errors.As(err, &missing):
		name := missing.GetSpecifiedName()
		if short := missing.GetSpecifiedShortnames(); short != "" {
			// -retries: a long flag with one dash is read as -r -e -t …
			if len(short) > 1 && c.Flags().Lookup(short) != nil {
				return fmt.Errorf("unknown shorthand flag %q in -%s; did you mean --%s?", name, short, short)
			}
			return fmt.Errorf("unknown shorthand flag %q in -%s", name, short)
		}
		return fmt.Errorf("unknown flag --%s%s", name, didYouMeanFlag(c, name))
	case errors.As(err, &invalid):
		f := invalid.GetFlag()
		what := "a value it takes"
		switch f.Value.Type() {
		case "int", "int64", "uint":
			what = "a whole number"
		case "bool":
			what = "true or false"
		case "duration":
			what = "a duration such as 90s or 15m"
		}
		return fmt.Errorf("--%s %q: not %s", f.Name, invalid.GetValue(), what)
	}
	return err
}

// didYouMeanFlag is "; did you mean --NAME?" for a flag of c one typo
// away from name, else "".
func didYouMeanFlag(c *cobra.Command, name string) string {
	var names []string
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	})
	if near, ok := types.Nearest(name, names); ok {
		return "; did you mean --" + near + "?"
	}
	return ""
}

// unknownCommand words cobra's error for a command it does not have:
// cobra's own "Did you mean this?" block is off (DisableSuggestions), and
// the command meant, if any, goes on the error's line.
func unknownCommand(root *cobra.Command, args []string, err error) error {
	if !strings.HasPrefix(err.Error(), "unknown command ") {
		return err
	}
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			continue
		}
		var names []string
		for _, c := range root.Commands() {
			if c.IsAvailableCommand() {
				names = append(names, c.Name())
			}
		}
		near, ok := types.Nearest(a, names)
		if !ok {
			// cobra's own: a prefix (ins → inspect), or SuggestFor
			if s := root.SuggestionsFor(a); len(s) > 0 {
				near, ok = s[0], true
			}
		}
		if ok {
			return fmt.Errorf("unknown command %q for %q; did you mean %s?", a, root.CommandPath(), near)
		}
		return fmt.Errorf("unknown command %q for %q", a, root.CommandPath())
	}
	return err
}
