package config

import (
	"reflect"
	"strings"
	"testing"
)

// TestDefaultsTableKeys checks that every key of the defaults' tables names a
// setting of the schema: a misspelt key would never be recorded by the decoder,
// and its default would overwrite what the file says.
func TestDefaultsTableKeys(t *testing.T) {
	check := func(root reflect.Type, keys []string) {
		t.Helper()
		for _, key := range keys {
			typ := root
			for _, name := range strings.Split(key, ".") {
				for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice {
					typ = typ.Elem()
				}
				f, ok := yamlField(typ, name)
				if !ok {
					t.Errorf("%s: default for %s: %s has no key %s", root, key, typ, name)
					break
				}
				typ = f.Type
			}
		}
	}
	check(reflect.TypeFor[Config](), keysOf(configDefaults()))
	check(reflect.TypeFor[Controller](), keysOf(controllerDefaults()))
	check(reflect.TypeFor[SimPeer](), keysOf(peerDefaults(0)))
}

func keysOf[T any](table []setting[T]) []string {
	var keys []string
	for _, s := range table {
		keys = append(keys, s.key)
	}
	return keys
}

func yamlField(typ reflect.Type, name string) (reflect.StructField, bool) {
	if typ.Kind() != reflect.Struct {
		return reflect.StructField{}, false
	}
	for i := range typ.NumField() {
		if tag, _, _ := strings.Cut(typ.Field(i).Tag.Get("yaml"), ","); tag == name {
			return typ.Field(i), true
		}
	}
	return reflect.StructField{}, false
}
