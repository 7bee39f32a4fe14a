//go:build !stress

package stresstest

const on = false
