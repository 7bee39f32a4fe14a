//go:build stress

package stresstest

const on = true
