package config

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
)

// A VESTA_* variable that is no key is refused, as an unknown file key
// is, naming the variable and the key nearest to it: a typo never leaves
// the default in force.
func TestUnknownEnvIsRefused(t *testing.T) {
	t.Setenv("VESTA_DATA_DRI", t.TempDir())
	_, err := load(t)
	require.ErrorIs(t, err, ErrUnknownKey)
	require.ErrorIs(t, err, intf.ErrInvalidArgument)
	var ue *UnknownKeyError
	require.True(t, errors.As(err, &ue))
	assert.Equal(t, UnknownKeyError{Name: "VESTA_DATA_DRI", Source: Source{Layer: LayerEnv, Name: "VESTA_DATA_DRI"},
		Closest: "VESTA_DATA_DIR", Near: true}, *ue)
	assert.Equal(t, "environment variable VESTA_DATA_DRI is no vesta-go variable: did you mean VESTA_DATA_DIR? "+
		"Unset it; every VESTA_* variable is in docs/configuration.md", err.Error())
}

func TestUnknownEnvNames(t *testing.T) {
	for name, closest := range map[string]string{
		"VESTA_MACHIN":             "VESTA_MACHINE is near",
		"VESTA_ETCD_ENDPOINT":      "VESTA_ETCD_ENDPOINTS is near",
		"VESTA_MAX_CLOCK_BACKWARD": "VESTA_MAX_CLOCK_BACKWARD_WAIT is near",
		"VESTA_LISTNE":             "VESTA_LISTEN is near",
		"vesta_machine":            "VESTA_MACHINE is near", // any case of the prefix
		"Vesta_Type":               "VESTA_TYPE is near",
		"VESTA_":                   "",
		"VESTA_HOME":               "",
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv(name, "1")
			_, err := load(t)
			var ue *UnknownKeyError
			require.True(t, errors.As(err, &ue), "%v", err)
			assert.Equal(t, name, ue.Name)
			if closest != "" {
				assert.Equal(t, closest, ue.Closest+" is near")
				assert.True(t, ue.Near)
				assert.Contains(t, err.Error(), "did you mean "+ue.Closest+"?")
			} else {
				assert.False(t, ue.Near, "closest %s", ue.Closest)
				assert.Contains(t, err.Error(), "no key is close to it (the closest is "+ue.Closest+")")
			}
		})
	}
}

// Every unknown variable is named, in order; the variables of every
// group's keys, and VESTA_GO_PLUGIN, are accepted by every program.
func TestEnvOfEveryGroupIsKnown(t *testing.T) {
	for _, k := range Keys() {
		assert.NoError(t, checkEnv([]string{k.Env + "=x"}), k.Env)
	}
	assert.NoError(t, checkEnv([]string{"VESTA_GO_PLUGIN=cookie", "PATH=/bin", "VESTAX=1", "MY_VESTA_MACHINE=1"}))
	err := checkEnv([]string{"VESTA_ZZ=1", "VESTA_MACHIEN=1", "VESTA_MACHINE=1"})
	var names []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		names = append(names, e.(*UnknownKeyError).Name)
	}
	assert.Equal(t, []string{"VESTA_MACHIEN", "VESTA_ZZ"}, names)

	t.Setenv("VESTA_MACHINE", "not-a-number") // another program's key: ignored
	t.Setenv("VESTA_GO_PLUGIN", "")
	_, err = loadGroups(t, segmentOnly, "--data-dir", t.TempDir())
	require.NoError(t, err)
}

func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		d    int
	}{
		{"", "", 0}, {"a", "", 1}, {"", "ab", 2}, {"machine", "machine", 0}, {"machnie", "machine", 1},
		{"machin", "machine", 1}, {"mashine", "machine", 1}, {"DATA_DRI", "DATA_DIR", 1}, {"abc", "xyz", 3},
		{"ca", "abc", 3},
	} {
		assert.Equal(t, c.d, editDistance(c.a, c.b), "%q %q", c.a, c.b)
		assert.Equal(t, c.d, editDistance(c.b, c.a), "%q %q", c.b, c.a)
	}
}
