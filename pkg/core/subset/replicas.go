package subset

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/intstr"
)

// ParseReplicas resolves a subset's replica setting against the UnitedDeployment's
// replicas: an integer is taken as is (negative is an error), a percentage "N%" (0 ≤ N ≤ 100)
// is total·N/100 rounded half up, and needs total ≥ 0.
func ParseReplicas(total int32, v intstr.IntOrString) (int32, error) {
	if v.Type == intstr.Int {
		if v.IntVal < 0 {
			return 0, fmt.Errorf("subset replicas (%d) should not be less than 0", v.IntVal)
		}
		return v.IntVal, nil
	}
	if total < 0 {
		return 0, fmt.Errorf("subset replicas (%s) cannot be a percentage when the UnitedDeployment replicas are unset", v.StrVal)
	}
	digits, ok := strings.CutSuffix(v.StrVal, "%")
	if !ok {
		return 0, fmt.Errorf("subset replicas (%s) must be an integer or a percentage ending in '%%'", v.StrVal)
	}
	pct, err := strconv.ParseInt(digits, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("subset replicas (%s) is not an integer percentage: %w", v.StrVal, err)
	}
	if pct < 0 || pct > 100 {
		return 0, fmt.Errorf("subset replicas (%s) should be in range [0, 100]", v.StrVal)
	}
	return int32(math.Floor(float64(total)*float64(pct)/100 + 0.5)), nil
}
