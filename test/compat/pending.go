package compat

// pending lists the oracle CRDs whose kinds Kruise does not define yet. The API issue is resolved
// only when this list is empty; a kind leaves it in the change that adds its types.
var pending = map[string]bool{
	"apps.kruise.io_clonesets.yaml":         true,
	"apps.kruise.io_statefulsets.yaml":      true,
	"apps.kruise.io_uniteddeployments.yaml": true,
}
