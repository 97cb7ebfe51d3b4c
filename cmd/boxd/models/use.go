package models

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"boxd/cmd/boxd/cli"
	"boxd/configs"
	"boxd/engine/models/catalogue"
	"boxd/engine/models/catalogue/configedit"
	"boxd/engine/models/catalogue/install"
)

func newModelsUse() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "use ROLE NAME",
		Short: "Configure a pulled catalogue model for a role: writes models.<role>.path (and the chat model's projector and template) into the config file",
		Long: `Point ROLE (chat, speech, vad, embedder, reranker) at the catalogue model NAME,
which boxd models pull NAME put in the models folder. use writes the setting into
the config file (--config, default /etc/boxd/boxd.yaml), changing only those
values: comments and the rest of the file stay as they are. For chat it also
writes models.llm.projector (the model's vision projector, or "" for a model
without one) and models.llm.template (auto, or the family a model without a
template needs). The new file is loaded before it replaces the old one; restart
boxd to use it. Run as root (or the file's owner): the file keeps its owner and
mode.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			role, err := catalogue.ParseRole(args[0])
			if err != nil {
				return err
			}
			c, err := catalogueOf(cmd)
			if err != nil {
				return err
			}
			e, ok := c.Lookup(args[1])
			if !ok {
				return unknownModel(c, args[1])
			}
			if e.Role != role {
				return fmt.Errorf("%s is a %s model, not a %s model: boxd models use %s %s", e.Name, e.Role, role, e.Role, e.Name)
			}
			// A config file named but not there yet is written new.
			file, _ := cmd.Flags().GetString(configs.ConfigFlag)
			src, err := os.ReadFile(file)
			switch {
			case errors.Is(err, fs.ErrNotExist):
				src = nil
				cmd.Flags().Lookup(configs.ConfigFlag).Changed = false
			case err != nil:
				return fmt.Errorf("read the config file: %w", err)
			}
			cfg, err := configs.Load(cmd.Flags())
			if err != nil {
				return cli.ConfigError{Err: err}
			}
			st := install.StatusOf(modelsDir(cfg), e)
			if st.State != install.Present {
				return fmt.Errorf("%s is not pulled yet (%s in %s): run boxd models pull %s first (as the boxd user on an installed box: sudo -u boxd boxd models pull %s)", e.Name, st.State, modelsDir(cfg), e.Name, e.Name)
			}
			kvs := []configedit.KV{{Key: role.Key(), Value: st.Paths[0]}}
			if role == catalogue.Chat {
				projector := ""
				for i, f := range e.Files {
					if f.Kind == catalogue.KindProjector {
						projector = st.Paths[i]
					}
				}
				template := "auto"
				if t, ok := e.Settings[catalogue.TemplateKey]; ok {
					template = t
				}
				kvs = append(kvs, configedit.KV{Key: catalogue.ProjectorKey, Value: projector}, configedit.KV{Key: catalogue.TemplateKey, Value: template})
			}
			out, err := configedit.Set(src, kvs...)
			if err != nil {
				return fmt.Errorf("%s: %w", file, err)
			}
			if err := checkConfigBytes(cmd, file, out); err != nil {
				return err
			}
			if err := configedit.WriteFile(file, out); err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			for _, kv := range kvs {
				fmt.Fprintf(w, "%-22s %q\n", kv.Key+":", kv.Value)
				if env := configs.EnvName(kv.Key); os.Getenv(env) != "" {
					fmt.Fprintf(cmd.ErrOrStderr(), "boxd: %s is set in this environment and overrides %s from the file\n", env, kv.Key)
				}
			}
			fmt.Fprintf(w, "written to %s; restart boxd to load %s (sudo systemctl restart boxd)\n", file, e.Name)
			return nil
		},
	}
	configs.RegisterFileFlags(cmd.Flags())
	catalogueFlag(cmd)
	return cmd
}

// checkConfigBytes loads the edited configuration from a temporary copy
// beside the file, the way boxd serve will, so a file that would not load
// never replaces the old one.
func checkConfigBytes(cmd *cobra.Command, file string, data []byte) error {
	dir, base := filepath.Split(file)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".check-*")
	if err != nil {
		return fmt.Errorf("check the new config file: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("check the new config file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("check the new config file: %w", err)
	}
	f := cmd.Flags().Lookup(configs.ConfigFlag)
	old, changed := f.Value.String(), f.Changed
	defer func() { _ = f.Value.Set(old); f.Changed = changed }()
	_ = f.Value.Set(tmp.Name())
	f.Changed = true
	if _, err := configs.Load(cmd.Flags()); err != nil {
		return fmt.Errorf("the config file would not load after the change, so %s was left as it was: %w", file, err)
	}
	return nil
}
