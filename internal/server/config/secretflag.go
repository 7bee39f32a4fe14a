package config

import (
	"net/url"
	"regexp"
	"strings"
)

// A password given as a flag is refused. A process's command line is
// readable by every user of its host (ps, /proc/PID/cmdline); its
// environment is its owner's only, and a config file has the permissions
// its owner gives it. So etcdPassword never comes from a flag, and a DSN
// (machineDSN, segmentDSN) comes from one only when it holds no password
// (a DSN that authenticates by certificate, or by PGPASSWORD or a .pgpass
// file, is no secret).

// secret is str for a key that is or may hold a password (hasPassword
// says whether a value does): such a value set by a flag fails the key.
func (r *reader) secret(key string, hasPassword func(string) bool) string {
	value := r.str(key, "")
	src := r.source(key)
	if src.Layer != LayerFlag || value == "" || !hasPassword(value) {
		return value
	}
	k, _ := keyNamed(key)
	where := "the environment variable " + k.Env + " or the config file's key " + key
	if key != KeyEtcdPassword {
		where += " (or a DSN without the password, with PGPASSWORD or a .pgpass file)"
	}
	r.failFrom(key, value, src, "no password on the command line, which every user of this host can read (ps): give it in "+where)
	return value
}

// always is hasPassword for a key that is a password.
func always(string) bool { return true }

// passwordKV finds a password key in a key=value DSN: password, or
// sslpassword (the client key's passphrase).
var passwordKV = regexp.MustCompile(`(?:^|\s)(?:ssl)?password\s*=`)

// dsnHasPassword says whether a PostgreSQL DSN, URL or key=value, carries
// a password: in the URL's user info or query, or as a password key.
func dsnHasPassword(dsn string) bool {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return true // unreadable: assume the worst; the DSN's own check names the fault
		}
		_, set := u.User.Password()
		return set || u.Query().Has("password") || u.Query().Has("sslpassword")
	}
	return passwordKV.MatchString(dsn)
}
