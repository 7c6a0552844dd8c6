package tools

import (
	"context"
	"encoding/json"

	"github.com/mcp-fleet/mcp-fleet/shared/kit"
)

// listedResources bounds resources/list: the most recently updated clients.
const listedResources = 50

// ClientTemplate is the resource sheets://clients/{client_id}: a client's
// record as get_client returns it. Subscribers hear of every change this
// server makes to the client's row (the caller wires clientdb's Changed to
// the Notifier with ClientURI).
func ClientTemplate(d Deps) kit.ResourceTemplate {
	return kit.ResourceTemplate{
		URITemplate: "sheets://clients/{client_id}",
		Name:        "client",
		Title:       "Client record",
		Description: "One client's record (as get_client returns it), by client_id; the list shows the 50 updated last. Subscribers are told when this server changes the client's row.",
		MIMEType:    "application/json",
		Tools:       Names,
		Read: func(ctx context.Context, r *kit.ReadRequest) ([]kit.Contents, error) {
			c, err := d.DB.Get(ctx, r.Vars["client_id"], "client_id")
			if err != nil {
				return nil, err
			}
			b, err := json.Marshal(c)
			if err != nil {
				return nil, err
			}
			return []kit.Contents{{URI: r.URI, MIMEType: "application/json", Text: string(b)}}, nil
		},
		List: func(ctx context.Context, agent string) ([]kit.ResourceInfo, error) {
			recent, err := d.DB.Recent(ctx, listedResources)
			if err != nil {
				return nil, err
			}
			out := make([]kit.ResourceInfo, len(recent))
			for i, c := range recent {
				out[i] = kit.ResourceInfo{URI: ClientURI(c.ClientID), Name: c.ClientID, Title: c.Name, MIMEType: "application/json"}
			}
			return out, nil
		},
	}
}
