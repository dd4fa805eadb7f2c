package envcfg

import (
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Decode decodes the environment's data at path into v, a pointer to a
// struct whose fields carry json tags, once per call. A value of the wrong
// type is recorded (see Errors) with its environment path and the type
// wanted, and leaves the field at its zero value; keys the struct does not
// have are ignored, since one environment serves every module and cloud.
//
// As the accessors do, it reads YAML's loose scalars the way a platform
// engineer means them: a number or boolean where a string is wanted
// (version: 1.33), and a numeric or boolean string where a number or a
// boolean is wanted.
func (e *Env) Decode(v any, path ...string) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		panic(fmt.Sprintf("envcfg: Decode needs a non-nil pointer, not %T", v))
	}
	src, ok := e.lookup(path...)
	if !ok {
		return
	}
	e.decode(src, rv.Elem(), envPath(path...))
}

// Errors returns every wrongly typed value the accessors and Decode found,
// sorted by path. A wrongly typed value is never silently read as its
// default.
func (e *Env) Errors() field.ErrorList {
	out := make(field.ErrorList, 0, len(e.invalid))
	for _, k := range slices.Sorted(maps.Keys(e.invalid)) {
		out = append(out, e.invalid[k])
	}
	return out
}

func (e *Env) wrongType(p *field.Path, v any, want string) {
	if e.invalid == nil {
		e.invalid = map[string]*field.Error{}
	}
	e.invalid[p.String()] = field.Invalid(p, brief(v), "must be "+want)
}

func envPath(keys ...string) *field.Path {
	p := field.NewPath("environment")
	for _, k := range keys {
		p = p.Child(k)
	}
	return p
}

// decode sets dst from src, recording type errors under p.
func (e *Env) decode(src any, dst reflect.Value, p *field.Path) {
	if src == nil {
		return
	}
	switch dst.Kind() {
	case reflect.Pointer:
		v := reflect.New(dst.Type().Elem())
		before := len(e.invalid)
		e.decode(src, v.Elem(), p)
		if len(e.invalid) == before {
			dst.Set(v)
		}
	case reflect.Struct:
		m, ok := src.(map[string]any)
		if !ok {
			e.wrongType(p, src, "an object")
			return
		}
		t := dst.Type()
		for i := range t.NumField() {
			name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
			if name == "" && t.Field(i).Anonymous {
				// An embedded struct's keys are the outer object's.
				e.decode(src, dst.Field(i), p)
				continue
			}
			if name == "" || name == "-" {
				continue
			}
			if v, ok := m[name]; ok {
				e.decode(v, dst.Field(i), p.Child(name))
			}
		}
	case reflect.Map:
		m, ok := src.(map[string]any)
		if !ok {
			e.wrongType(p, src, "an object")
			return
		}
		if dst.Type().Elem().Kind() == reflect.Interface {
			dst.Set(reflect.ValueOf(m))
			return
		}
		out := reflect.MakeMapWithSize(dst.Type(), len(m))
		for k, v := range m {
			ev := reflect.New(dst.Type().Elem()).Elem()
			e.decode(v, ev, p.Key(k))
			out.SetMapIndex(reflect.ValueOf(k), ev)
		}
		dst.Set(out)
	case reflect.Slice:
		l, ok := src.([]any)
		if !ok {
			e.wrongType(p, src, "a list")
			return
		}
		out := reflect.MakeSlice(dst.Type(), len(l), len(l))
		for i, v := range l {
			e.decode(v, out.Index(i), p.Index(i))
		}
		dst.Set(out)
	case reflect.String:
		s, ok := scalarString(src)
		if !ok {
			e.wrongType(p, src, "a string")
			return
		}
		dst.SetString(s)
	case reflect.Bool:
		b, ok := scalarBool(src)
		if !ok {
			e.wrongType(p, src, "a boolean")
			return
		}
		dst.SetBool(b)
	case reflect.Int, reflect.Int64, reflect.Int32:
		i, ok := scalarInt(src)
		if !ok {
			e.wrongType(p, src, "an integer")
			return
		}
		dst.SetInt(i)
	case reflect.Float64:
		f, ok := scalarFloat(src)
		if !ok {
			e.wrongType(p, src, "a number")
			return
		}
		dst.SetFloat(f)
	case reflect.Interface:
		dst.Set(reflect.ValueOf(src))
	default:
		panic(fmt.Sprintf("envcfg: cannot decode into a %s", dst.Type()))
	}
}

func scalarString(v any) (string, bool) {
	switch t := v.(type) {
	case string:
		return t, true
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64), true
	case bool:
		return strconv.FormatBool(t), true
	}
	return "", false
}

func scalarBool(v any) (bool, bool) {
	switch t := v.(type) {
	case bool:
		return t, true
	case string:
		b, err := strconv.ParseBool(t)
		return b, err == nil
	}
	return false, false
}

func scalarInt(v any) (int64, bool) {
	switch t := v.(type) {
	case float64:
		if t != math.Trunc(t) || math.Abs(t) > 1<<53 {
			return 0, false
		}
		return int64(t), true
	case string:
		i, err := strconv.ParseInt(t, 10, 64)
		return i, err == nil
	}
	return 0, false
}

func scalarFloat(v any) (float64, bool) {
	switch t := v.(type) {
	case float64:
		return t, !math.IsNaN(t) && !math.IsInf(t, 0)
	case string:
		f, err := strconv.ParseFloat(t, 64)
		return f, err == nil && !math.IsNaN(f) && !math.IsInf(f, 0)
	}
	return 0, false
}

// brief is a value for a message: scalars as they are, objects and lists by
// their kind.
func brief(v any) any {
	switch t := v.(type) {
	case map[string]any:
		return "(an object)"
	case []any:
		return "(a list)"
	case string:
		if len(t) > 64 {
			return t[:64] + "..."
		}
	}
	return v
}
