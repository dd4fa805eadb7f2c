// Package wire reads a RunFunctionRequest from its wire form for the
// server. It decodes what proto.Unmarshal decodes, with two differences
// that only the observed state sees, which is most of every converged
// request:
//
//   - The observed objects' Structs are built by a decoder of this
//     package that allocates their values, the oneof wrappers and the
//     nested Structs and lists in batches, instead of one by one through
//     protobuf's reflection: a converged request holds thousands of them.
//   - Each observed object's metadata.managedFields is left out. The API
//     server's field-ownership bookkeeping is a third of a realistic
//     request's bytes; nothing in the function reads it (the function
//     never composes, compares or copies an observed object's
//     managedFields), so it is never decoded.
//
// Every other field of the request (the desired state of earlier steps,
// the input, the context, the required resources, the credentials) is
// decoded by proto.Unmarshal itself. Anything the decoder does not expect
// in the observed state (an unknown field, a repeated oneof, invalid
// UTF-8) makes it decode the whole request with proto.Unmarshal instead,
// which then keeps managedFields and reports protobuf's own errors.
package wire

import (
	"errors"
	"math"
	"unicode/utf8"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/seed-6471616d/function-cluster-platform/internal/object"
)

// Field numbers of the messages this package decodes (function-sdk-go's
// run_function.proto and google/protobuf/struct.proto); TestFieldNumbers
// checks them against the descriptors.
const (
	requestObserved = 2

	stateComposite = 1
	stateResources = 2

	resourceResource          = 1
	resourceConnectionDetails = 2
	resourceReady             = 3

	mapKey   = 1
	mapValue = 2

	structFields = 1

	valueNull   = 1
	valueNumber = 2
	valueString = 3
	valueBool   = 4
	valueStruct = 5
	valueList   = 6

	listValues = 1
)

// errFallback makes Request decode the whole request with proto.Unmarshal.
var errFallback = errors.New("not decoded by package wire")

// Request decodes b into req, which must be empty: as proto.Unmarshal
// does, without the observed objects' metadata.managedFields.
func Request(b []byte, req *fnv1.RunFunctionRequest) error {
	if err := request(b, req); err != nil {
		proto.Reset(req)
		return proto.Unmarshal(b, req)
	}
	return nil
}

// request decodes the observed state itself and every other field with
// proto.Unmarshal, merging the spans around the observed state.
func request(b []byte, req *fnv1.RunFunctionRequest) error {
	start, end := -1, -1
	for i := 0; i < len(b); {
		num, typ, n := protowire.ConsumeTag(b[i:])
		if n < 0 {
			return errFallback
		}
		m := protowire.ConsumeFieldValue(num, typ, b[i+n:])
		if m < 0 {
			return errFallback
		}
		if num == requestObserved {
			if start >= 0 || typ != protowire.BytesType {
				// Twice: protobuf would merge them; leave that to it.
				return errFallback
			}
			start, end = i, i+n+m
		}
		i += n + m
	}
	if start < 0 {
		return proto.Unmarshal(b, req)
	}
	v, _ := protowire.ConsumeBytes(b[start+protowire.SizeTag(requestObserved) : end])
	d := &decoder{}
	st, err := d.state(v)
	if err != nil {
		return err
	}
	merge := proto.UnmarshalOptions{Merge: true}
	if err := merge.Unmarshal(b[:start], req); err != nil {
		return err
	}
	if err := merge.Unmarshal(b[end:], req); err != nil {
		return err
	}
	req.Observed = st
	return nil
}

// A decoder allocates the values of one request in batches.
type decoder struct {
	object.Batch
}

// field reads the first field of b: its number, its type, its value as
// encoded (tag left off) and what follows it. ok is false at the end of b;
// a malformed field is an error.
func field(b []byte) (num protowire.Number, typ protowire.Type, v, rest []byte, ok bool, err error) {
	if len(b) == 0 {
		return 0, 0, nil, nil, false, nil
	}
	num, typ, n := protowire.ConsumeTag(b)
	if n < 0 {
		return 0, 0, nil, nil, false, errFallback
	}
	b = b[n:]
	m := protowire.ConsumeFieldValue(num, typ, b)
	if m < 0 {
		return 0, 0, nil, nil, false, errFallback
	}
	return num, typ, b[:m], b[m:], true, nil
}

// count is how many fields b holds.
func count(b []byte) int {
	n := 0
	for {
		_, _, _, rest, ok, err := field(b)
		if !ok || err != nil {
			return n
		}
		n++
		b = rest
	}
}

// element reads the first element of b, a message whose only field is
// the repeated message (or map) field want, as a Struct's fields and a
// list's values are: the element's content and what follows it. ok is
// false at the end of b; another field is an error.
func element(b []byte, want protowire.Number) (c, rest []byte, ok bool, err error) {
	num, typ, v, rest, ok, err := field(b)
	if err != nil || !ok {
		return nil, nil, false, err
	}
	if num != want {
		return nil, nil, false, errFallback
	}
	if c, err = bytesOf(typ, v); err != nil {
		return nil, nil, false, err
	}
	return c, rest, true, nil
}

// entry reads a map entry: its key, and its value as encoded, nil when
// absent.
func entry(b []byte) (key string, val []byte, err error) {
	seen := false
	for {
		num, typ, v, rest, ok, err := field(b)
		if err != nil {
			return "", nil, err
		}
		if !ok {
			return key, val, nil
		}
		b = rest
		switch num {
		case mapKey:
			if key, err = stringOf(typ, v); err != nil {
				return "", nil, err
			}
		case mapValue:
			if seen {
				// Protobuf would merge the two.
				return "", nil, errFallback
			}
			seen = true
			if val, err = bytesOf(typ, v); err != nil {
				return "", nil, err
			}
		default:
			return "", nil, errFallback
		}
	}
}

// bytesOf is the content of a length-delimited field.
func bytesOf(typ protowire.Type, v []byte) ([]byte, error) {
	if typ != protowire.BytesType {
		return nil, errFallback
	}
	c, n := protowire.ConsumeBytes(v)
	if n < 0 {
		return nil, errFallback
	}
	return c, nil
}

// stringOf is the content of a string field, which proto3 requires to be
// valid UTF-8.
func stringOf(typ protowire.Type, v []byte) (string, error) {
	c, err := bytesOf(typ, v)
	if err != nil {
		return "", err
	}
	if !utf8.Valid(c) {
		return "", errFallback
	}
	return string(c), nil
}

func (d *decoder) state(b []byte) (*fnv1.State, error) {
	st := &fnv1.State{}
	for {
		num, typ, v, rest, ok, err := field(b)
		if err != nil || !ok {
			return st, err
		}
		b = rest
		c, err := bytesOf(typ, v)
		if err != nil {
			return nil, err
		}
		switch num {
		case stateComposite:
			if st.Composite != nil {
				return nil, errFallback
			}
			if st.Composite, err = d.resource(c); err != nil {
				return nil, err
			}
		case stateResources:
			key, val, err := entry(c)
			if err != nil {
				return nil, err
			}
			res, err := d.resource(val)
			if err != nil {
				return nil, err
			}
			if st.Resources == nil {
				st.Resources = map[string]*fnv1.Resource{}
			}
			st.Resources[key] = res
		default:
			return nil, errFallback
		}
	}
}

func (d *decoder) resource(b []byte) (*fnv1.Resource, error) {
	r := &fnv1.Resource{}
	for {
		num, typ, v, rest, ok, err := field(b)
		if err != nil || !ok {
			return r, err
		}
		b = rest
		switch num {
		case resourceResource:
			c, err := bytesOf(typ, v)
			if err != nil || r.Resource != nil {
				return nil, errFallback
			}
			if r.Resource, err = d.structOf(c, skipInMetadata); err != nil {
				return nil, err
			}
		case resourceConnectionDetails:
			c, err := bytesOf(typ, v)
			if err != nil {
				return nil, err
			}
			key, val, err := entry(c)
			if err != nil {
				return nil, err
			}
			if r.ConnectionDetails == nil {
				r.ConnectionDetails = map[string][]byte{}
			}
			r.ConnectionDetails[key] = append([]byte{}, val...)
		case resourceReady:
			if typ != protowire.VarintType {
				return nil, errFallback
			}
			x, _ := protowire.ConsumeVarint(v)
			r.Ready = fnv1.Ready(int32(x)) //nolint:gosec // protobuf truncates enums to 32 bits too
		default:
			return nil, errFallback
		}
	}
}

// What a Struct leaves out: nothing; or, in an observed object, its
// metadata's managedFields.
type skip int

const (
	skipNothing skip = iota
	skipInMetadata
	skipManagedFields
)

func (d *decoder) structOf(b []byte, sk skip) (*structpb.Struct, error) {
	s := d.Struct(count(b))
	for {
		c, rest, ok, err := element(b, structFields)
		if err != nil || !ok {
			return s, err
		}
		b = rest
		key, val, err := entry(c)
		if err != nil {
			return nil, err
		}
		if sk == skipManagedFields && key == "managedFields" {
			delete(s.Fields, key)
			continue
		}
		inner := skipNothing
		if sk == skipInMetadata && key == "metadata" {
			inner = skipManagedFields
		}
		if s.Fields[key], err = d.value(val, inner); err != nil {
			return nil, err
		}
	}
}

func (d *decoder) value(b []byte, sk skip) (*structpb.Value, error) {
	var val *structpb.Value
	for {
		num, typ, v, rest, ok, err := field(b)
		if err != nil {
			return nil, err
		}
		if !ok {
			if val == nil {
				val = d.Empty()
			}
			return val, nil
		}
		b = rest
		if val != nil {
			// Protobuf takes the last of a oneof, and merges messages.
			return nil, errFallback
		}
		switch num {
		case valueNull:
			if typ != protowire.VarintType {
				return nil, errFallback
			}
			x, _ := protowire.ConsumeVarint(v)
			val = d.Null(structpb.NullValue(int32(x))) //nolint:gosec // protobuf truncates enums to 32 bits too
		case valueNumber:
			if typ != protowire.Fixed64Type {
				return nil, errFallback
			}
			x, _ := protowire.ConsumeFixed64(v)
			val = d.Number(math.Float64frombits(x))
		case valueString:
			str, err := stringOf(typ, v)
			if err != nil {
				return nil, err
			}
			val = d.String(str)
		case valueBool:
			if typ != protowire.VarintType {
				return nil, errFallback
			}
			x, _ := protowire.ConsumeVarint(v)
			val = d.Bool(x != 0)
		case valueStruct:
			c, err := bytesOf(typ, v)
			if err != nil {
				return nil, err
			}
			s, err := d.structOf(c, sk)
			if err != nil {
				return nil, err
			}
			val = d.StructValue(s)
		case valueList:
			c, err := bytesOf(typ, v)
			if err != nil {
				return nil, err
			}
			l, err := d.list(c)
			if err != nil {
				return nil, err
			}
			val = d.ListValue(l)
		default:
			return nil, errFallback
		}
	}
}

func (d *decoder) list(b []byte) (*structpb.ListValue, error) {
	l := d.List(count(b))
	for {
		c, rest, ok, err := element(b, listValues)
		if err != nil || !ok {
			return l, err
		}
		b = rest
		e, err := d.value(c, skipNothing)
		if err != nil {
			return nil, err
		}
		l.Values = append(l.Values, e)
	}
}
