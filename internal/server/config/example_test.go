package config_test

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"github.com/vesta-go/vesta/internal/server/config"
	"github.com/vesta-go/vesta/intf"
)

// A program registers the groups of keys it reads, parses its command
// line and loads. A refused value says where it was set.
func Example() {
	fs := pflag.NewFlagSet("prog", pflag.ContinueOnError)
	loader := config.Register(fs, config.Defaults{}, config.GroupService)
	if err := loader.Parse([]string{"--machine", "2000"}); err != nil {
		fmt.Println(err)
		return
	}
	_, err := loader.Load()
	fmt.Println(err)
	var ve *config.ValueError
	if errors.As(err, &ve) {
		fmt.Println(ve.Key, ve.Value, ve.Source.Layer, ve.Source.Name, errors.Is(err, intf.ErrInvalidArgument))
	}
	// Output:
	// invalid argument: config key machine: "2000" from flag --machine: want an integer 0..1023
	// machine 2000 flag --machine true
}

// --help lists the registered keys by group, each with its type, default,
// variable and file key, then the program's own flags and how settings
// are given.
func ExampleLoader_WriteHelp() {
	fs := pflag.NewFlagSet("prog", pflag.ContinueOnError)
	loader := config.Register(fs, config.Defaults{}, config.GroupLog)
	fs.Bool("version", false, "print the version and exit")
	_ = loader.WriteHelp(os.Stdout, "prog", config.Help{Summary: "does one thing."})
	// Output:
	// prog: does one thing.
	//
	// Usage:
	//   prog [flags]
	//
	// Config file:
	//   --config string      config file (.yaml, .yml, .toml, .json or .properties) [VESTA_CONFIG]
	//
	// Logging:
	//   --log-level string   debug, info, warn or error (default info) [VESTA_LOG_LEVEL, key logLevel]
	//   --log-format string  text or json (default text) [VESTA_LOG_FORMAT, key logFormat]
	//
	// Other flags:
	//   --version            print the version and exit
	//
	// A flag with brackets is a setting: they name its environment variable and its key in the config file
	// (--config: YAML, TOML, JSON or Vesta's .properties). Precedence, highest first: the flag, the
	// environment variable, the file's key, the default. A VESTA_* variable or a file key that is no
	// setting is refused, and so is a bad value, with an error that says where it was set.
	// Documentation: docs/configuration.md (every setting) in the source, github.com/vesta-go/vesta.
}
