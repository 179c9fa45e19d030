// Package deps pins the product card's dependencies in go.mod while the packages
// that use them are being written. Remove it once each is imported for real.
package deps

import (
	_ "github.com/prometheus/client_golang/prometheus"
	_ "go.einride.tech/can"
	_ "gopkg.in/yaml.v3"
)
