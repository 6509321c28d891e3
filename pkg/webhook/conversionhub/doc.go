// Package conversionhub serves the CRD conversion webhook of the kinds whose schemas differ between
// v1alpha1 and v1beta1 (StatefulSet, DaemonSet, SidecarSet): v1beta1, the stored version, is the
// hub; the API types' own conversion functions convert each v1alpha1 spoke to and from it.
package conversionhub
