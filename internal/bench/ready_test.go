package bench

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// readyWatch records when each Node was first seen Ready, through a watch of
// the admin client: the moment the provider's own watch can see it too.
type readyWatch struct {
	stop chan struct{}
	mu   sync.Mutex
	at   map[string]time.Time
}

func watchReady(cs kubernetes.Interface) (*readyWatch, error) {
	w := &readyWatch{stop: make(chan struct{}), at: map[string]time.Time{}}
	f := informers.NewSharedInformerFactory(cs, 0)
	inf := f.Core().V1().Nodes().Informer()
	note := func(obj any) {
		n, ok := obj.(*corev1.Node)
		if !ok {
			return
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				now := time.Now()
				w.mu.Lock()
				if _, seen := w.at[n.Name]; !seen {
					w.at[n.Name] = now
				}
				w.mu.Unlock()
			}
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    note,
		UpdateFunc: func(_, obj any) { note(obj) },
	}); err != nil {
		return nil, err
	}
	f.Start(w.stop)
	f.WaitForCacheSync(w.stop)
	return w, nil
}

// readyAt returns when the Node turned Ready, and whether it was seen to.
func (w *readyWatch) readyAt(node string) (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	t, ok := w.at[node]
	return t, ok
}

func (w *readyWatch) close() { close(w.stop) }
