package imagepuller

import (
	"context"
	"fmt"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// StatusInterval is the least time between two status writes: changes within it go out together.
var StatusInterval = 300 * time.Millisecond

// Run follows the node's NodeImage in nodeImages (a started cache limited to it), runs the pulls it
// asks for and writes their status through w, the puller's only writer, until ctx ends. It cancels
// its pulls when it returns: run again, it starts them over as a restarted daemon does.
func (p *Puller) Run(ctx context.Context, nodeImages cache.Cache, w client.Client) error {
	p.init()
	defer p.Stop()
	inf, err := nodeImages.GetInformer(ctx, &v1beta1.NodeImage{})
	if err != nil {
		return err
	}
	changed := make(chan struct{}, 1)
	poke := func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	reg, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { poke() },
		UpdateFunc: func(_, _ any) { poke() },
		DeleteFunc: func(any) { poke() },
	})
	if err != nil {
		return err
	}
	defer func() { _ = inf.RemoveEventHandler(reg) }()
	if !nodeImages.WaitForCacheSync(ctx) {
		return ctx.Err()
	}
	poke()
	get := func() (*v1beta1.NodeImage, error) {
		ni := &v1beta1.NodeImage{}
		err := nodeImages.Get(ctx, client.ObjectKey{Name: p.Node}, ni)
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return ni, err
	}
	retry := time.NewTimer(0)
	<-retry.C
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
			ni, err := get()
			if err != nil {
				return err
			}
			if ni == nil {
				ni = &v1beta1.NodeImage{} // not created yet, or deleted: nothing to pull
			}
			p.Sync(ctx, ni)
		case <-p.dirtied():
			time.Sleep(StatusInterval) // let a burst of changes go out in one write
			if err := p.writeStatus(ctx, get, w); err != nil {
				p.Log.Error(err, "write NodeImage status; retrying")
				retry.Reset(2 * time.Second)
			}
		case <-retry.C:
			p.markDirty()
		}
	}
}

// writeStatus patches the NodeImage's status when it differs from what the tasks report.
func (p *Puller) writeStatus(ctx context.Context, get func() (*v1beta1.NodeImage, error), w client.Client) error {
	ni, err := get()
	if err != nil || ni == nil {
		return err
	}
	prev := ni.Status
	if prev.FirstSyncStatus == nil && p.written != nil {
		prev.FirstSyncStatus = p.written.FirstSyncStatus // the cache may not show our last write yet
	}
	want := Status(p.snapshot(), prev, time.Now())
	if apiequality.Semantic.DeepEqual(want, ni.Status) || (p.written != nil && apiequality.Semantic.DeepEqual(want, *p.written)) {
		return nil
	}
	patch, err := StatusPatch(ni.Status, want)
	if err != nil {
		return err
	}
	if err := w.Status().Patch(ctx, ni, client.RawPatch("application/merge-patch+json", patch)); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("patch NodeImage %s status: %w", p.Node, err)
	}
	p.written = &want
	return nil
}
