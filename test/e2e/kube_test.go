package main

import (
	"errors"
	"fmt"
	"io"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestTransient: a read is tried again after a failure on the way (the
// HTTP/2 stream reset CI saw, a dropped connection, the server asking to
// come back), never after the API server's answer.
func TestTransient(t *testing.T) {
	vpc := schema.GroupResource{Group: "ec2.aws.m.upbound.io", Resource: "vpcs"}
	cases := map[string]struct {
		reason string
		err    error
		want   bool
	}{
		"StreamReset": {
			reason: "An HTTP/2 stream reset is transient.",
			err:    errors.New(`Get "https://127.0.0.1:6443/apis/ec2.aws.m.upbound.io/v1beta1/namespaces/release-b/vpcs/x?timeout=30s": stream error: stream ID 18581; PROTOCOL_ERROR; received from peer`),
			want:   true,
		},
		"EOF":         {reason: "A connection closed mid-answer is transient.", err: fmt.Errorf("get: %w", io.ErrUnexpectedEOF), want: true},
		"ServerBusy":  {reason: "429 is transient.", err: apierrors.NewTooManyRequests("busy", 1), want: true},
		"NotFound":    {reason: "NotFound is an answer.", err: apierrors.NewNotFound(vpc, "x")},
		"Forbidden":   {reason: "Forbidden is an answer.", err: apierrors.NewForbidden(vpc, "x", errors.New("no"))},
		"WrappedNoop": {reason: "A plain error is an answer.", err: errors.New("cannot decode")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := transient(tc.err); got != tc.want {
				t.Errorf("%s\ntransient(%v) = %t, want %t", tc.reason, tc.err, got, tc.want)
			}
		})
	}
}
