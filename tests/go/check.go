package main

import (
	"fmt"
	"reflect"
)

// checks counts the checks a run made (printed at the end: a run that checks nothing fails).
var checks int

func checkEq(what string, expected, actual interface{}) error {
	checks++
	if !reflect.DeepEqual(expected, actual) {
		return fmt.Errorf("%s: expected <%v> (%T) but was <%v> (%T)", what, expected, expected, actual, actual)
	}
	return nil
}

// all runs steps in order and stops at the first error, naming the step.
func all(steps ...step) error {
	for _, s := range steps {
		if err := s.run(); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
	}
	return nil
}

type step struct {
	name string
	run  func() error
}
