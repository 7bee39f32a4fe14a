// Package machineid is where a service's machine id comes from: a fixed
// id (Fixed), the host's name (Hostname) or address (IPList), all
// Providers, or a Lease that hands an id out for a bounded time and can
// lose it (etcdlease and pglease implement it), with what a lease and the
// service tell each other (Holder, MarkSpan, LeaseStats) and share with
// their fleet (Range, Layout, and the errors a lease returns out of
// service.New). An embedder sets one of them in service.Settings.
package machineid
