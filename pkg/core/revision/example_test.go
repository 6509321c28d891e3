package revision_test

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kruise-ng/kruise/pkg/core/revision"
)

func Example() {
	owner := &metav1.ObjectMeta{Name: "web", Namespace: "prod", UID: "uid-1"}
	gvk := schema.GroupVersionKind{Group: "apps.kruise.io", Version: "v1alpha1", Kind: "CloneSet"}
	template := func(image string) revision.Input {
		return revision.Input{Template: &corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image}}},
		}}
	}

	// The controller applies each decision; here a slice stands for the API server.
	var history []*appsv1.ControllerRevision
	apply := func(in revision.Input) {
		d, err := revision.Select(history, owner, gvk, in, nil)
		if err != nil {
			panic(err)
		}
		switch {
		case d.Create:
			history = append(history, d.Update)
		case d.Renumber:
			for i, r := range history {
				if r.Name == d.Update.Name {
					history[i] = d.Update
				}
			}
		}
		tpl, _ := revision.TemplateOf(d.Update)
		fmt.Printf("create=%v renumber=%v revision=%d image=%s\n", d.Create, d.Renumber, d.Update.Revision,
			tpl.Spec.Containers[0].Image)
	}
	apply(template("app:1"))
	apply(template("app:2"))
	apply(template("app:2")) // nothing changed
	apply(template("app:1")) // rollback reuses the first revision

	// Keep no revision but the one the pods run.
	inUse := map[string]bool{revision.Name("web", revision.Hash(template("app:1"), nil)): true}
	for _, r := range revision.ToDelete(history, inUse, 0) {
		tpl, _ := revision.TemplateOf(r)
		fmt.Println("prune", tpl.Spec.Containers[0].Image)
	}
	// Output:
	// create=true renumber=false revision=1 image=app:1
	// create=true renumber=false revision=2 image=app:2
	// create=false renumber=false revision=2 image=app:2
	// create=false renumber=true revision=3 image=app:1
	// prune app:2
}
