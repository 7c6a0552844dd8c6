package airports

import (
	"bytes"

	"github.com/mcp-fleet/mcp-fleet/shared/textcut"
)

// Ranks of a search match, best first (see Search).
const (
	rankCode       = iota // the ICAO or IATA code is the query
	rankPrefix            // name or city begins with the query
	rankWordPrefix        // a word of name or city, or a code, begins with the query
	rankAllWords          // every word of the query begins a word of name, city or a code
	rankSubstring         // name or city contains the query
	nRanks
)

func (t *table) search(query string, limit int) []Airport {
	x := t.get()
	if limit < 1 {
		limit = DefaultLimit
	}
	limit = min(limit, MaxLimit)
	query = textcut.Prefix(query, MaxQueryLen)
	q := fold(query)
	if q == "" {
		return nil
	}

	// Each rank keeps its first limit matches in search order. The scan files an airport under one
	// rank only, so the one airport two ranks can share is the exact code match, which is counted
	// once already: a rank cut at limit still fills the answer.
	var hits [nRanks][]int // positions in x.order
	exact := -1
	if i, found := x.find(query); found {
		exact = int(x.posOf[i])
		hits[rankCode] = []int{exact}
	}
	x.scanKeys(q, limit, hits[rankPrefix:])

	out := make([]Airport, 0, limit)
	for r := range hits {
		for _, j := range hits[r] {
			if len(out) == limit {
				return out
			}
			if r == rankCode || j != exact {
				out = append(out, x.airport(int(x.order[j])))
			}
		}
	}
	return out
}

// scanKeys finds the airports whose key contains the first word of q, in search order, and files
// each under its best rank among rankPrefix…rankSubstring (hits[0] is rankPrefix). It stops once
// rankPrefix holds keep airports: nothing later can rank above them.
func (x *index) scanKeys(query string, keep int, hits [][]int) {
	q := []byte(query)
	words := bytes.Split(q, []byte{' '})
	first := words[0]
	need := charMask(first)
	for j, i := range x.order {
		if x.masks[i]&need != need {
			continue
		}
		key := x.keys[x.keyStart[i]:x.keyStart[i+1]]
		if !bytes.Contains(key, first) {
			continue
		}
		if r := matchKey(key, q, words); r >= 0 {
			h := &hits[r-rankPrefix]
			if len(*h) < keep {
				*h = append(*h, j)
			}
			if r == rankPrefix && len(*h) == keep {
				return
			}
		}
	}
}

// matchKey ranks one airport's key against the folded query q and its words; -1 if it does not
// match. The key is "name\x1fcity\x1ficao iata", folded: codes count as words, so "eg" finds the
// EG… airports and "new york jfk" finds JFK, but a code never matches a mere substring.
func matchKey(key, q []byte, words [][]byte) int {
	text := key[:bytes.LastIndexByte(key, '\x1f')]
	name, city, _ := bytes.Cut(text, []byte{'\x1f'})
	switch {
	case bytes.HasPrefix(name, q) || bytes.HasPrefix(city, q):
		return rankPrefix
	case wordPrefix(key, q):
		return rankWordPrefix
	}
	if len(words) > 1 {
		all := true
		for _, w := range words {
			if !wordPrefix(key, w) {
				all = false
				break
			}
		}
		if all {
			return rankAllWords
		}
	}
	if bytes.Contains(text, q) {
		return rankSubstring
	}
	return -1
}

// wordPrefix reports whether a word of key begins with w.
func wordPrefix(key, w []byte) bool {
	for off := 0; ; {
		k := bytes.Index(key[off:], w)
		if k < 0 {
			return false
		}
		at := off + k
		if at == 0 || key[at-1] == ' ' || key[at-1] == '\x1f' {
			return true
		}
		off = at + 1
	}
}
