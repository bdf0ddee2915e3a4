package kube

import (
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// NotFoundError says the object a finder looked for does not exist. Read
// turns it into RemoveResource plus a warning.
type NotFoundError struct {
	Kind, Name string
}

func (e *NotFoundError) Error() string { return fmt.Sprintf("%s %q not found", e.Kind, e.Name) }

// IsNotFound reports whether err (or anything it wraps) is a NotFoundError.
func IsNotFound(err error) bool {
	var nf *NotFoundError
	return errors.As(err, &nf)
}

// notFoundOr converts the API server's 404 into a NotFoundError and returns
// other errors as they are.
func notFoundOr(err error, kind, name string) error {
	if apierrors.IsNotFound(err) {
		return &NotFoundError{Kind: kind, Name: name}
	}
	return err
}
