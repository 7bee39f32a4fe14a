package access

// Stats are a Guard's counters, totals since NewGuard.
type Stats struct {
	// Refusals counts refused calls by reason (every reason is present).
	Refusals map[Reason]uint64
	// Clients are the clients of the policy in force, in its order.
	Clients []ClientStats
	// RequiresToken says a policy is in force.
	RequiresToken bool
	// PolicyLoads counts the policies put in force (the first one too);
	// PolicyLoadErrors the reloads that failed, leaving the old one.
	PolicyLoads, PolicyLoadErrors uint64
	// Addresses is how many remote addresses the per-address quota
	// holds a bucket for.
	Addresses int
}

// ClientStats are one client's counters, kept across reloads.
type ClientStats struct {
	Name string
	// Ids counts the IDs (Vesta and segment) issued to the client.
	Ids uint64
	// Denied counts calls refused for a missing scope, Limited calls
	// refused over the quota.
	Denied, Limited uint64
}

// Stats returns the current counters.
func (g *Guard) Stats() Stats {
	st := Stats{Refusals: make(map[Reason]uint64, len(reasons)),
		PolicyLoads: g.policyLoads.Load(), PolicyLoadErrors: g.policyLoadErrors.Load()}
	for i, r := range reasons {
		st.Refusals[r] = g.refusals[i].Load()
	}
	if ps := g.policy.Load(); ps != nil {
		st.RequiresToken = true
		for _, c := range ps.clients {
			st.Clients = append(st.Clients, ClientStats{Name: c.name, Ids: c.ctr.ids.Load(),
				Denied: c.ctr.denied.Load(), Limited: c.ctr.limited.Load()})
		}
	}
	if g.addrs != nil {
		st.Addresses = g.addrs.size()
	}
	return st
}

// Reasons lists every refusal reason, in a fixed order.
func Reasons() []Reason { return append([]Reason(nil), reasons[:]...) }
