package kube

import (
	"context"
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
// Secrets), so sweepers and users can tell them apart from kubeadm's.
const LabelManagedBy = "app.kubernetes.io/managed-by"

// bootstrapTokenAttempts bounds retries on a token ID collision (one in
// 36^6 per existing token, so a second attempt is already rare).
const bootstrapTokenAttempts = 3

// CreateBootstrapToken creates a bootstrap token in kubeadm's format: the
// Secret kube-system/bootstrap-token-<id> of type
// bootstrap.kubernetes.io/token, usable for authentication and signing,
// authenticating as BootstrapTokenGroup and expiring after ttl (the
// controller manager's tokencleaner deletes it then). It returns the token
// ("<id>.<secret>", a credential: never log it) and its id, which
// DeleteBootstrapToken takes.
func (c *Client) CreateBootstrapToken(ctx context.Context, ttl time.Duration, description string) (token, id string, err error) {
	if ttl <= 0 {
		return "", "", fmt.Errorf("creating a bootstrap token: the lifetime must be positive, got %s", ttl)
	}
	for range bootstrapTokenAttempts {
		token, err = bootstraputil.GenerateBootstrapToken()
		if err != nil {
			return "", "", fmt.Errorf("creating a bootstrap token: %w", err)
		}
		var secret string
		if id, secret, err = tokens.ParseToken(token); err != nil {
			return "", "", fmt.Errorf("creating a bootstrap token: %w", err)
		}
		_, err = c.CoreV1().Secrets(metav1.NamespaceSystem).Create(ctx, bootstrapTokenSecret(id, secret, time.Now().Add(ttl), description), metav1.CreateOptions{FieldManager: FieldManager})
		switch {
		case err == nil:
			return token, id, nil
		case apierrors.IsAlreadyExists(err):
			continue // an id collision: draw another token
		default:
			return "", "", fmt.Errorf("creating bootstrap token Secret kube-system/%s: %w", bootstraputil.BootstrapTokenSecretName(id), err)
		}
	}
	return "", "", fmt.Errorf("creating a bootstrap token: %d generated token ids all existed already", bootstrapTokenAttempts)
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
			bootstrapapi.BootstrapTokenIDKey:               id,
			bootstrapapi.BootstrapTokenSecretKey:           secret,
			bootstrapapi.BootstrapTokenDescriptionKey:      description,
			bootstrapapi.BootstrapTokenExpirationKey:       expires.UTC().Format(time.RFC3339),
			bootstrapapi.BootstrapTokenUsageAuthentication: "true",
			bootstrapapi.BootstrapTokenUsageSigningKey:     "true",
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

// DeleteStaleBootstrapTokens deletes this provider's bootstrap tokens with
// the given description: those an earlier join of the same node could not
// delete (the API server away when it failed, or the provider stopped
// mid-join). They would otherwise live until they expire.
func (c *Client) DeleteStaleBootstrapTokens(ctx context.Context, description string) error {
	list, err := c.CoreV1().Secrets(metav1.NamespaceSystem).List(ctx, metav1.ListOptions{
		LabelSelector: LabelManagedBy + "=" + FieldManager,
		FieldSelector: "type=" + string(bootstrapapi.SecretTypeBootstrapToken),
	})
	if err != nil {
		return fmt.Errorf("listing bootstrap tokens: %w", err)
	}
	for _, s := range list.Items {
		if string(s.Data[bootstrapapi.BootstrapTokenDescriptionKey]) != description {
			continue
		}
		if err := c.DeleteBootstrapToken(ctx, string(s.Data[bootstrapapi.BootstrapTokenIDKey])); err != nil {
			return err
		}
	}
	return nil
}
