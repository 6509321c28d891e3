// Package nodeimage keeps one NodeImage per Node: named after the node, carrying the node's
// labels (so that image pull jobs can select nodes through their NodeImages) and owned by the Node,
// so that the garbage collector deletes it with the node. It also drops the tags whose
// pullPolicy.ttlSecondsAfterFinished has passed since the node finished them, and, as OpenKruise,
// fails in the status the tags the node's kruise-daemon left unanswered (Unanswered).
// kruise-daemon on the node pulls what its NodeImage asks for and reports in its status.
package nodeimage
