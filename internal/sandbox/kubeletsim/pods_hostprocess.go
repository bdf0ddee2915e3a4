package kubeletsim

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
)

// CrashLoopBackOff is the kubelet's container restart back-off
// (pkg/kubelet/kubelet.go: backOffPeriod 10s doubling to MaxContainerBackOff
// 5m). Tests may scale it down.
var CrashLoopBackOff = struct{ Initial, Max time.Duration }{10 * time.Second, 5 * time.Minute}

// MountBackOff is the volume manager's retry of a failed volume set-up
// (pkg/volume/util/nestedpendingoperations/nestedpendingoperations.go:
// initialDurationBeforeRetry 500ms doubling to maxDurationBeforeRetry
// 2m2s). A mount that fails (a ConfigMap the Node authorizer does not yet
// let the node read because the pod's binding has not reached its graph,
// one not created yet) keeps the container ContainerCreating and is tried
// again on that schedule; it is no container failure, so CrashLoopBackOff
// does not apply and no restart is counted.
var MountBackOff = struct{ Initial, Max time.Duration }{500 * time.Millisecond, 2*time.Minute + 2*time.Second}

// logTailLines is how many of a container's last log lines the simulator
// keeps for its status message.
const logTailLines = 20

// processRunner runs a native program on the host (*winsim.Host.Run), for
// as long as the host's current boot at most (UpContext: shims.go).
type processRunner interface {
	Run(ctx context.Context, p *winsim.Process) int
	UpContext() context.Context
}

// isHostProcess: securityContext.windowsOptions.hostProcess on the pod or a
// container (the API server requires all or none, and hostNetwork).
func isHostProcess(pod *corev1.Pod) bool {
	if sc := pod.Spec.SecurityContext; sc != nil && sc.WindowsOptions != nil && sc.WindowsOptions.HostProcess != nil && *sc.WindowsOptions.HostProcess {
		return true
	}
	for _, c := range pod.Spec.Containers {
		if sc := c.SecurityContext; sc != nil && sc.WindowsOptions != nil && sc.WindowsOptions.HostProcess != nil && *sc.WindowsOptions.HostProcess {
			return true
		}
	}
	return false
}

// hostProcessPod runs one HostProcess pod's containers as host processes.
// It lives in its host's shimTable (shims.go), not in the kubelet that
// started it: a kubelet that starts again in the same boot adopts it.
type hostProcessPod struct {
	pod    *corev1.Pod
	ctx    context.Context // ends with the pod, or the host's boot
	cancel context.CancelFunc

	mu sync.Mutex
	// w is the kubelet (its pod worker) the pod belongs to now; nil while
	// no kubelet runs, and then attached is open until one adopts it.
	w        *podWorker
	attached chan struct{}
	statuses map[string]*corev1.ContainerStatus
}

// startHostProcess starts the pod's containers once per boot of the host:
// a pod whose containers still run (a kubelet restart) is adopted instead.
func (w *podWorker) startHostProcess(pod *corev1.Pod) error {
	runner, ok := w.n.k.cfg.Files.(processRunner)
	if !ok {
		return fmt.Errorf("the host cannot run processes for HostProcess pod %s/%s", pod.Namespace, pod.Name)
	}
	shims := shimsOf(runner)
	hp, adopted, started := shims.startOrAdopt(w, pod)
	switch {
	case started:
		go hp.run(hp.ctx, runner)
		w.n.k.log.Info("kubelet.go:2530", "SyncLoop (PLEG): event for pod", "pod", pod.Namespace+"/"+pod.Name, "event", "HostProcess containers starting")
	case adopted:
		// The PLEG's first relist finds the containers running; the
		// status manager posts their statuses as this kubelet's own.
		w.n.k.log.Info("kubelet.go:2530", "SyncLoop (PLEG): event for pod", "pod", pod.Namespace+"/"+pod.Name, "event", "ContainerStarted (running before this kubelet started)")
		if len(pod.Spec.Containers) > 0 {
			go hp.set(pod.Spec.Containers[0].Name, func(*corev1.ContainerStatus) {})
		}
	default:
		// The status manager's reconcile (pkg/kubelet/status
		// status_manager.go needsReconcile): a Ready condition the API
		// server holds that differs from the kubelet's (the node lifecycle
		// controller marks a NotReady node's pods not Ready) is posted
		// again.
		if ready, known := hp.allReady(); known && ready != podReady(pod) && len(pod.Spec.Containers) > 0 {
			go hp.set(pod.Spec.Containers[0].Name, func(*corev1.ContainerStatus) {})
		}
	}
	return nil
}

// stopHostProcess ends a pod's processes (deletion).
func (w *podWorker) stopHostProcess(pod *corev1.Pod) {
	if runner, ok := w.n.k.cfg.Files.(processRunner); ok {
		shimsOf(runner).end(pod.UID)
	}
}

// worker waits until a kubelet holds the pod (the container's restart and
// its status need one) and returns it; false once ctx ends.
func (hp *hostProcessPod) worker(ctx context.Context) (*podWorker, bool) {
	for {
		hp.mu.Lock()
		w, attached := hp.w, hp.attached
		hp.mu.Unlock()
		if w != nil {
			return w, true
		}
		select {
		case <-attached:
		case <-ctx.Done():
			return nil, false
		}
	}
}

// attach makes w the pod's kubelet.
func (hp *hostProcessPod) attach(w *podWorker) {
	hp.mu.Lock()
	defer hp.mu.Unlock()
	if hp.w == nil {
		close(hp.attached)
	}
	hp.w = w
}

// detach leaves the pod without a kubelet, unless another has adopted it.
func (hp *hostProcessPod) detach(w *podWorker) {
	hp.mu.Lock()
	defer hp.mu.Unlock()
	if hp.w == w {
		hp.w, hp.attached = nil, make(chan struct{})
	}
}

// run starts the pod as the kubelet does (pkg/kubelet/kuberuntime
// kuberuntime_manager.go computePodActions): its init containers one after
// another, each to a successful exit (a failed one restarted with
// CrashLoopBackOff, restartPolicy Always), then its containers side by side.
// Lifecycle hooks are not modelled: a container with one is refused
// (CreateContainerError) rather than run without them.
func (hp *hostProcessPod) run(ctx context.Context, runner processRunner) {
	for _, c := range hp.pod.Spec.InitContainers {
		if !hp.runContainer(ctx, runner, c, true) {
			return
		}
	}
	for _, c := range hp.pod.Spec.Containers {
		if c.Lifecycle != nil && (c.Lifecycle.PostStart != nil || c.Lifecycle.PreStop != nil) {
			hp.set(c.Name, func(st *corev1.ContainerStatus) {
				st.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CreateContainerError",
					Message: "lifecycle hooks (postStart, preStop) are not modelled by the simulator"}}
			})
			continue
		}
		go hp.runContainer(ctx, runner, c, false)
	}
}

// runContainer runs one container, restarting it as its pod's restartPolicy
// says; an init container (init) returns true once it exited 0.
func (hp *hostProcessPod) runContainer(ctx context.Context, runner processRunner, c corev1.Container, init bool) bool {
	delay := CrashLoopBackOff.Initial
	mountDelay := MountBackOff.Initial
	restarts := int32(0)
	for ctx.Err() == nil {
		// Only a kubelet starts (and restarts) a container: while none
		// runs, an exited container stays exited.
		w, ok := hp.worker(ctx)
		if !ok {
			return false
		}
		k := w.n.k
		id := randomHex(32)
		mount := `C:\C\` + id
		logPath := fmt.Sprintf(`C:\var\log\pods\%s_%s_%s\%s\%d.log`, hp.pod.Namespace, hp.pod.Name, hp.pod.UID, c.Name, restarts)
		logw := newTailWriter(k.cfg.Files, logPath)
		env, err := hp.prepare(ctx, w.n, c, mount)
		var mountErr *mountError
		if errors.As(err, &mountErr) {
			hp.set(c.Name, func(st *corev1.ContainerStatus) {
				st.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}
			})
			// The volume manager's event (operation_generator.go).
			w.event(ctx, hp.pod, corev1.EventTypeWarning, "FailedMount", err.Error())
			k.log.Error("nestedpendingoperations.go:348", err, "Operation failed. No retries permitted until "+time.Now().Add(mountDelay).Format("2006-01-02 15:04:05.999999999 -0700 MST"),
				"durationBeforeRetry", mountDelay.String(), "pod", hp.pod.Namespace+"/"+hp.pod.Name)
			if !sleepCtx(ctx, mountDelay) {
				return false
			}
			mountDelay = min(2*mountDelay, MountBackOff.Max)
			continue
		}
		mountDelay = MountBackOff.Initial
		if err != nil {
			hp.set(c.Name, func(st *corev1.ContainerStatus) {
				st.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CreateContainerConfigError", Message: err.Error()}}
			})
			k.log.Error("kuberuntime_manager.go:1274", err, "Error preparing container", "pod", hp.pod.Namespace+"/"+hp.pod.Name, "container", c.Name)
			if !sleepCtx(ctx, delay) {
				return false
			}
			continue
		}
		cmd := append(append([]string{}, c.Command...), c.Args...)
		for i := range cmd {
			cmd[i] = expandVars(cmd[i], env)
		}
		if len(cmd) == 0 {
			hp.set(c.Name, func(st *corev1.ContainerStatus) {
				st.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CreateContainerError", Message: "failed to create containerd container: no command specified"}}
			})
			return false
		}
		started := metav1.Now()
		f := false
		hp.set(c.Name, func(st *corev1.ContainerStatus) {
			st.ContainerID = "containerd://" + id
			st.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}}
			st.Ready, st.Started = false, &f
		})
		proc := &winsim.Process{Path: cmd[0], Args: cmd[1:], Env: env, Dir: mount, Stdout: logw, Stderr: logw}
		unregister := onReady(proc, func() {
			hp.set(c.Name, func(st *corev1.ContainerStatus) { t := true; st.Ready, st.Started = true, &t })
		})
		code := runner.Run(ctx, proc)
		unregister()
		if ctx.Err() != nil {
			return false // ended with its pod or the host's boot: no exit to report
		}
		// The exit is seen by the kubelet running now (its PLEG), which
		// may be a later one than the kubelet that started the container.
		if w, ok = hp.worker(ctx); !ok {
			return false
		}
		k = w.n.k
		finished := metav1.Now()
		term := &corev1.ContainerStateTerminated{ExitCode: int32(code), Reason: "Completed", StartedAt: started, FinishedAt: finished, ContainerID: "containerd://" + id}
		if init && code == 0 {
			k.log.Info("kuberuntime_container.go:809", "Container exited", "pod", hp.pod.Namespace+"/"+hp.pod.Name, "container", c.Name, "exitCode", code)
			hp.set(c.Name, func(st *corev1.ContainerStatus) { st.State, st.Ready = corev1.ContainerState{Terminated: term}, true })
			return true
		}
		restarts++
		if code != 0 {
			term.Reason = "Error"
			// The kubelet fills message from the log only with
			// terminationMessagePolicy FallbackToLogsOnError; the simulator
			// always keeps the last lines there as evidence.
			term.Message = logw.tail()
		}
		k.log.Info("kuberuntime_container.go:809", "Container exited", "pod", hp.pod.Namespace+"/"+hp.pod.Name, "container", c.Name, "exitCode", code)
		backoff := fmt.Sprintf("back-off %s restarting failed container=%s pod=%s_%s(%s)", delay, c.Name, hp.pod.Name, hp.pod.Namespace, hp.pod.UID)
		hp.set(c.Name, func(st *corev1.ContainerStatus) {
			st.LastTerminationState = corev1.ContainerState{Terminated: term}
			st.RestartCount = restarts
			st.Ready = false
			st.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: backoff}}
		})
		if hp.pod.Spec.RestartPolicy == corev1.RestartPolicyNever || (hp.pod.Spec.RestartPolicy == corev1.RestartPolicyOnFailure && code == 0) {
			hp.set(c.Name, func(st *corev1.ContainerStatus) { st.State = corev1.ContainerState{Terminated: term} })
			return false
		}
		if !sleepCtx(ctx, delay) {
			return false
		}
		if delay *= 2; delay > CrashLoopBackOff.Max {
			delay = CrashLoopBackOff.Max
		}
	}
	return false
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

// allReady reports whether every container is ready, and whether every
// container has reported at all.
func (hp *hostProcessPod) allReady() (ready, known bool) {
	hp.mu.Lock()
	defer hp.mu.Unlock()
	ready, known = true, true
	for _, c := range hp.pod.Spec.Containers {
		st := hp.statuses[c.Name]
		if st == nil || st.State.Waiting != nil && st.State.Waiting.Reason == "ContainerCreating" {
			known = false
			continue
		}
		ready = ready && st.Ready
	}
	return ready, known
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// set changes one container's status and, while a kubelet holds the pod,
// posts the pod's status (a kubelet that adopts the pod posts it then).
func (hp *hostProcessPod) set(name string, fn func(*corev1.ContainerStatus)) {
	hp.mu.Lock()
	fn(hp.statuses[name])
	var list []corev1.ContainerStatus
	allReady := true
	for _, c := range hp.pod.Spec.Containers {
		st := *hp.statuses[c.Name]
		list = append(list, st)
		allReady = allReady && st.Ready
	}
	var initList []corev1.ContainerStatus
	initialized := true
	for _, c := range hp.pod.Spec.InitContainers {
		st := *hp.statuses[c.Name]
		initList = append(initList, st)
		initialized = initialized && st.State.Terminated != nil && st.State.Terminated.ExitCode == 0
	}
	w := hp.w
	hp.mu.Unlock()
	if w == nil {
		return
	}
	n := w.n
	ctx := context.Background()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := n.client.CoreV1().Pods(hp.pod.Namespace).Get(ctx, hp.pod.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if cur.UID != hp.pod.UID {
			return nil
		}
		st := runningStatus(cur, n.nodeIP(), n.nodeIP())
		st.ContainerStatuses = list
		if len(initList) > 0 {
			st.InitContainerStatuses = initList
			if !initialized {
				st.Phase = corev1.PodPending
				for i := range st.Conditions {
					if st.Conditions[i].Type == corev1.PodInitialized {
						st.Conditions[i].Status, st.Conditions[i].Reason = corev1.ConditionFalse, "ContainersNotInitialized"
					}
				}
			}
		}
		cond := corev1.ConditionFalse
		if allReady {
			cond = corev1.ConditionTrue
		}
		for i := range st.Conditions {
			if t := st.Conditions[i].Type; t == corev1.PodReady || t == corev1.ContainersReady {
				if st.Conditions[i].Status != cond {
					st.Conditions[i].Status, st.Conditions[i].LastTransitionTime = cond, metav1.Now()
				}
				if cond == corev1.ConditionFalse {
					st.Conditions[i].Reason = "ContainersNotReady"
				}
			}
		}
		cur.Status = st
		_, err = n.client.CoreV1().Pods(cur.Namespace).UpdateStatus(ctx, cur, metav1.UpdateOptions{})
		return err
	})
	if err != nil && !apierrors.IsNotFound(err) {
		n.k.log.Error("status_manager.go:1041", err, "Failed to update status for pod", "pod", hp.pod.Namespace+"/"+hp.pod.Name)
		// The status manager posts it again at its next sync (an API
		// server that was away, a conflict past the retries).
		time.AfterFunc(statusSyncPeriod, func() {
			if hp.ctx.Err() == nil {
				hp.set(name, func(*corev1.ContainerStatus) {})
			}
		})
	}
}

// statusSyncPeriod is the kubelet status manager's syncPeriod
// (pkg/kubelet/status/status_manager.go): every 10 s it posts again each
// pod status the API server does not have yet (needsReconcile), so a
// status whose update failed is not lost.
const statusSyncPeriod = 10 * time.Second

// prepare materialises the container's volumes under its mount point and
// returns its environment: the container's env (values, downward API
// fieldRefs) plus CONTAINER_SANDBOX_MOUNT_POINT, which containerd's
// HostProcess support sets to the container's directory on the host
// (hcsshim internal/jobcontainers: the volume mounts live under it).
func (hp *hostProcessPod) prepare(ctx context.Context, n *nodeAgent, c corev1.Container, mount string) (map[string]string, error) {
	pod := hp.pod
	env := map[string]string{
		"CONTAINER_SANDBOX_MOUNT_POINT": mount + `\`,
		"COMPUTERNAME":                  strings.ToUpper(n.k.cfg.Host.ComputerName),
		"SYSTEMROOT":                    `C:\Windows`,
		"PATH":                          `C:\Windows\system32;C:\Windows;C:\Windows\System32\WindowsPowerShell\v1.0\`,
	}
	field := func(path string) string {
		switch path {
		case "spec.nodeName":
			return n.name
		case "metadata.name":
			return pod.Name
		case "metadata.namespace":
			return pod.Namespace
		case "metadata.uid":
			return string(pod.UID)
		case "status.podIP", "status.hostIP":
			return n.nodeIP()
		case "spec.serviceAccountName":
			return pod.Spec.ServiceAccountName
		}
		return ""
	}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			env[strings.ToUpper(e.Name)] = expandVars(e.Value, env)
		case e.ValueFrom.FieldRef != nil:
			env[strings.ToUpper(e.Name)] = field(e.ValueFrom.FieldRef.FieldPath)
		case e.ValueFrom.ConfigMapKeyRef != nil:
			cm, err := n.client.CoreV1().ConfigMaps(pod.Namespace).Get(ctx, e.ValueFrom.ConfigMapKeyRef.Name, metav1.GetOptions{})
			if err != nil {
				return nil, fmt.Errorf("configmap %q not found", e.ValueFrom.ConfigMapKeyRef.Name)
			}
			env[strings.ToUpper(e.Name)] = cm.Data[e.ValueFrom.ConfigMapKeyRef.Key]
		}
	}
	// The image's files first, then the volumes mounted over them.
	for name, data := range imageFiles(c.Image) {
		if err := n.k.cfg.Files.WriteFile(mount+`\`+name, data); err != nil {
			return nil, err
		}
	}
	vols := map[string]corev1.Volume{}
	for _, v := range pod.Spec.Volumes {
		vols[v.Name] = v
	}
	for _, m := range c.VolumeMounts {
		v, ok := vols[m.Name]
		if !ok {
			continue
		}
		dir := mount + hostPath(m.MountPath)[2:]
		if strings.HasPrefix(m.MountPath, `C:`) || strings.HasPrefix(m.MountPath, `c:`) {
			dir = mount + m.MountPath[2:]
		}
		files, err := hp.volumeFiles(ctx, n, v)
		if err != nil {
			return nil, err
		}
		for name, data := range files {
			if err := n.k.cfg.Files.WriteFile(dir+`\`+strings.ReplaceAll(name, "/", `\`), data); err != nil {
				return nil, err
			}
		}
	}
	return env, nil
}

// mountError is a volume that could not be set up (MountVolume.SetUp
// failed): the volume manager tries it again (MountBackOff).
type mountError struct {
	volume string
	err    error
}

func (e *mountError) Error() string {
	return fmt.Sprintf("MountVolume.SetUp failed for volume %q : %v", e.volume, e.err)
}

func (e *mountError) Unwrap() error { return e.err }

// volumeFiles is what the kubelet's volume plugins put in a volume, read
// with the node's credentials (the Node authorizer lets a node read the
// ConfigMaps and request the ServiceAccount tokens its pods reference).
func (hp *hostProcessPod) volumeFiles(ctx context.Context, n *nodeAgent, v corev1.Volume) (map[string][]byte, error) {
	pod := hp.pod
	out := map[string][]byte{}
	configMap := func(name string, items []corev1.KeyToPath, optional *bool) error {
		cm, err := n.client.CoreV1().ConfigMaps(pod.Namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			if optional != nil && *optional && apierrors.IsNotFound(err) {
				return nil
			}
			return &mountError{volume: v.Name, err: err}
		}
		if len(items) == 0 {
			for k, d := range cm.Data {
				out[k] = []byte(d)
			}
			return nil
		}
		for _, it := range items {
			out[it.Path] = []byte(cm.Data[it.Key])
		}
		return nil
	}
	switch {
	case v.ConfigMap != nil:
		return out, configMap(v.ConfigMap.Name, v.ConfigMap.Items, v.ConfigMap.Optional)
	case v.Projected != nil:
		for _, s := range v.Projected.Sources {
			switch {
			case s.ServiceAccountToken != nil:
				tok, err := hp.token(ctx, n, s.ServiceAccountToken)
				if err != nil {
					return nil, &mountError{volume: v.Name, err: err}
				}
				out[s.ServiceAccountToken.Path] = []byte(tok)
			case s.ConfigMap != nil:
				if err := configMap(s.ConfigMap.Name, s.ConfigMap.Items, s.ConfigMap.Optional); err != nil {
					return nil, err
				}
			case s.DownwardAPI != nil:
				for _, it := range s.DownwardAPI.Items {
					if it.FieldRef != nil && it.FieldRef.FieldPath == "metadata.namespace" {
						out[it.Path] = []byte(pod.Namespace)
					} else if it.FieldRef != nil && it.FieldRef.FieldPath == "metadata.name" {
						out[it.Path] = []byte(pod.Name)
					}
				}
			}
		}
	}
	return out, nil
}

// token is the kubelet's TokenRequest for a projected serviceAccountToken
// (pkg/kubelet/token/token_manager.go; the projected volume plugin binds it
// to the pod).
func (hp *hostProcessPod) token(ctx context.Context, n *nodeAgent, s *corev1.ServiceAccountTokenProjection) (string, error) {
	sa := hp.pod.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	exp := int64(3607)
	if s.ExpirationSeconds != nil {
		exp = *s.ExpirationSeconds
	}
	var aud []string
	if s.Audience != "" {
		aud = []string{s.Audience}
	}
	tr, err := n.client.CoreV1().ServiceAccounts(hp.pod.Namespace).CreateToken(ctx, sa, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{
			Audiences: aud, ExpirationSeconds: &exp,
			BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: hp.pod.Name, UID: hp.pod.UID},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("failed to fetch token: %w", err)
	}
	return tr.Status.Token, nil
}

// expandVars is the kubelet's $(VAR) expansion
// (third_party/forked/golang/expansion): defined names are replaced, $$ is
// a literal $, anything else stays as written.
func expandVars(s string, env map[string]string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				b.WriteString(s[i:])
				return b.String()
			}
			name := s[i+2 : i+2+end]
			if v, ok := env[strings.ToUpper(name)]; ok {
				b.WriteString(v)
			} else {
				b.WriteString("$(" + name + ")")
			}
			i += 2 + end
		default:
			b.WriteByte('$')
		}
	}
	return b.String()
}

// tailWriter is a container's log: CRI's log file on the host (as
// kubectl logs would read it) and its last lines in memory.
type tailWriter struct {
	mu    sync.Mutex
	path  string
	files FileSystem
	lines []string
	part  string
}

func newTailWriter(files FileSystem, path string) *tailWriter {
	return &tailWriter{files: files, path: path}
}

func (t *tailWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.part += string(p)
	for {
		i := strings.IndexByte(t.part, '\n')
		if i < 0 {
			break
		}
		line := strings.TrimRight(t.part[:i], "\r")
		t.part = t.part[i+1:]
		t.lines = append(t.lines, line)
		if len(t.lines) > logTailLines {
			t.lines = t.lines[1:]
		}
		t.appendFile(line)
	}
	return len(p), nil
}

// appendFile writes a CRI log line ("<time> stderr F <line>").
func (t *tailWriter) appendFile(line string) {
	entry := time.Now().UTC().Format(time.RFC3339Nano) + " stderr F " + line + "\n"
	if d, ok := t.files.(diskPather); ok {
		p := d.DiskPath(t.path)
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		if f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err == nil {
			_, _ = f.WriteString(entry)
			_ = f.Close() // a lost log line of a simulated pod has no one to report to
		}
	}
}

func (t *tailWriter) tail() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := t.lines
	if t.part != "" {
		lines = append(append([]string{}, lines...), t.part)
	}
	return strings.Join(lines, "\n")
}
