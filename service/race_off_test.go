//go:build !race

package service_test

// raceEnabled says whether the tests run under the race detector, which
// makes GenId some ten times slower: the real-clock tests that must issue
// a whole unit's budget in time run alone then.
const raceEnabled = false
