package shard_test

import "testing"

// The random program of seed 56, optimized whole, read T1_pos2 past its
// end (an optimizer bug: a refused rewrite's leftover made a safe class
// unsafe, and the safety check then let an unguarded read in).
func TestRandomCase56Whole(t *testing.T) {
	c, _ := randomCase(56)
	want, _, err := c.oracle(t)
	if err != nil {
		t.Fatalf("oracle: %v", err)
	}
	if err := c.whole(t, want); err != nil {
		t.Fatalf("%v\n%s", err, c.program)
	}
}
