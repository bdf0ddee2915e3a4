package kube

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	bootstraputil "k8s.io/cluster-bootstrap/token/util"
	"k8s.io/cluster-bootstrap/util/tokens"
)

// BootstrapTokenGroup is the extra group the tokens authenticate as: the
// group `kubeadm init` binds to node bootstrapping (create CSRs, have them
// auto-approved, read the kubeadm ConfigMaps), so a node joins with exactly
// the rights `kubeadm join` would have.
const BootstrapTokenGroup = "system:bootstrappers:kubeadm:default-node-token"

// LabelManagedBy marks objects this provider creates (bootstrap token
// Secrets, RuntimeClasses, the networking objects), so sweepers and users
// can tell them apart from kubeadm's, and so the provider's admission
// policies (examples/rbac) let it change these and no others.
const LabelManagedBy = "app.kubernetes.io/managed-by"

// CreateBootstrapToken creates a bootstrap token in kubeadm's format: the
// Secret kube-system/bootstrap-token-<id> of type
// bootstrap.kubernetes.io/token, usable for authentication only,
// authenticating as BootstrapTokenGroup and expiring after ttl (the
// controller manager's tokencleaner deletes it then). Its id is
// BootstrapTokenID(description); its secret is random. It returns the token
// ("<id>.<secret>", a credential: never log it) and its id, which
// DeleteBootstrapToken takes. A token of the same description that still
// exists is an error: DeleteStaleBootstrapTokens first.
func (c *Client) CreateBootstrapToken(ctx context.Context, ttl time.Duration, description string) (token, id string, err error) {
	if ttl <= 0 {
		return "", "", fmt.Errorf("creating a bootstrap token: the lifetime must be positive, got %s", ttl)
	}
	random, err := bootstraputil.GenerateBootstrapToken()
	if err != nil {
		return "", "", fmt.Errorf("creating a bootstrap token: %w", err)
	}
	_, secret, err := tokens.ParseToken(random)
	if err != nil {
		return "", "", fmt.Errorf("creating a bootstrap token: %w", err)
	}
	id = BootstrapTokenID(description)
	_, err = c.CoreV1().Secrets(metav1.NamespaceSystem).Create(ctx, bootstrapTokenSecret(id, secret, time.Now().Add(ttl), description), metav1.CreateOptions{FieldManager: FieldManager})
	if err != nil {
		return "", "", fmt.Errorf("creating bootstrap token Secret kube-system/%s: %w", bootstraputil.BootstrapTokenSecretName(id), err)
	}
	return id + "." + secret, id, nil
}

// BootstrapTokenID is the id of the bootstrap token of a join described by
// description (one per node): derived from it, so that a later join finds
// the token an earlier one could not delete (the API server away when it
// failed) by its name, with no list of Secrets, which would read every
// Secret of kube-system. The id is public by design (kubeadm: "the token-id
// part is considered public information"); the secret part stays random.
// Two descriptions share an id about once in 36^6.
func BootstrapTokenID(description string) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	sum := sha256.Sum256([]byte(description))
	id := make([]byte, 6)
	for i := range id {
		id[i] = alphabet[int(sum[i])%len(alphabet)]
	}
	return string(id)
}

func bootstrapTokenSecret(id, secret string, expires time.Time, description string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name:      bootstraputil.BootstrapTokenSecretName(id),
			Namespace: metav1.NamespaceSystem,
			Labels:    map[string]string{LabelManagedBy: FieldManager},
		},
		Type: bootstrapapi.SecretTypeBootstrapToken,
		StringData: map[string]string{
			bootstrapapi.BootstrapTokenIDKey:          id,
			bootstrapapi.BootstrapTokenSecretKey:      secret,
			bootstrapapi.BootstrapTokenDescriptionKey: description,
			bootstrapapi.BootstrapTokenExpirationKey:  expires.UTC().Format(time.RFC3339),
			// Authentication only: the kubelet's TLS bootstrap authenticates
			// with it. Signing (usage-bootstrap-signing) would have the
			// controller manager's bootstrapsigner sign kube-public/cluster-info
			// with it, for `kubeadm join`'s token discovery; a node of this
			// provider gets the cluster CA from the provider instead, and the
			// provider's admission policy (examples/rbac) refuses the usage.
			bootstrapapi.BootstrapTokenUsageAuthentication: "true",
			bootstrapapi.BootstrapTokenExtraGroupsKey:      BootstrapTokenGroup,
		},
	}
}

// DeleteBootstrapToken deletes the bootstrap token with the given id; one
// already gone (deleted, or expired and cleaned up) is not an error.
func (c *Client) DeleteBootstrapToken(ctx context.Context, id string) error {
	if !bootstraputil.IsValidBootstrapTokenID(id) {
		return fmt.Errorf("deleting bootstrap token: %q is not a bootstrap token id (6 characters a-z, 0-9)", id)
	}
	name := bootstraputil.BootstrapTokenSecretName(id)
	err := c.CoreV1().Secrets(metav1.NamespaceSystem).Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting bootstrap token Secret kube-system/%s: %w", name, err)
	}
	return nil
}

// RefreshBootstrapToken moves the expiration of the bootstrap token with
// the given id to ttl from now, as Cluster API's kubeadm bootstrap provider
// refreshes the token of a machine that has not joined yet
// (refreshBootstrapTokenIfNeeded): a slow boot does not outlive its join
// credential. A token already gone (expired and cleaned up, or deleted) is
// a NotFoundError: it cannot be brought back.
func (c *Client) RefreshBootstrapToken(ctx context.Context, id string, ttl time.Duration) error {
	if !bootstraputil.IsValidBootstrapTokenID(id) {
		return fmt.Errorf("refreshing bootstrap token: %q is not a bootstrap token id (6 characters a-z, 0-9)", id)
	}
	name := bootstraputil.BootstrapTokenSecretName(id)
	expires := time.Now().Add(ttl).UTC().Format(time.RFC3339)
	patch, err := json.Marshal(map[string]any{"data": map[string][]byte{bootstrapapi.BootstrapTokenExpirationKey: []byte(expires)}})
	if err != nil {
		return err
	}
	_, err = c.CoreV1().Secrets(metav1.NamespaceSystem).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: FieldManager})
	if err != nil {
		return fmt.Errorf("refreshing bootstrap token Secret kube-system/%s: %w", name, notFoundOr(err, "bootstrap token Secret", "kube-system/"+name))
	}
	return nil
}

// DeleteStaleBootstrapTokens deletes the bootstrap token of the given
// description that an earlier join of the same node could not delete (the
// API server away when it failed, or the provider stopped mid-join), found
// by its name (BootstrapTokenID). It would otherwise live until it expires.
func (c *Client) DeleteStaleBootstrapTokens(ctx context.Context, description string) error {
	return c.DeleteBootstrapToken(ctx, BootstrapTokenID(description))
}
