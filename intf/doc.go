// Package intf is the public contract of vesta-go: the IdService interface
// that every mode implements (the embedded service, the RPC client, the
// plugin host), Id — an ID, whose JSON is a string so that JavaScript
// reads it exactly — and IdFields, an ID split into its fields, the two ID
// types with their bit layouts, the pure codec (Decode, Encode, Id.Fields,
// Id.Time, Layout.Instant), and the errors callers can test with
// errors.Is and errors.As.
//
// It depends on the standard library only, so a program that talks to a
// remote vesta-go server needs nothing else to understand its answers.
//
// A vesta-go ID is a 64-bit integer packed from the least significant bit:
//
//	max-peak (type 0):        machine 0-9 | seq 10-29 | time 30-59 (seconds)      | genMethod 60-61 | type 62 | version 63
//	min-granularity (type 1): machine 0-9 | seq 10-19 | time 20-59 (milliseconds) | genMethod 60-61 | type 62 | version 63
//
// Time counts from DefaultEpochMillis (2015-01-01T00:00:00+08:00). IDs are
// bit-for-bit equal to those of the Java Vesta; version 1 IDs are negative as
// int64.
package intf
