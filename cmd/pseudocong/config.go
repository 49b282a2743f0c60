package main

import (
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// newViper gives one command its own configuration: flags (highest
// precedence), PSEUDOCONG_* environment variables, then the --config file,
// then the flag defaults. Each command owns its instance; there is no global.
//
// Environment names are the flag names upper-cased with '-' turned into '_':
// --metrics-addr is PSEUDOCONG_METRICS_ADDR.
func newViper(cmd *cobra.Command) (*viper.Viper, error) {
	v := viper.New()
	v.SetEnvPrefix("PSEUDOCONG")
	v.SetEnvKeyReplacer(strings.NewReplacer("-", "_"))
	v.AutomaticEnv()
	var bindErr error
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if err := v.BindPFlag(f.Name, f); err != nil && bindErr == nil {
			bindErr = err
		}
	})
	if bindErr != nil {
		return nil, bindErr
	}
	if path, _ := cmd.Flags().GetString("config"); path != "" {
		v.SetConfigFile(path)
		if err := v.ReadInConfig(); err != nil {
			return nil, usageErrorf("reading config %s: %w", path, err)
		}
	}
	return v, nil
}

// addCommonFlags adds the flags every long-running command shares.
func addCommonFlags(cmd *cobra.Command) {
	cmd.Flags().String("config", "", "YAML config file; keys are the flag names (env PSEUDOCONG_<FLAG> also works)")
	cmd.Flags().String("log-level", "info", "log level: debug, info, warn, error")
}

// setupCommand gives a command its configuration and its logger: the first
// lines of every RunE.
func setupCommand(cmd *cobra.Command) (*viper.Viper, *slog.Logger, error) {
	v, err := newViper(cmd)
	if err != nil {
		return nil, nil, err
	}
	log, err := newLogger(v)
	if err != nil {
		return nil, nil, err
	}
	return v, log, nil
}

func newLogger(v *viper.Viper) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(v.GetString("log-level"))); err != nil {
		return nil, usageErrorf("bad --log-level %q: %w", v.GetString("log-level"), err)
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})), nil
}

func mustNotBeEmpty(v *viper.Viper, key string) error {
	if v.GetString(key) == "" {
		return usageErrorf("--%s is required", key)
	}
	return nil
}
