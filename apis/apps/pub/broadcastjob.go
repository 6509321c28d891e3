package pub

// Labels OpenKruise puts on every pod of a BroadcastJob; a template may not set them.
const (
	// BroadcastJobNameLabel holds the job's name.
	BroadcastJobNameLabel = "broadcastjob-name"
	// BroadcastJobControllerUIDLabel holds the job's UID.
	BroadcastJobControllerUIDLabel = "broadcastjob-controller-uid"
)
