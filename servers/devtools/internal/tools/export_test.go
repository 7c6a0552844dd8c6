package tools

// The results as the tests decode them: the same types the tools encode.
type (
	FileInfoResult   = fileInfoResult
	SystemInfoResult = systemInfoResult
	HealthResult     = healthResult
)
