package mailmsg

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// maxReferences bounds the References chain: RFC 5322 lets a long chain
// be trimmed, keeping the first id and the most recent ones.
const maxReferences = 20

// NewMessageID returns a fresh "<random@domain>".
func NewMessageID(domain string) string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	if domain == "" {
		domain = "mcp-fleet.local"
	}
	return "<" + hex.EncodeToString(b) + "." + fmt.Sprint(time.Now().UnixMilli()) + "@" + domain + ">"
}

var msgIDRE = regexp.MustCompile(`<[^<>\s@]+@[^<>\s@]+>`)

// MessageIDs returns the message ids ("<…>") in a header value such as
// References or In-Reply-To, in order.
func MessageIDs(v string) []string { return msgIDRE.FindAllString(v, -1) }

// ValidMessageID reports whether id is one "<local@domain>".
func ValidMessageID(id string) bool { return msgIDRE.MatchString(id) && msgIDRE.FindString(id) == id }

// ReplyThreading returns the In-Reply-To and References of a reply to a
// message with the given Message-ID, References and In-Reply-To: the
// parent's References (or, without them, its In-Reply-To) followed by the
// parent's own id, trimmed to the first and the latest ids when long.
func ReplyThreading(parentID, parentRefs, parentInReplyTo string) (inReplyTo string, refs []string) {
	chain := MessageIDs(parentRefs)
	if len(chain) == 0 {
		chain = MessageIDs(parentInReplyTo)
		if len(chain) > 1 {
			chain = chain[:1]
		}
	}
	seen := map[string]bool{}
	for _, id := range append(chain, parentID) {
		if id != "" && !seen[id] {
			seen[id] = true
			refs = append(refs, id)
		}
	}
	if len(refs) > maxReferences {
		refs = append(refs[:1], refs[len(refs)-(maxReferences-1):]...)
	}
	return parentID, refs
}

var rePrefix = regexp.MustCompile(`(?i)^\s*((re|aw|sv|antw)\s*(\[\d+\])?\s*[:：]\s*)+`)

// BaseSubject strips reply prefixes ("Re:", "RE: Re:", "AW:"…) and
// surrounding space.
func BaseSubject(s string) string {
	return strings.TrimSpace(rePrefix.ReplaceAllString(s, ""))
}

// ReplySubject is the subject of a reply: the parent's, with one "Re: ".
func ReplySubject(parent string) string {
	base := BaseSubject(parent)
	if base == "" {
		return "Re:"
	}
	return "Re: " + base
}
