// Package access keeps Kruise from lending its power: at admission it checks, with a
// SubjectAccessReview, that the author of a Kruise object may themselves do what the object makes
// kruise-manager or kruise-daemon do to pods and claims that already exist (exec into them, add
// ephemeral containers, rewrite them, restart their containers, delete their claims), and refuses
// the object with 403 naming the permission the author lacks.
//
// The actor is the requester of the admission request the API server sends: on CREATE the author,
// on an UPDATE that changes what is checked the updater. Kinds that only create new pods from the
// user's own template (CloneSet, BroadcastJob, …) are not checked, as Deployment is not.
package access
