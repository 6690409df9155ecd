package customresources

import (
	"context"
	"errors"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"
	"k8s.io/client-go/tools/cache"
)

// etcdTooLarge is etcd's refusal of a request larger than its
// --max-request-bytes.
const etcdTooLarge = "etcdserver: request is too large"

// withTooLarge wraps the stores a decorator builds so that writes too large
// for etcd fail with 413 RequestEntityTooLarge instead of 500.
func withTooLarge(decorator generic.StorageDecorator) generic.StorageDecorator {
	return func(config *storagebackend.ConfigForResource, resourcePrefix string, keyFunc func(obj runtime.Object) (string, error),
		newFunc func() runtime.Object, newListFunc func() runtime.Object, getAttrsFunc storage.AttrFunc,
		trigger storage.IndexerFuncs, indexers *cache.Indexers) (storage.Interface, factory.DestroyFunc, error) {
		s, destroy, err := decorator(config, resourcePrefix, keyFunc, newFunc, newListFunc, getAttrsFunc, trigger, indexers)
		if err != nil {
			return nil, nil, err
		}
		return tooLargeStore{Interface: s}, destroy, nil
	}
}

// tooLargeStore turns etcd's "request is too large" on Create and
// GuaranteedUpdate into a tooLargeError.
type tooLargeStore struct {
	storage.Interface
}

func (s tooLargeStore) Create(ctx context.Context, key string, obj, out runtime.Object, ttl uint64) error {
	return asTooLarge(s.Interface.Create(ctx, key, obj, out, ttl))
}

func (s tooLargeStore) GuaranteedUpdate(ctx context.Context, key string, destination runtime.Object, ignoreNotFound bool,
	preconditions *storage.Preconditions, tryUpdate storage.UpdateFunc, cachedExistingObject runtime.Object) error {
	return asTooLarge(s.Interface.GuaranteedUpdate(ctx, key, destination, ignoreNotFound, preconditions, tryUpdate, cachedExistingObject))
}

// asTooLarge returns a tooLargeError for the errors with which etcd, or the
// gRPC client before it, refuses a request too large to send or store, and
// err otherwise.
func asTooLarge(err error) error {
	if err == nil {
		return nil
	}
	var coded interface {
		error
		Code() codes.Code
	}
	if errors.As(err, &coded) && coded.Code() == codes.InvalidArgument && coded.Error() == etcdTooLarge {
		return &tooLargeError{cause: coded, grpc: status.New(codes.InvalidArgument, etcdTooLarge)}
	}
	if s, ok := status.FromError(err); ok && s.Code() == codes.ResourceExhausted && strings.Contains(s.Message(), "trying to send message larger than max") {
		return &tooLargeError{cause: err, grpc: s}
	}
	return err
}

// tooLargeError is a write refused as too large. A client gets it as a 413
// RequestEntityTooLarge Status. To the endpoint handlers it still looks
// like etcd's error (same message, gRPC code and status), so they retry a
// create or update once without managedFields, as upstream does, before
// they give up.
type tooLargeError struct {
	cause error
	grpc  *status.Status
}

var _ apierrors.APIStatus = &tooLargeError{}

func (e *tooLargeError) Error() string              { return e.grpc.Message() }
func (e *tooLargeError) Unwrap() error              { return e.cause }
func (e *tooLargeError) Code() codes.Code           { return e.grpc.Code() }
func (e *tooLargeError) GRPCStatus() *status.Status { return e.grpc }
func (e *tooLargeError) Status() metav1.Status {
	return apierrors.NewRequestEntityTooLargeError("the object is too large to be stored: " + e.grpc.Message()).Status()
}
