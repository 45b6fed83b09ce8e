package settings

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/dtree-dev/dtree/internal/atomicfile"
	"github.com/dtree-dev/dtree/types"
)

// Trust of a project file (readme/settings.md#trust). A ./dtree.yaml dtree
// finds by itself in a checkout comes with the checkout: until the user
// trusts it, it may not say what runs as an agent (clis:) nor make dtree
// replace a file anywhere (junit), or loosen the user's budget. Trust is
// a record in the user's config directory, as direnv's allow and mise's
// trust keep theirs: one file per project file, named by the hash of its
// absolute path, holding that path and the sha256 of the content trusted.
// A file whose content changed is untrusted again.

// ErrUntrusted is the error of a project file that sets guarded keys
// without being trusted.
var ErrUntrusted = errors.New("not trusted")

// TrustEnv trusts the project file dtree finds for one command, as --trust
// does: for a CI job running its own repository.
const TrustEnv = "DTREE_TRUST"

// TrustRecord is one trusted file, as stored.
type TrustRecord struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

// Untrusted names the keys of an untrusted project file that dtree
// refuses to apply: they say what runs, or write outside the run.
type Untrusted struct {
	File string
	Keys []UntrustedKey // in line order
}

// UntrustedKey is one refused key and its line.
type UntrustedKey struct {
	Key  string // clis.claude, junit
	Line int
}

// Has reports whether key (clis.NAME, or a setting) is refused.
func (u *Untrusted) Has(key string) bool {
	return u != nil && slices.ContainsFunc(u.Keys, func(k UntrustedKey) bool { return k.Key == key })
}

// Names are the refused keys, as "clis.claude (line 2)".
func (u *Untrusted) Names() string {
	var out []string
	for _, k := range u.Keys {
		out = append(out, fmt.Sprintf("%s (line %d)", k.Key, k.Line))
	}
	return strings.Join(out, ", ")
}

// Error is the error of a command that would use the refused keys: exit
// 2, naming the file, the keys and how to trust it.
func (u *Untrusted) Error() *Error {
	return &Error{Source: Source{Layer: LayerProject, Name: u.File},
		Err: fmt.Errorf("%w, and it sets what only a trusted file may: %s", ErrUntrusted, u.Names()),
		Hint: "read the file; if you trust what it sets, run 'dtree trust' (it stays trusted until it changes)\n" +
			"a CI job running its own repository can pass --trust or set " + TrustEnv + "=1 instead ('dtree docs settings' says more)"}
}

// Digest is the sha256 of a file's content, in hex.
func Digest(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// TrustDir is where the trust records are: trusted/ beside the user file;
// "" when the environment does not say where home is.
func (o LoadOptions) TrustDir() string {
	u := o.UserFile()
	if u == "" {
		return ""
	}
	return filepath.Join(filepath.Dir(u), "trusted")
}

// recordPath is the record of the file at abs.
func recordPath(dir, abs string) string {
	return filepath.Join(dir, Digest([]byte(abs))[:32]+".json")
}

// readRecord reads the record of abs; nil when there is none (or it is not
// one dtree wrote, which trusts nothing).
func readRecord(dir, abs string) (*TrustRecord, error) {
	data, err := os.ReadFile(recordPath(dir, abs))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var r TrustRecord
	if json.Unmarshal(data, &r) != nil || r.Path != abs {
		return nil, nil
	}
	return &r, nil
}

// IsTrusted reports whether the file at abs is trusted with content data.
func IsTrusted(dir, abs string, data []byte) bool {
	if dir == "" {
		return false
	}
	r, err := readRecord(dir, abs)
	return err == nil && r != nil && r.SHA256 == Digest(data)
}

// Trust records the file at abs (an absolute path) as trusted with content
// data.
func Trust(dir, abs string, data []byte) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	rec, err := json.Marshal(TrustRecord{Path: abs, SHA256: Digest(data)})
	if err != nil {
		return err
	}
	return atomicfile.WriteBytes(recordPath(dir, abs), append(rec, '\n'), 0o600, atomicfile.Options{Sync: true})
}

// Revoke removes the record of abs; false when there was none.
func Revoke(dir, abs string) (bool, error) {
	err := os.Remove(recordPath(dir, abs))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// TrustedFiles lists the records in dir, by path.
func TrustedFiles(dir string) ([]TrustRecord, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return []TrustRecord{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := []TrustRecord{}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		var r TrustRecord
		if json.Unmarshal(data, &r) == nil && r.Path != "" && recordPath(dir, r.Path) == filepath.Join(dir, e.Name()) {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b TrustRecord) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}

// trustFromEnv reads DTREE_TRUST: unset, or true or false as a setting's
// booleans are written.
func trustFromEnv(getenv func(string) string) (bool, error) {
	v := strings.TrimSpace(getenv(TrustEnv))
	if v == "" {
		return false, nil
	}
	switch strings.ToLower(v) {
	case "true", "yes", "on", "1":
		return true, nil
	case "false", "no", "off", "0":
		return false, nil
	}
	return false, &Error{Source: Source{Layer: LayerEnv, Name: TrustEnv}, Err: fmt.Errorf("%s: %q is not true or false", TrustEnv, v),
		Hint: fmt.Sprintf("set %s=1 to trust ./dtree.yaml for this command, or unset it", TrustEnv)}
}

// trusted reports whether the project file f may set guarded keys.
func (o LoadOptions) trusted(f *fileLayer) (bool, error) {
	if o.ConfigFile != "" || o.Trust {
		// --config FILE: the user named the file; --trust: the user said so.
		return true, nil
	}
	if ok, err := trustFromEnv(o.getenv); ok || err != nil {
		return ok, err
	}
	abs, err := filepath.Abs(f.src.Name)
	if err != nil {
		return false, nil
	}
	return IsTrusted(o.TrustDir(), abs, f.data), nil
}

// untrusted is what an untrusted project file f sets that it may not: each
// custom CLI it defines (a new name or a built-in's), a junit file, a
// budget looser than the user file's, allow_unmetered under a budget,
// approvals that answer every gate, checkpoints off and more calls at
// once than the user file's parallel (or the default). Only keys whose value applies count:
// one a variable or flag overrides does nothing.
func untrusted(s *Settings, f *fileLayer, user *fileLayer) *Untrusted {
	u := &Untrusted{File: f.src.Name}
	for key, src := range s.Sources {
		if src.Layer != LayerProject {
			continue
		}
		switch {
		case strings.HasPrefix(key, KeyCLIs+"."):
		case key == KeyJUnit && s.JUnit != "":
		case key == KeyKeepRuns && s.KeepRuns != 0:
			// It removes runs' directories from log_dir, which the same
			// file may point anywhere.
		case key == KeyMaxCost && user != nil && looser(user, key, s.MaxCost):
		case key == KeyMaxTokens && user != nil && looser(user, key, float64(s.MaxTokens)):
		case key == KeyAllowUnmetered && s.AllowUnmetered && (s.MaxCost > 0 || s.MaxTokens > 0):
			// Calls a budget cannot count: a budget looser than it looks.
		case key == KeyApprovals && s.Approvals != ApprovalsAsk:
			// It answers the gates the user drew to be asked at.
		case key == KeyCheckpoints && !s.Checkpoints:
			// Without the record, what the checkout's chart does to the
			// user's tree cannot be shown or undone.
		case key == KeyParallel && s.Parallel > userParallel(user):
			// The checkout's chart can fork a thousand ways: as many
			// agents at once on the user's machine and key, each able to
			// spend past a budget by a message before it is stopped.
		default:
			continue
		}
		u.Keys = append(u.Keys, UntrustedKey{Key: key, Line: src.Line})
	}
	if len(u.Keys) == 0 {
		return nil
	}
	slices.SortFunc(u.Keys, func(a, b UntrustedKey) int { return a.Line - b.Line })
	return u
}

// userParallel is the most calls at once an untrusted project file may
// set: the user file's parallel, or the default.
func userParallel(user *fileLayer) int {
	if user != nil {
		if sc, ok := user.values[KeyParallel]; ok {
			if n, err := strconv.Atoi(strings.TrimSpace(sc.text)); err == nil && n > 0 {
				return n
			}
		}
	}
	return types.DefaultParallel
}

// looser reports whether a budget of v (0: none) is looser than the one
// the user file sets for key.
func looser(user *fileLayer, key string, v float64) bool {
	sc, ok := user.values[key]
	if !ok {
		return false
	}
	mine, err := strconv.ParseFloat(strings.TrimPrefix(strings.TrimSpace(sc.text), "$"), 64)
	if err != nil || mine <= 0 {
		return false
	}
	return v == 0 || v > mine
}

// ReadSettingsFile reads a file to trust: it must be there and be a
// settings file dtree reads. It returns the content read.
func ReadSettingsFile(path string) ([]byte, error) {
	src := Source{Layer: LayerProject, Name: path}
	data, err := readSettingsBytes(path)
	if err != nil {
		return nil, &Error{Source: src, Err: fmt.Errorf("cannot read the settings file: %w", unwrapPath(err)),
			Hint: "dtree trust takes a settings file, ./dtree.yaml when none is named"}
	}
	_, root, err := parseYAML(data, src)
	if err == nil && root != nil {
		_, err = readLayer(root, src)
	}
	return data, err
}
