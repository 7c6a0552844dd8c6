package mailmsg_test

import (
	"crypto/rand"
	"net/mail"
	"testing"

	"github.com/mcp-fleet/mcp-fleet/servers/gmail/internal/mailmsg"
	"github.com/mcp-fleet/mcp-fleet/servers/gmail/internal/templates"
)

func proposalData() map[string]any {
	return map[string]any{
		"client_name": "Ms. Priya Raman", "departure_airport": "KTEB (Teterboro)", "arrival_airport": "KVNY (Van Nuys)",
		"departure_date": "2025-11-15", "passengers": 6, "contact_phone": "+1-555-0100", "agent_name": "Alex Morgan", "valid_until": "2025-11-10",
		"aircraft": []any{
			map[string]any{"type": "Challenger 350", "operator_name": "Summit Air", "price_usd": 45000, "capacity": 9, "features": "Wi-Fi, full galley, 2019"},
			map[string]any{"type": "Citation XLS+", "operator_name": "Blue Sky Jets", "price_usd": 38500, "capacity": 8, "features": "Wi-Fi"},
			map[string]any{"type": "Gulfstream G450", "operator_name": "Atlas Private", "price_usd": 61200.5, "capacity": 14, "features": "Sleeps 6"},
		}}
}

// BenchmarkProposal renders flight_proposal and builds the message with a
// 1 MB PDF attachment, as send_template_email does before sending.
func BenchmarkProposal(b *testing.B) {
	set, err := templates.Load("")
	if err != nil {
		b.Fatal(err)
	}
	tpl, _ := set.Get("flight_proposal")
	pdf := make([]byte, 1<<20)
	_, _ = rand.Read(pdf)
	from := &mail.Address{Name: "Jetvision Charter Desk", Address: "desk@jetvision.example"}
	to := []*mail.Address{{Name: "Priya Raman", Address: "priya.raman@example.com"}}
	data := proposalData()
	b.ReportAllocs()
	b.SetBytes(int64(len(pdf)))
	for b.Loop() {
		r, err := tpl.Render(data)
		if err != nil {
			b.Fatal(err)
		}
		raw, err := mailmsg.Build(&mailmsg.Message{From: from, To: to, Subject: r.Subject, HTML: r.HTML, Text: r.Text,
			Attachments: []mailmsg.Attachment{{Filename: "proposal.pdf", ContentType: "application/pdf", Data: pdf}}})
		if err != nil || len(raw) < 1<<20 {
			b.Fatal(err)
		}
	}
}

// BenchmarkRender is the template alone.
func BenchmarkRender(b *testing.B) {
	set, _ := templates.Load("")
	tpl, _ := set.Get("flight_proposal")
	data := proposalData()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tpl.Render(data); err != nil {
			b.Fatal(err)
		}
	}
}
