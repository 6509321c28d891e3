package manager

import (
	"flag"
	"io"
	"slices"
	"strings"
	"testing"
)

func TestPodWebhookExcludedNamespacesFlag(t *testing.T) {
	o := &Options{}
	fs := flag.NewFlagSet("kruise-manager", flag.ContinueOnError)
	o.BindFlags(fs)
	if err := fs.Parse([]string{"--pod-webhook-excluded-namespaces= monitoring,,legacy-apps "}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"monitoring", "legacy-apps"}; !slices.Equal(o.PodWebhookExcludedNamespaces, want) {
		t.Errorf("parsed %v, want %v", o.PodWebhookExcludedNamespaces, want)
	}
	if err := o.Validate(); err != nil {
		t.Errorf("valid options refused: %v", err)
	}
	o.PodWebhookExcludedNamespaces = []string{"Bad_Name"}
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), `--pod-webhook-excluded-namespaces: "Bad_Name" is not a namespace name`) {
		t.Errorf("an invalid namespace: %v", err)
	}
}

// The allowed names of the API server's client certificate are a list, and need its CA.
func TestWebhookClientFlags(t *testing.T) {
	o := &Options{}
	fs := flag.NewFlagSet("kruise-manager", flag.ContinueOnError)
	o.BindFlags(fs)
	if err := fs.Parse([]string{"--webhook-client-allowed-names=kube-apiserver, front-proxy ,"}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"kube-apiserver", "front-proxy"}; !slices.Equal(o.WebhookClientAllowedNames, want) {
		t.Errorf("parsed %v, want %v", o.WebhookClientAllowedNames, want)
	}
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "--webhook-client-allowed-names needs --webhook-client-ca-file") {
		t.Errorf("names without the CA: %v", err)
	}
	o.WebhookClientCAFile = "/etc/kruise/webhook-client-ca.crt"
	if err := o.Validate(); err != nil {
		t.Errorf("valid options refused: %v", err)
	}
}

// --sync-period is OpenKruise's: unset leaves controller-runtime's default, 0 turns resyncs off.
func TestSyncPeriodFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // "" for nil, "error" for a refused value
	}{
		{nil, ""},
		{[]string{"--sync-period=0"}, "0s"},
		{[]string{"--sync-period=1h30m"}, "1h30m0s"},
		{[]string{"--sync-period=30"}, "error"},
		{[]string{"--sync-period=-1m"}, "error"},
	} {
		o := &Options{}
		fs := flag.NewFlagSet("kruise-manager", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		o.BindFlags(fs)
		got := ""
		if err := fs.Parse(tc.args); err != nil {
			got = "error"
		} else if o.SyncPeriod != nil {
			got = o.SyncPeriod.String()
		}
		if got != tc.want {
			t.Errorf("%v: sync period %q, want %q", tc.args, got, tc.want)
		}
	}
}
