// Package service is the embedded vesta-go ID generator: the one core every
// mode (embedded, RPC server, plugin, REST) wraps.
//
// New validates a Settings value, checks the clock against the time
// high-water mark kept in a data directory, and returns a *Service that
// implements intf.IdService. GenId fills the fixed fields (machine,
// genMethod, type, version) from the settings, asks a populator for the time
// unit and sequence number, and packs them into Vesta's 64-bit layout.
//
// Uniqueness rests on four things, each tested under -race:
//   - the populators hand out every (time unit, sequence) pair at most once,
//     and wait for the next unit when a unit's sequence is used up;
//   - the clock never runs backwards while the process lives (it is the wall
//     time at start plus Go's monotonic elapsed time);
//   - across restarts, no ID is issued above a time mark that was fsynced to
//     the data directory first, and a new process starts above that mark;
//   - two processes cannot share a data directory (it is locked).
//
// Distinct machines need distinct machine ids; see machineid.Provider.
package service
