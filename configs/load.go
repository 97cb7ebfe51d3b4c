package configs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/agnivade/levenshtein"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// ConfigFlag is the flag that names the config file.
const ConfigFlag = "config"

// nonSettingEnv are BOXD_* variables the project uses that are not settings
// (test harness paths); they are not reported as unknown.
var nonSettingEnv = map[string]bool{
	"BOXD_TEST_MODELS":     true,
	"BOXD_TEST_DATA":       true,
	"BOXD_BROWSER_SANDBOX": true, // engine/browser/browsertest's network namespace
}

// RegisterFlags adds --config and one flag per setting (secrets excepted) to fs.
func RegisterFlags(fs *pflag.FlagSet) {
	fs.String(ConfigFlag, DefaultFile, "config file (YAML); a missing default file means built-in defaults")
	for _, s := range settings {
		if s.secret {
			continue
		}
		usage := s.usage + " (" + s.key + ", " + s.env() + ")"
		switch s.kind {
		case kindString:
			fs.String(s.flag(), s.def.(string), usage)
		case kindInt:
			fs.Int(s.flag(), s.def.(int), usage)
		case kindBool:
			fs.Bool(s.flag(), s.def.(bool), usage)
		case kindList:
			fs.StringSlice(s.flag(), s.def.([]string), usage)
		}
	}
}

// RegisterFileFlags adds only --config and --state-dir, for commands that
// work on the state directory (boxd keys, boxd verify) without serving.
func RegisterFileFlags(fs *pflag.FlagSet) {
	fs.String(ConfigFlag, DefaultFile, "config file (YAML); a missing default file means built-in defaults")
	s, _ := lookup("state_dir")
	fs.String(s.flag(), s.def.(string), s.usage+" ("+s.key+", "+s.env()+")")
}

// Load merges, in rising precedence, the built-in defaults, the config file,
// BOXD_* environment variables and the flags of fs (which may be nil), then
// validates every value. Errors name the offending key and where its value
// came from.
func Load(fs *pflag.FlagSet) (*Config, error) {
	file, explicit := DefaultFile, false
	if fs != nil {
		if f := fs.Lookup(ConfigFlag); f != nil {
			file, explicit = f.Value.String(), f.Changed
		}
	}

	v := viper.New()
	v.SetConfigType("yaml")
	for _, s := range settings {
		v.SetDefault(s.key, s.def)
	}

	cfg := &Config{sources: map[string]string{}}
	fileKeys, err := readFile(v, file, explicit)
	if err != nil {
		return nil, err
	}
	if fileKeys != nil {
		cfg.File = file
		for _, k := range fileKeys {
			cfg.sources[k] = "file " + file
		}
	}

	v.SetEnvPrefix("BOXD")
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_"))
	v.AllowEmptyEnv(true)
	if err := checkEnv(os.Environ()); err != nil {
		return nil, err
	}
	for _, s := range settings {
		if err := v.BindEnv(s.key, s.env()); err != nil {
			return nil, fmt.Errorf("config: bind %s: %w", s.env(), err)
		}
		if _, ok := os.LookupEnv(s.env()); ok {
			cfg.sources[s.key] = "env " + s.env()
		}
	}

	if fs != nil {
		for _, s := range settings {
			if s.secret {
				continue
			}
			f := fs.Lookup(s.flag())
			if f == nil {
				continue
			}
			if err := v.BindPFlag(s.key, f); err != nil {
				return nil, fmt.Errorf("config: bind --%s: %w", s.flag(), err)
			}
			if f.Changed {
				cfg.sources[s.key] = "flag --" + s.flag()
			}
		}
	}

	var errs []error
	for _, s := range settings {
		if err := s.assign(cfg, v.Get(s.key)); err != nil {
			errs = append(errs, fmt.Errorf("%s (%s): %w", s.key, cfg.Source(s.key), err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	if err := cfg.finish(); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return cfg, nil
}

// readFile reads the YAML config file into v and returns the setting keys it
// holds, or nil when there is no file to read. Unknown keys are errors.
func readFile(v *viper.Viper, file string, explicit bool) ([]string, error) {
	if file == "" {
		return nil, nil
	}
	if _, err := os.Stat(file); err != nil {
		if errors.Is(err, fs.ErrNotExist) && !explicit {
			return nil, nil
		}
		return nil, fmt.Errorf("config file %s: %w", file, err)
	}
	// A bare instance sees only the file's keys, not defaults or env.
	bare := viper.New()
	bare.SetConfigType("yaml")
	bare.SetConfigFile(file)
	if err := bare.ReadInConfig(); err != nil {
		return nil, fmt.Errorf("config file %s: %w", file, err)
	}
	keys := bare.AllKeys()
	sort.Strings(keys)
	var errs []error
	for _, k := range keys {
		if _, ok := lookup(k); !ok {
			errs = append(errs, fmt.Errorf("config file %s: %s", file, unknownKey(k)))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	v.SetConfigFile(file)
	if err := v.ReadInConfig(); err != nil {
		return nil, fmt.Errorf("config file %s: %w", file, err)
	}
	return keys, nil
}

// checkEnv refuses BOXD_* variables that name no setting, so that a typo in
// a systemd drop-in does not silently fall back to a default.
func checkEnv(environ []string) error {
	known := map[string]bool{}
	for _, s := range settings {
		known[s.env()] = true
	}
	var errs []error
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "BOXD_") || known[name] || nonSettingEnv[name] {
			continue
		}
		msg := fmt.Sprintf("environment variable %s is not a setting", name)
		if best := closest(name, func(s setting) string { return s.env() }); best != "" {
			msg += "; did you mean " + best + "?"
		}
		errs = append(errs, errors.New(msg))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	return nil
}

func lookup(key string) (setting, bool) {
	for _, s := range settings {
		if s.key == key {
			return s, true
		}
	}
	return setting{}, false
}

func unknownKey(k string) string {
	var group []string
	for _, s := range settings {
		if strings.HasPrefix(s.key, k+".") {
			group = append(group, s.key)
		}
	}
	if len(group) > 0 {
		return fmt.Sprintf("%s is a group of settings (%s); write it as a mapping", k, strings.Join(group, ", "))
	}
	msg := fmt.Sprintf("unknown setting %s", k)
	if best := closest(k, func(s setting) string { return s.key }); best != "" {
		msg += "; did you mean " + best + "?"
	}
	return msg
}

// closest returns the setting name nearest to name, if it is near enough to
// be a typo.
func closest(name string, nameOf func(setting) string) string {
	best, bestD := "", 1<<30
	for _, s := range settings {
		if d := levenshtein.ComputeDistance(strings.ToLower(name), strings.ToLower(nameOf(s))); d < bestD {
			best, bestD = nameOf(s), d
		}
	}
	if bestD <= 3 {
		return best
	}
	return ""
}

// finish resolves paths and the admin secret after every key is valid.
func (c *Config) finish() error {
	for _, p := range []*string{&c.StateDir, &c.DataDir} {
		abs, err := filepath.Abs(*p)
		if err != nil {
			return fmt.Errorf("resolve %s: %w", *p, err)
		}
		*p = abs
	}
	if c.Diarize.MaxSpeakers < c.Diarize.MinSpeakers {
		return fmt.Errorf("diarize.max_speakers (%d, %s) is below diarize.min_speakers (%d, %s); raise diarize.max_speakers", c.Diarize.MaxSpeakers, c.Source("diarize.max_speakers"), c.Diarize.MinSpeakers, c.Source("diarize.min_speakers"))
	}
	if (c.Models.Diarizer.Path == "") != (c.Models.DiarizerEmbedding.Path == "") {
		return fmt.Errorf("models.diarizer.path and models.diarizer.embedding_path go together (the segmentation and the speaker-embedding network); set both, or neither for the model-free diarizer")
	}
	if c.AdminSecretFile == "" {
		return nil
	}
	if c.AdminSecret.IsSet() {
		return fmt.Errorf("admin_secret (%s) and admin_secret_file (%s) are both set; use one", c.Source("admin_secret"), c.Source("admin_secret_file"))
	}
	b, err := os.ReadFile(c.AdminSecretFile)
	if err != nil {
		return fmt.Errorf("admin_secret_file (%s): %w", c.Source("admin_secret_file"), err)
	}
	secret := strings.TrimRight(string(b), "\r\n")
	if secret == "" {
		return fmt.Errorf("admin_secret_file (%s): %s is empty", c.Source("admin_secret_file"), c.AdminSecretFile)
	}
	if err := checkSecret(secret); err != nil {
		return fmt.Errorf("admin_secret_file (%s): the secret %w", c.Source("admin_secret_file"), err)
	}
	c.AdminSecret = Secret(secret)
	return nil
}

// Entry is one effective setting, for `boxd config`.
type Entry struct {
	Key    string
	Value  string
	Source string
}

// Effective lists every setting with its value (secrets redacted) and source.
func (c *Config) Effective() []Entry {
	out := make([]Entry, 0, len(settings))
	for _, s := range settings {
		val := reflectValue(s.field(c))
		var text string
		switch {
		case s.secret:
			text = Secret(val.(string)).String()
		case s.kind == kindList:
			text = "[" + strings.Join(val.([]string), ", ") + "]"
		default:
			text = fmt.Sprint(val)
		}
		out = append(out, Entry{Key: s.key, Value: text, Source: c.Source(s.key)})
	}
	return out
}
