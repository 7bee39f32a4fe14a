// Command vesta-segment manages the tags of segment mode in the store the
// vesta-go servers use. It reads the servers' configuration (file, VESTA_*
// environment, flags), but only the keys it uses: --data-dir,
// --segment-store and --segment-dsn select the store. noDataDir is read
// from the file and the environment only (a shared configuration that
// turns segment mode off makes the command say so); it takes no flag,
// which could only stop it. A config file shared with the servers may
// hold their other keys; they are ignored.
//
//	vesta-segment [flags] create-tag TAG [--step N] [--initial N] [--description TEXT]
//	vesta-segment [flags] list
//
// create-tag adds a tag whose first ID is --initial (default 1) and whose
// step is --step (default 1000; Leaf's advice: about 600 times the peak IDs
// per second). A running server picks a new tag up on the first request
// for it (an unknown tag rereads the tag list, at most once a second), and
// every other tag change within a minute (the periodic refresh). It is
// idempotent, for a deployment step that runs it every time: when the tag
// exists with the same step and description and a max_id at least
// --initial (a tag in use has a larger one), it says so and exits 0; when
// the row differs it exits 1 naming each difference, and changes nothing.
// Without a segment key it creates <dataDir>/segments.db if needed.
// list prints every tag with its max_id (the next ID no server holds yet)
// and step.
package main
