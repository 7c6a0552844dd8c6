package acl

import (
	"slices"
	"sort"
)

// One policy file covers the fleet's five servers, so a server that meets a
// tool name it does not serve cannot tell, from its own tools alone, a tool
// of another server from a misspelt name that would silently grant nothing.
// fleetTools (fleet_tools.go, generated from the built servers and checked
// against them by tools/fleetcheck) lets it tell: a name no server of the
// fleet has is a mistake.

// FleetTools returns the tools of every server of the fleet, by server.
func FleetTools() map[string][]string { return cloneByServer(fleetTools) }

// FleetTool reports whether some server of the fleet has a tool named name.
func FleetTool(name string) bool { return anyServerHas(fleetTools, name) }

// FleetToolNames lists every tool of the fleet, sorted.
func FleetToolNames() []string { return allNames(fleetTools) }

// UnknownTool is a tool a policy grants that the fleet does not have.
type UnknownTool struct {
	Agent, Tool string
	// Grant is the grant file that names it; empty for the policy file.
	Grant string
}

// UnknownTools lists the tools the policy grants that neither the fleet
// nor known (the calling server's own tools, which a server outside the
// fleet's list may have) has, by agent and tool, sorted.
func (p *Policy) UnknownTools(known func(string) bool) []UnknownTool {
	var out []UnknownTool
	for _, name := range p.Agents() {
		for _, t := range p.Tools(name) {
			if FleetTool(t) || (known != nil && known(t)) {
				continue
			}
			u := UnknownTool{Agent: name, Tool: t}
			for _, g := range p.grants {
				if slices.Contains(g.Tools[name], t) {
					u.Grant = g.Path
				}
			}
			out = append(out, u)
		}
	}
	return out
}

// FleetResources returns the resource and resource template names of every
// server of the fleet, by server.
func FleetResources() map[string][]string { return cloneByServer(fleetResources) }

// FleetResource reports whether some server of the fleet has a resource or
// resource template named name.
func FleetResource(name string) bool { return anyServerHas(fleetResources, name) }

// FleetResourceNames lists every resource name of the fleet, sorted.
func FleetResourceNames() []string { return allNames(fleetResources) }

// UnknownResources lists the resources an agent entry's resources: list
// names that neither the fleet nor known (the calling server's own) has: a
// misspelt name would make the agent read nothing it was meant to.
func (p *Policy) UnknownResources(known func(string) bool) []UnknownTool {
	var out []UnknownTool
	for _, name := range p.Agents() {
		for _, r := range sortedKeys(p.agents[name].resources) {
			if !FleetResource(r) && (known == nil || !known(r)) {
				out = append(out, UnknownTool{Agent: name, Tool: r})
			}
		}
	}
	return out
}

// cloneByServer copies a by-server list (fleetTools, fleetResources), so
// that a caller cannot change the fleet's.
func cloneByServer(byServer map[string][]string) map[string][]string {
	out := make(map[string][]string, len(byServer))
	for s, names := range byServer {
		out[s] = slices.Clone(names)
	}
	return out
}

// anyServerHas reports whether some server's list holds name.
func anyServerHas(byServer map[string][]string, name string) bool {
	for _, names := range byServer {
		if slices.Contains(names, name) {
			return true
		}
	}
	return false
}

// allNames lists the names of every server, sorted, each once.
func allNames(byServer map[string][]string) []string {
	var out []string
	for _, names := range byServer {
		out = append(out, names...)
	}
	sort.Strings(out)
	return slices.Compact(out)
}
