// Package datadriven owns the golden-file test driver used across storel.
//
// A test file is a sequence of cases separated by blank lines:
//
//	# comments start with #
//	command arg key=value key=(v1, v2)
//	input lines
//	----
//	expected output lines
//
// An expected output that contains blank lines is written between two
// double separators:
//
//	command
//	input
//	----
//	----
//	output with
//
//	a blank line
//	----
//	----
//
// RunTest runs a function on every case and compares its output with the
// expected one. Running the tests with -rewrite replaces the expected
// outputs with the actual ones, so that the diff can be reviewed.
package datadriven
