package config

// Group is a set of keys that one part of a program reads. A program
// registers the groups it uses (Register), so its --help lists only their
// keys and its loader reads only them. A file or environment shared by
// several programs may hold keys of groups a program did not register: it
// ignores them (a file's unknown keys are still an error).
type Group string

// The groups, in documentation order.
const (
	// GroupFile is the config file itself; every program registers it.
	GroupFile Group = "file"
	// GroupService is the ID service (service.Settings) but its data dir.
	GroupService Group = "service"
	// GroupDataDir is the data dir: the service's high-water mark and
	// segment mode's SQLite file.
	GroupDataDir Group = "dataDir"
	// GroupServer is what a server adds: where it listens, its batch cap.
	GroupServer Group = "server"
	// GroupLog is the program's logger.
	GroupLog Group = "log"
	// GroupEtcd is the machine-id leases of providers etcd and postgres
	// (Config.Lease, Etcd and Postgres).
	GroupEtcd Group = "etcd"
	// GroupSegment selects segment mode's store (Config.Segment).
	GroupSegment Group = "segment"
	// GroupSegmentTags is the segment tags a server creates at start.
	GroupSegmentTags Group = "segmentTags"
)

// ServerGroups are the groups of server-rpc (and its plugin mode): every
// key.
func ServerGroups() []Group {
	return append(RESTGroups(), GroupAdmin, GroupRPC)
}

// RESTGroups are server-rest's: every key but the admin listener's, since
// its own port serves /metrics, /healthz and /readyz, and the RPC
// server's limits.
func RESTGroups() []Group {
	return []Group{GroupFile, GroupService, GroupDataDir, GroupServer, GroupLog, GroupEtcd, GroupSegment, GroupSegmentTags,
		GroupSecurity}
}
