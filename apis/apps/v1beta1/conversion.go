package v1beta1

// v1beta1 is the storage version of the kinds whose schema changed between v1alpha1 and v1beta1,
// so it is the hub every other version converts through. The conversion code lives in the spoke
// package (v1alpha1); this file only marks the hub types.

// Hub marks the v1beta1 StatefulSet as the conversion hub of the StatefulSet kind.
func (*StatefulSet) Hub() {}

// Hub marks the v1beta1 DaemonSet as the conversion hub of the DaemonSet kind.
func (*DaemonSet) Hub() {}

// Hub marks the v1beta1 SidecarSet as the conversion hub of the SidecarSet kind.
func (*SidecarSet) Hub() {}
