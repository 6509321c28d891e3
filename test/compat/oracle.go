// Package compat checks Kruise's generated CRDs against the field oracle: the CRDs OpenKruise v1.9.0
// generates (../shared/compat/openkruise-v1.9.0 beside the checkout, or $KRUISE_COMPAT_DIR). The
// comparison covers everything a client can observe on the wire — names, scope, versions,
// subresources, printer columns and the full schema (types, formats, enums, defaults, required
// fields, validation bounds, list/map semantics) — and ignores only descriptions.
package compat

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// OracleDir is the folder of OpenKruise v1.9.0's CRDs and samples.
func OracleDir(repoRoot string) string {
	if d := os.Getenv("KRUISE_COMPAT_DIR"); d != "" {
		return d
	}
	return filepath.Join(repoRoot, "..", "shared", "compat", "openkruise-v1.9.0")
}

// ReadCRD decodes one CRD file.
func ReadCRD(file string) (*apiextv1.CustomResourceDefinition, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	crd := &apiextv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(data, crd); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return crd, nil
}

// Diff lists every wire-visible difference between our CRD and the oracle's, one per line, each
// starting with the path where it was found.
func Diff(ours, theirs *apiextv1.CustomResourceDefinition) []string {
	var d differ
	d.eq("spec.group", ours.Spec.Group, theirs.Spec.Group)
	d.eq("spec.scope", ours.Spec.Scope, theirs.Spec.Scope)
	on, tn := ours.Spec.Names, theirs.Spec.Names
	d.eq("spec.names.kind", on.Kind, tn.Kind)
	d.eq("spec.names.listKind", on.ListKind, tn.ListKind)
	d.eq("spec.names.plural", on.Plural, tn.Plural)
	d.eq("spec.names.singular", on.Singular, tn.Singular)
	d.eq("spec.names.shortNames", sorted(on.ShortNames), sorted(tn.ShortNames))
	d.eq("spec.names.categories", sorted(on.Categories), sorted(tn.Categories))
	d.eq("spec.conversion", ours.Spec.Conversion, theirs.Spec.Conversion)
	d.eq("spec.preserveUnknownFields", ours.Spec.PreserveUnknownFields, theirs.Spec.PreserveUnknownFields)

	byName := map[string]apiextv1.CustomResourceDefinitionVersion{}
	for _, v := range ours.Spec.Versions {
		byName[v.Name] = v
	}
	for _, tv := range theirs.Spec.Versions {
		ov, ok := byName[tv.Name]
		p := "spec.versions[" + tv.Name + "]"
		if !ok {
			d.add(p, "version missing")
			continue
		}
		delete(byName, tv.Name)
		d.eq(p+".served", ov.Served, tv.Served)
		d.eq(p+".storage", ov.Storage, tv.Storage)
		d.eq(p+".deprecated", ov.Deprecated, tv.Deprecated)
		d.eq(p+".subresources", ov.Subresources, tv.Subresources)
		d.eq(p+".additionalPrinterColumns", columns(ov.AdditionalPrinterColumns), columns(tv.AdditionalPrinterColumns))
		if ov.Schema == nil || tv.Schema == nil {
			d.eq(p+".schema present", ov.Schema != nil, tv.Schema != nil)
			continue
		}
		d.schema(p+".schema", ov.Schema.OpenAPIV3Schema, tv.Schema.OpenAPIV3Schema)
	}
	for name := range byName {
		d.add("spec.versions["+name+"]", "version not in the oracle")
	}
	sort.Strings(d.out)
	return d.out
}

type differ struct{ out []string }

func (d *differ) add(path, msg string) { d.out = append(d.out, path+": "+msg) }

func (d *differ) eq(path string, ours, theirs any) {
	if !reflect.DeepEqual(ours, theirs) {
		d.add(path, fmt.Sprintf("ours %s, oracle %s", show(ours), show(theirs)))
	}
}

func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	sort.Strings(out)
	if len(out) == 0 {
		return nil
	}
	return out
}

// column is a printer column without its description.
type column struct {
	Name, Type, Format, JSONPath string
	Priority                     int32
}

func columns(cs []apiextv1.CustomResourceColumnDefinition) []column {
	var out []column
	for _, c := range cs {
		out = append(out, column{c.Name, c.Type, c.Format, c.JSONPath, c.Priority})
	}
	return out
}

// schema compares two schemas recursively, ignoring descriptions.
func (d *differ) schema(path string, ours, theirs *apiextv1.JSONSchemaProps) {
	if ours == nil || theirs == nil {
		if ours != theirs {
			d.eq(path+" present", ours != nil, theirs != nil)
		}
		return
	}
	d.eq(path+".type", ours.Type, theirs.Type)
	d.eq(path+".format", ours.Format, theirs.Format)
	d.eq(path+".enum", jsonSet(ours.Enum), jsonSet(theirs.Enum))
	d.eq(path+".default", jsonValue(ours.Default), jsonValue(theirs.Default))
	d.eq(path+".required", sorted(ours.Required), sorted(theirs.Required))
	d.eq(path+".nullable", ours.Nullable, theirs.Nullable)
	d.eq(path+".pattern", ours.Pattern, theirs.Pattern)
	d.eq(path+".minimum", ours.Minimum, theirs.Minimum)
	d.eq(path+".maximum", ours.Maximum, theirs.Maximum)
	d.eq(path+".exclusiveMinimum", ours.ExclusiveMinimum, theirs.ExclusiveMinimum)
	d.eq(path+".exclusiveMaximum", ours.ExclusiveMaximum, theirs.ExclusiveMaximum)
	d.eq(path+".minLength", ours.MinLength, theirs.MinLength)
	d.eq(path+".maxLength", ours.MaxLength, theirs.MaxLength)
	d.eq(path+".minItems", ours.MinItems, theirs.MinItems)
	d.eq(path+".maxItems", ours.MaxItems, theirs.MaxItems)
	d.eq(path+".minProperties", ours.MinProperties, theirs.MinProperties)
	d.eq(path+".maxProperties", ours.MaxProperties, theirs.MaxProperties)
	d.eq(path+".x-kubernetes-preserve-unknown-fields", ours.XPreserveUnknownFields, theirs.XPreserveUnknownFields)
	d.eq(path+".x-kubernetes-embedded-resource", ours.XEmbeddedResource, theirs.XEmbeddedResource)
	d.eq(path+".x-kubernetes-int-or-string", ours.XIntOrString, theirs.XIntOrString)
	d.eq(path+".x-kubernetes-list-type", ours.XListType, theirs.XListType)
	d.eq(path+".x-kubernetes-list-map-keys", ours.XListMapKeys, theirs.XListMapKeys)
	d.eq(path+".x-kubernetes-map-type", ours.XMapType, theirs.XMapType)
	d.eq(path+".x-kubernetes-validations", rules(ours.XValidations), rules(theirs.XValidations))
	d.eq(path+".anyOf/oneOf/allOf/not present", len(ours.AnyOf)+len(ours.OneOf)+len(ours.AllOf), len(theirs.AnyOf)+len(theirs.OneOf)+len(theirs.AllOf))

	for name, tp := range theirs.Properties {
		op, ok := ours.Properties[name]
		if !ok {
			d.add(path+"."+name, "field missing")
			continue
		}
		d.schema(path+"."+name, &op, &tp)
	}
	for name := range ours.Properties {
		if _, ok := theirs.Properties[name]; !ok {
			d.add(path+"."+name, "field not in the oracle")
		}
	}
	var oi, ti *apiextv1.JSONSchemaProps
	if ours.Items != nil {
		oi = ours.Items.Schema
	}
	if theirs.Items != nil {
		ti = theirs.Items.Schema
	}
	if oi != nil || ti != nil {
		d.schema(path+"[]", oi, ti)
	}
	var oa, ta *apiextv1.JSONSchemaProps
	if ours.AdditionalProperties != nil {
		oa = ours.AdditionalProperties.Schema
		d.eq(path+".additionalProperties.allows", ours.AdditionalProperties.Allows, theirs.AdditionalProperties != nil && theirs.AdditionalProperties.Allows)
	}
	if theirs.AdditionalProperties != nil {
		ta = theirs.AdditionalProperties.Schema
	}
	if oa != nil || ta != nil {
		d.schema(path+"{}", oa, ta)
	}
}

func rules(vs apiextv1.ValidationRules) []string {
	var out []string
	for _, v := range vs {
		out = append(out, v.Rule)
	}
	return out
}

func jsonValue(v *apiextv1.JSON) any {
	if v == nil {
		return nil
	}
	var out any
	_ = json.Unmarshal(v.Raw, &out)
	return out
}

func jsonSet(vs []apiextv1.JSON) []string {
	var out []string
	for _, v := range vs {
		out = append(out, show(jsonValue(&v)))
	}
	sort.Strings(out)
	return out
}
