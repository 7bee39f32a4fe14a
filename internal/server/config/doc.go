// Package config is the one configuration loader of every vesta-go main:
// the same keys, VESTA_* environment variables and flags everywhere, read
// with spf13/viper from a YAML, TOML, JSON or Java-style .properties file.
//
// The keys come in groups (Group); a program registers the groups it uses
// (Register), so its --help lists only their keys and it reads only them.
// A file or environment shared with other programs may hold keys of other
// groups: they are ignored. Each key's default is written from the
// constant the loader and the libraries apply (Key.Default), so --help,
// docs/configuration.md (a test checks it) and the behaviour agree.
//
// Precedence, highest first: a flag given on the command line, an
// environment variable, the key in the file, Vesta's own property name in
// the file (vesta.machine, vesta.ips, ...), the default. Every value is
// parsed strictly, whichever layer gave it; a bad one is a *ValueError
// naming the key, the value, where it was set (Source: the flag, the
// variable, the file and line, or the default) and what the key allows.
// A key in the file, or a VESTA_* environment variable, that is no key is
// an *UnknownKeyError naming the nearest real one: a typo must not
// silently leave a default in force.
//
// The loader checks each value against what its key allows; it reads the
// lease keys into plain values (Lease, EtcdLease, PostgresLease) and the
// segment keys into Segment, and links no lease library, segment store or
// database driver (what it shares with segment mode's libraries — store
// kinds, tag syntax and defaults — is service/segment/segspec). The
// program (internal/server/app, internal/server/segconfig) turns them into the
// libraries' options, has the library validate them before anything
// starts, and names the key of a wrong one as the loader would
// (Config.KeyError).
//
// A program registers the groups, parses its command line with
// Loader.Parse, prints its --help with Loader.WriteHelp (each flag typed,
// with its default, variable and file key) and loads with Loader.Load.
package config
