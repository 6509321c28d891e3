package pub

// KruiseDaemonConfigNamespace holds what kruise-daemons may read besides their node's objects:
// the copies of ImagePullJobs' pull secrets (as OpenKruise names it).
const KruiseDaemonConfigNamespace = "kruise-daemon-config"
