// Package config is the one configuration loader of every vesta-go main:
// the same keys, VESTA_* environment variables and flags everywhere, read
// with spf13/viper from a YAML, TOML, JSON or Java-style .properties file.
//
// Precedence, highest first: a flag given on the command line, an
// environment variable, the key in the file, Vesta's own property name in
// the file (vesta.machine, vesta.ips, ...), the default. Every value is
// parsed strictly; a bad one is an error naming the key and what it allows,
// and an unknown key in the file is an error too (a typo must not silently
// leave a default in force).
package config
