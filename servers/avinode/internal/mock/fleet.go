package mock

import "github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/market"

// aircraftType is a model of business jet with what pricing and routing
// need: seats, range, cruise speed and a typical charter rate.
type aircraftType struct {
	Name      string
	Category  string
	Capacity  int
	RangeNM   float64
	SpeedKts  float64
	HourlyUSD float64
}

// The types of the simulated fleet (typical figures, not a manufacturer's).
var (
	phenom300  = aircraftType{"Phenom 300", market.Light, 7, 1970, 450, 3400}
	citationXL = aircraftType{"Citation XLS+", market.Midsize, 8, 2100, 440, 4300}
	citationX  = aircraftType{"Citation X", market.Midsize, 8, 3242, 525, 5200}
	cl350      = aircraftType{"Challenger 350", market.Midsize, 9, 3200, 470, 5900}
	falcon7X   = aircraftType{"Falcon 7X", market.Heavy, 14, 5950, 488, 9200}
	g550       = aircraftType{"Gulfstream G550", market.Heavy, 14, 6750, 488, 9800}
	lineage    = aircraftType{"Lineage 1000E", market.Heavy, 19, 4600, 470, 15000}
	bbj        = aircraftType{"Boeing Business Jet", market.Heavy, 19, 6200, 470, 17500}
	global7500 = aircraftType{"Global 7500", market.UltraLongRange, 17, 7700, 516, 14500}
)

// aircraft is one tail of an operator's fleet.
type aircraft struct {
	aircraftType
	Tail string
	Year int
}

// operator is a simulated seller: an aircraft operator with a home base.
type operator struct {
	ID       string
	Name     string
	Country  string // ISO 3166-1 alpha-2
	Base     string // ICAO
	Currency string
	Rating   float64
	Safety   string
	Fleet    []aircraft
}

// operators is the simulated marketplace's sellers.
var operators = []operator{
	{"acompany-10001", "Executive Jet Management", "US", "KTEB", "USD", 4.8, "ARGUS Gold",
		[]aircraft{{citationX, "N601EJ", 2016}, {g550, "N550EJ", 2014}, {phenom300, "N300EJ", 2019}}},
	{"acompany-10002", "Atlantic Coast Charter", "US", "KOPF", "USD", 4.6, "ARGUS Gold",
		[]aircraft{{cl350, "N350AC", 2018}, {phenom300, "N307AC", 2020}, {falcon7X, "N7XAC", 2015}}},
	{"acompany-10003", "Pacific Coast Jets", "US", "KVNY", "USD", 4.7, "Wyvern Wingman",
		[]aircraft{{citationX, "N750PC", 2013}, {global7500, "N75GX", 2021}, {cl350, "N351PC", 2019}}},
	{"acompany-10004", "Lakeshore Executive Air", "US", "KPWK", "USD", 4.5, "ARGUS Silver",
		[]aircraft{{citationXL, "N560LE", 2017}, {phenom300, "N301LE", 2018}}},
	{"acompany-10005", "Lone Star Air Charter", "US", "KDAL", "USD", 4.6, "ARGUS Gold",
		[]aircraft{{cl350, "N352LS", 2020}, {g550, "N551LS", 2012}, {lineage, "N190LS", 2014}}},
	{"acompany-10006", "Maple Leaf Jets", "CA", "CYYZ", "USD", 4.4, "IS-BAO Stage 2",
		[]aircraft{{cl350, "C-GMLJ", 2017}, {phenom300, "C-FMLP", 2019}}},
	{"acompany-10007", "Thames Executive Air", "GB", "EGGW", "GBP", 4.7, "IS-BAO Stage 3",
		[]aircraft{{phenom300, "G-TXEC", 2019}, {citationX, "G-CXTE", 2012}, {g550, "G-GFIV", 2016}}},
	{"acompany-10008", "Riviera Jet Services", "FR", "LFMN", "EUR", 4.5, "Wyvern Wingman",
		[]aircraft{{phenom300, "F-HRJS", 2021}, {cl350, "F-HRCL", 2018}}},
	{"acompany-10009", "Alpine Private Aviation", "CH", "LSGG", "EUR", 4.8, "ARGUS Platinum",
		[]aircraft{{global7500, "HB-JGX", 2022}, {falcon7X, "HB-JFX", 2016}, {citationXL, "HB-VXL", 2015}}},
	{"acompany-10010", "Gulf Executive Aviation", "AE", "OMDW", "USD", 4.6, "IS-BAO Stage 3",
		[]aircraft{{g550, "A6-GEA", 2015}, {global7500, "A6-GXA", 2021}, {bbj, "A6-BBJ", 2010}}},
	{"acompany-10011", "Harbour Jet Asia", "HK", "VHHH", "USD", 4.5, "IS-BAO Stage 2",
		[]aircraft{{g550, "B-LHJ", 2017}, {cl350, "B-LHC", 2020}}},
	{"acompany-10012", "Southern Cross Charter", "AU", "YSSY", "USD", 4.6, "ARGUS Gold",
		[]aircraft{{cl350, "VH-SCC", 2016}, {global7500, "VH-SCG", 2020}}},
}

// usdRate converts US dollars to an operator's currency (fixed rates: the
// simulation needs plausible, stable figures, not today's market).
var usdRate = map[string]float64{"USD": 1, "EUR": 0.92, "GBP": 0.79}

// cabotageArea groups countries within which an operator of any member may
// fly domestic legs (the European common aviation area, Switzerland
// included); elsewhere a domestic leg belongs to that country's operators.
var cabotageArea = map[string]string{
	"AT": "EU", "BE": "EU", "BG": "EU", "CH": "EU", "CY": "EU", "CZ": "EU", "DE": "EU", "DK": "EU", "EE": "EU",
	"ES": "EU", "FI": "EU", "FR": "EU", "GR": "EU", "HR": "EU", "HU": "EU", "IE": "EU", "IS": "EU", "IT": "EU",
	"LI": "EU", "LT": "EU", "LU": "EU", "LV": "EU", "MT": "EU", "NL": "EU", "NO": "EU", "PL": "EU", "PT": "EU",
	"RO": "EU", "SE": "EU", "SI": "EU", "SK": "EU",
	// US territories are US domestic.
	"PR": "US", "VI": "US", "GU": "US",
}

func area(country string) string {
	if a, ok := cabotageArea[country]; ok {
		return a
	}
	return country
}

// hubs are airports with heavy business-jet traffic, where the simulated
// empty legs start and end.
var hubs = []string{
	"KTEB", "KHPN", "KBED", "KBOS", "KIAD", "KPBI", "KOPF", "KFLL", "KMIA", "KATL", "KPWK", "KMDW", "KDAL", "KHOU",
	"KAPA", "KASE", "KEGE", "KSDL", "KLAS", "KVNY", "KSNA", "KSJC", "KSFO", "KSEA", "TNCM", "MYNN", "MMSD", "CYYZ",
	"EGLF", "EGGW", "EGKB", "LFPB", "LFMN", "LSGG", "LSZH", "EDDM", "LIML", "LEBL", "LEMD", "EHAM", "EBBR",
	"OMDW", "OMDB", "VHHH", "WSSS", "RJTT", "YSSY", "FAOR", "SBGR", "LTFM",
}
