package kit

import "github.com/mcp-fleet/mcp-fleet/shared/kit/internal/engine"

// Resource is a static resource: one URI, its definition and its reader.
// Resources go through the same pipeline as tools: ACL, audit line, metrics
// and a time limit. Tools ties the resource to a tool family: an agent whose
// policy entry lists no resources may read it when it may call any of these
// tools; with no Tools, only agents whose policy lists the resource by name
// can read it (and everyone when no policy is configured).
type Resource = engine.Resource

// ResourceTemplate is a family of resources named by a URI template such as
// "file:///{path}" or "avinode://trips/{id}/quotes". Each {name} matches up
// to the template's next literal text (to the end when there is none,
// slashes included); matched values are percent-decoded. List names
// concrete resources for resources/list; Watch starts watching a URI when
// its first client subscribes (the owner then calls Notifier.Updated).
type ResourceTemplate = engine.ResourceTemplate

// ReadFunc reads a resource. An *mcperr.Error of code NOT_FOUND (or a
// Coded error saying so) answers "resource not found"; other errors are
// reported with their code.
type ReadFunc = engine.ReadFunc

// ReadRequest is one resources/read as a reader sees it.
type ReadRequest = engine.ReadRequest

// Contents is one item of a read result: Text, or Blob for binary content.
type Contents = engine.Contents

// ResourceInfo is one entry of resources/list.
type ResourceInfo = engine.ResourceInfo

// Notifier tells subscribed clients that resources changed. Tools and
// background workers hold it and call Updated(uri) after every change they
// make or observe; ListChanged when the list of resources changed;
// Subscribed lets a worker skip work nobody waits for. A slow client's
// updates coalesce by URI; what cannot wait is dropped and counted in
// mcp_notifications_dropped_total. A Notifier is made before the server
// (Env has one during Setup) and used by exactly one Server.
type Notifier = engine.Notifier

// NewNotifier returns a Notifier with no subscribers.
func NewNotifier() *Notifier { return engine.NewNotifier() }
