package store

import (
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// reaches reports whether t, or any type its fields, elements or func
// signatures name, is target: what the linker follows from a type
// converted to an interface.
func reaches(t, target reflect.Type, seen map[reflect.Type]bool) bool {
	if t == target {
		return true
	}
	if seen[t] {
		return false
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Chan:
		return reaches(t.Elem(), target, seen)
	case reflect.Map:
		return reaches(t.Key(), target, seen) || reaches(t.Elem(), target, seen)
	case reflect.Struct:
		for i := range t.NumField() {
			if reaches(t.Field(i).Type, target, seen) {
				return true
			}
		}
	case reflect.Func:
		for i := range t.NumIn() {
			if reaches(t.In(i), target, seen) {
				return true
			}
		}
		for i := range t.NumOut() {
			if reaches(t.Out(i), target, seen) {
				return true
			}
		}
	}
	return false
}

// A Store's type must not name the client: web and oauth execute templates,
// and a client reachable from a type held in an interface links every
// DynamoDB operation into them (docs/architecture.md, "Binary size").
func TestStoreTypeDoesNotReachTheClient(t *testing.T) {
	client := reflect.TypeFor[*dynamodb.Client]()
	tests := []struct {
		name string
		typ  reflect.Type
		want bool
	}{
		{"Store", reflect.TypeFor[*Store](), false},
		{"operations", reflect.TypeFor[operations](), false},
		{"a struct holding the client (the check can fail)", reflect.TypeFor[struct{ db *dynamodb.Client }](), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := reaches(tt.typ, client, map[reflect.Type]bool{}); got != tt.want {
				t.Fatalf("reaches *dynamodb.Client = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestOperationsCallTheClient(t *testing.T) {
	ops := operationsOf(dynamodb.New(dynamodb.Options{Region: "us-east-1"}))
	v := reflect.ValueOf(ops)
	for i := range v.NumField() {
		if v.Field(i).IsNil() {
			t.Errorf("operation %s is not set", v.Type().Field(i).Name)
		}
	}
}
