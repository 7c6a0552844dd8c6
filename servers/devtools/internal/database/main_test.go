package database

import (
	"testing"

	"github.com/mcp-fleet/mcp-fleet/shared/pgtest"
)

// TestMain shares one throwaway PostgreSQL cluster among the tests.
func TestMain(m *testing.M) { pgtest.Main(m) }
